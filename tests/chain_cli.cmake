# `bt-chain metagraph` end to end against the fake-subtensor program replaying the recorded
# mainnet session (tests/chain/chain_cli_test.cpp).
if(TARGET bt-chain AND TARGET fake-subtensor)
  add_executable(chain_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/chain/chain_cli_test.cpp)
  target_link_libraries(chain_cli_test PRIVATE bt_test_main bt_proc bt::keys)
  target_compile_definitions(chain_cli_test PRIVATE BT_CHAIN_EXE="$<TARGET_FILE:bt-chain>"
                                                    BT_FAKE_SUBTENSOR_EXE="$<TARGET_FILE:fake-subtensor>")
  add_dependencies(chain_cli_test bt-chain fake-subtensor)
  bt_target_defaults(chain_cli_test)
  catch_discover_tests(chain_cli_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
