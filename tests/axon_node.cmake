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

# Epistula v2 against bt-axon's POST /echo (PROTOCOL 12): tests/node/epistula_signer_peer.mjs signs
# requests from the convention's definition with @polkadot/util-crypto and checks what is
# accepted and what is refused with which reason. The fleet case runs two bt-axon processes
# sharing a redis-server (started by the peer) as their replay store. Never skipped: without
# node or redis-server the tests fail.
if(TARGET bt-axon)
  find_program(BT_NODE_EXE node)
  find_program(BT_REDIS_SERVER_EXE redis-server)
  if(BT_NODE_EXE)
    add_test(NAME "node: epistula signer vs bt-axon /echo"
             COMMAND ${BT_NODE_EXE} epistula_signer_peer.mjs $<TARGET_FILE:bt-axon>
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/node)
  else()
    add_test(NAME "node: epistula signer vs bt-axon /echo" COMMAND ${CMAKE_COMMAND} -E false)
  endif()
  if(BT_NODE_EXE AND BT_REDIS_SERVER_EXE)
    add_test(NAME "node: epistula replay refused across two axons sharing redis"
             COMMAND ${BT_NODE_EXE} epistula_signer_peer.mjs $<TARGET_FILE:bt-axon>
                     ${BT_REDIS_SERVER_EXE}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/node)
  else()
    add_test(NAME "node: epistula replay refused across two axons sharing redis"
             COMMAND ${CMAKE_COMMAND} -E false)
  endif()
  set_tests_properties("node: epistula signer vs bt-axon /echo"
                       "node: epistula replay refused across two axons sharing redis"
                       PROPERTIES TIMEOUT 120)
endif()

# btauth/1 against bt-axon's POST /echo (PROTOCOL 14): tests/node/btauth_signer_peer.mjs signs
# requests with tests/node/btauth.mjs, an independent btauth/1 (node's SHA-256 and
# @polkadot/util-crypto's sr25519 and ed25519), and checks what is accepted and what is refused
# with which status and failure class. The fleet case runs two bt-axon processes sharing a
# redis-server (started by the peer) as their replay store. Never skipped: without node or
# redis-server the tests fail.
if(TARGET bt-axon)
  find_program(BT_NODE_EXE node)
  find_program(BT_REDIS_SERVER_EXE redis-server)
  if(BT_NODE_EXE)
    add_test(NAME "node: btauth signer vs bt-axon /echo"
             COMMAND ${BT_NODE_EXE} btauth_signer_peer.mjs $<TARGET_FILE:bt-axon>
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/node)
  else()
    add_test(NAME "node: btauth signer vs bt-axon /echo" COMMAND ${CMAKE_COMMAND} -E false)
  endif()
  if(BT_NODE_EXE AND BT_REDIS_SERVER_EXE)
    add_test(NAME "node: btauth replay refused across two axons sharing redis"
             COMMAND ${BT_NODE_EXE} btauth_signer_peer.mjs $<TARGET_FILE:bt-axon>
                     ${BT_REDIS_SERVER_EXE}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/node)
  else()
    add_test(NAME "node: btauth replay refused across two axons sharing redis"
             COMMAND ${CMAKE_COMMAND} -E false)
  endif()
  set_tests_properties("node: btauth signer vs bt-axon /echo"
                       "node: btauth replay refused across two axons sharing redis"
                       PROPERTIES TIMEOUT 120)
endif()
