# `bt-dendrite query --stream` end to end against a real bt-axon process and its WordStream route:
# typed and dynamic synapses, a stream cut at the deadline.
if(TARGET bt-dendrite AND TARGET bt-axon)
  add_executable(dendrite_query_stream_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/query_stream_cli_test.cpp)
  target_link_libraries(dendrite_query_stream_cli_test PRIVATE bt_test_main bt_proc bt::synapse)
  target_compile_definitions(dendrite_query_stream_cli_test PRIVATE
    BT_DENDRITE_EXE="$<TARGET_FILE:bt-dendrite>" BT_AXON_EXE="$<TARGET_FILE:bt-axon>")
  add_dependencies(dendrite_query_stream_cli_test bt-dendrite bt-axon)
  bt_target_defaults(dendrite_query_stream_cli_test)
  catch_discover_tests(dendrite_query_stream_cli_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 60)
endif()
