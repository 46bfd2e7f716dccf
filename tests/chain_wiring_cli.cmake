# The chain wired into bt-axon (--netuid: the policy metagraph and its refresh) and bt-dendrite
# (query --netuid/--uids) end to end against the fake-subtensor program
# (tests/chain/chain_wiring_cli_test.cpp).
if(TARGET bt-axon AND TARGET bt-dendrite AND TARGET bt-chain AND TARGET fake-subtensor)
  add_executable(chain_wiring_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/chain/chain_wiring_cli_test.cpp)
  target_link_libraries(chain_wiring_cli_test PRIVATE bt_test_main bt_proc bt::keys)
  target_compile_definitions(chain_wiring_cli_test PRIVATE
    BT_AXON_EXE="$<TARGET_FILE:bt-axon>" BT_DENDRITE_EXE="$<TARGET_FILE:bt-dendrite>"
    BT_CHAIN_EXE="$<TARGET_FILE:bt-chain>" BT_FAKE_SUBTENSOR_EXE="$<TARGET_FILE:fake-subtensor>")
  add_dependencies(chain_wiring_cli_test bt-axon bt-dendrite bt-chain fake-subtensor)
  bt_target_defaults(chain_wiring_cli_test)
  catch_discover_tests(chain_wiring_cli_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 180)
endif()
