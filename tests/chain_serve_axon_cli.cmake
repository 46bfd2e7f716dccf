# `bt-chain serve-axon` end to end against the fake-subtensor program, with @polkadot/types
# checking the printed extrinsic, and a submission confirmed (or not) from storage
# (tests/chain/serve_axon_cli_test.cpp).
if(TARGET bt-chain AND TARGET fake-subtensor)
  add_executable(chain_serve_axon_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/chain/serve_axon_cli_test.cpp)
  # bt::chain: the Axons storage key the submission test serves.
  target_link_libraries(chain_serve_axon_cli_test PRIVATE bt_test_main bt_proc bt::keys bt::chain)
  target_compile_definitions(chain_serve_axon_cli_test PRIVATE
    BT_CHAIN_EXE="$<TARGET_FILE:bt-chain>" BT_FAKE_SUBTENSOR_EXE="$<TARGET_FILE:fake-subtensor>")
  add_dependencies(chain_serve_axon_cli_test bt-chain fake-subtensor)
  bt_target_defaults(chain_serve_axon_cli_test)
  catch_discover_tests(chain_serve_axon_cli_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
