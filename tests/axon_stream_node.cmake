# The axon's streaming test against an independent client:
# tests/node/stream_client_peer.mjs starts bt-axon with --stream.delay_ms, reads WordStream
# answers the way a Python dendrite's call_stream does with aiohttp (bt headers from the head,
# the body as it arrives), and checks concurrency, the deadline cut, errors before streaming and
# a clean SIGTERM exit. Needs node and tests/node/node_modules (scripts/setup); when node is
# missing the test fails, it is never skipped.
if(TARGET bt-axon)
  find_program(BT_NODE_EXE node)
  if(BT_NODE_EXE)
    add_test(NAME "node: streaming client vs bt-axon"
             COMMAND ${BT_NODE_EXE} stream_client_peer.mjs $<TARGET_FILE:bt-axon>
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/node)
  else()
    add_test(NAME "node: streaming client vs bt-axon" COMMAND ${CMAKE_COMMAND} -E false)
  endif()
  set_tests_properties("node: streaming client vs bt-axon" PROPERTIES TIMEOUT 90)
endif()
