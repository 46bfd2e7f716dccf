# `bt-dendrite query` end to end against an in-process axon.
if(TARGET bt-dendrite AND TARGET bt::axon AND TARGET bt::dendrite)
  add_executable(dendrite_query_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/query_cli_test.cpp)
  target_link_libraries(dendrite_query_cli_test PRIVATE bt_test_main bt::axon bt::dendrite)
  target_compile_definitions(dendrite_query_cli_test PRIVATE BT_DENDRITE_EXE="$<TARGET_FILE:bt-dendrite>")
  add_dependencies(dendrite_query_cli_test bt-dendrite)
  bt_target_defaults(dendrite_query_cli_test)
  catch_discover_tests(dendrite_query_cli_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
