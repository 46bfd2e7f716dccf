# Our Epistula signer (bt::dendrite::epistula_call and bt-dendrite epistula) against an
# independent receiver in Node.js shaped like the subnets' reference verifiers
# (tests/node/epistula_verifier_peer.mjs: node's SHA-256 and @polkadot/util-crypto's
# signatureVerify). Needs node and tests/node/node_modules (scripts/setup runs npm ci); when
# either is missing the test fails, it is never skipped.
if(TARGET bt::dendrite AND TARGET bt-dendrite)
  find_program(BT_NODE_EXE node)
  add_executable(epistula_node_test ${CMAKE_CURRENT_SOURCE_DIR}/node/epistula_node_test.cpp)
  target_link_libraries(epistula_node_test PRIVATE bt_test_main bt_proc bt::dendrite bt_dendrite_internal)
  target_compile_definitions(epistula_node_test PRIVATE
    BT_NODE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/node" BT_NODE_EXE="${BT_NODE_EXE}"
    BT_DENDRITE_EXE="$<TARGET_FILE:bt-dendrite>")
  add_dependencies(epistula_node_test bt-dendrite)
  bt_target_defaults(epistula_node_test)
  catch_discover_tests(epistula_node_test TEST_PREFIX "node: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
