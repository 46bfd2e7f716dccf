# The axon's cross-implementation test: tests/node/python_dendrite_peer.mjs
# starts bt-axon, sends requests built exactly as a Python dendrite builds them (PROTOCOL 4,
# sr25519 by @polkadot/util-crypto) and judges the answers as a Python dendrite would (6.2-6.7),
# then stops it with SIGTERM and requires exit status 0. Needs node and tests/node/node_modules
# (scripts/setup runs npm ci); when either is missing the test fails, it is never skipped.
if(TARGET bt-axon)
  find_program(BT_NODE_EXE node)
  if(BT_NODE_EXE)
    add_test(NAME "node: python dendrite vs bt-axon"
             COMMAND ${BT_NODE_EXE} python_dendrite_peer.mjs $<TARGET_FILE:bt-axon>
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/node)
  else()
    # No node: register a test that fails (run scripts/setup), rather than skipping silently.
    add_test(NAME "node: python dendrite vs bt-axon" COMMAND ${CMAKE_COMMAND} -E false)
  endif()
  set_tests_properties("node: python dendrite vs bt-axon" PROPERTIES TIMEOUT 120)
endif()
