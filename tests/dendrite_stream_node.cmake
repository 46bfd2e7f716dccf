# dendrite::call_stream against an independent Python-shaped streaming axon in Node.js:
# tests/node/python_stream_axon_peer.mjs streams chunked text/event-stream answers with
# the bt headers in the head, as BTStreamingResponse does. Needs node and tests/node/node_modules
# (scripts/setup); when either is missing the test fails, it is never skipped.
if(TARGET bt::dendrite)
  find_program(BT_NODE_EXE node)
  add_executable(dendrite_stream_node_test ${CMAKE_CURRENT_SOURCE_DIR}/node/dendrite_stream_node_test.cpp)
  target_link_libraries(dendrite_stream_node_test PRIVATE bt_test_main bt_proc bt::dendrite)
  target_compile_definitions(dendrite_stream_node_test PRIVATE
    BT_NODE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/node" BT_NODE_EXE="${BT_NODE_EXE}")
  bt_target_defaults(dendrite_stream_node_test)
  catch_discover_tests(dendrite_stream_node_test TEST_PREFIX "node: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
