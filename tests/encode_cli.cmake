# `bt-dendrite encode` against every case of tests/vectors/headers.json: a
# Catch2 program that runs the built tool on each case and compares its output.
if(TARGET bt-dendrite)
  add_executable(encode_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/encode_cli_test.cpp)
  target_link_libraries(encode_cli_test PRIVATE bt_test_main bt::synapse)
  target_compile_definitions(encode_cli_test PRIVATE BT_DENDRITE_EXE="$<TARGET_FILE:bt-dendrite>")
  add_dependencies(encode_cli_test bt-dendrite)
  bt_target_defaults(encode_cli_test)
  catch_discover_tests(encode_cli_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
