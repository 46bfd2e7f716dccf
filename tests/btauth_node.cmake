# Our btauth/1 signer (bt::dendrite::btauth_call and bt-dendrite btauth) against an independent
# receiver in Node.js (tests/node/btauth_verifier_peer.mjs on tests/node/btauth.mjs: node's
# SHA-256 and @polkadot/util-crypto's sr25519 and ed25519). Needs node and tests/node/node_modules
# (scripts/setup runs npm ci); when either is missing the test fails, it is never skipped.
if(TARGET bt::dendrite AND TARGET bt-dendrite)
  find_program(BT_NODE_EXE node)
  add_executable(btauth_node_test ${CMAKE_CURRENT_SOURCE_DIR}/node/btauth_node_test.cpp)
  target_link_libraries(btauth_node_test PRIVATE bt_test_main bt_proc bt::dendrite)
  target_compile_definitions(btauth_node_test PRIVATE
    BT_NODE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/node" BT_NODE_EXE="${BT_NODE_EXE}"
    BT_DENDRITE_EXE="$<TARGET_FILE:bt-dendrite>")
  add_dependencies(btauth_node_test bt-dendrite)
  bt_target_defaults(btauth_node_test)
  catch_discover_tests(btauth_node_test TEST_PREFIX "node: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
