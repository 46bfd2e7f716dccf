# scripts/fleet end to end (tests/fleet/fleet_test.sh): three bt-axon processes behind HAProxy
# (PROXY protocol v2) sharing Redis; honest bt-dendrite calls, the caller's real address at the
# axon, and a replay through HAProxy refused by the other axons. Needs redis-server, haproxy and
# python3 (scripts/setup); fails, never skips, without them. Every fleet test starts and stops
# its fleet through tests/fleet/fleet_lib.sh.
if(BT_BUILD_TOOLS AND TARGET bt-axon AND TARGET bt-dendrite)
  find_program(BT_BASH bash REQUIRED)
  add_test(NAME "fleet: three axons behind HAProxy"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/fleet/fleet_test.sh
                   $<TARGET_FILE:bt-axon> $<TARGET_FILE:bt-dendrite>)
  set_tests_properties("fleet: three axons behind HAProxy" PROPERTIES TIMEOUT 180 LABELS fleet)
  # Failures under load (tests/fleet/fleet_lib.sh drives them): an axon SIGKILLed, taken out by
  # HAProxy's health checks, no request answered twice; Redis SIGKILLed, every axon answering 503
  # and not ready within 1 s, nothing accepted unrecorded, service back once Redis is.
  add_test(NAME "fleet: an axon killed during load"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/fleet/fleet_kill_test.sh
                   $<TARGET_FILE:bt-axon> $<TARGET_FILE:bt-dendrite>)
  add_test(NAME "fleet: Redis stopped during load"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/fleet/fleet_redis_test.sh
                   $<TARGET_FILE:bt-axon> $<TARGET_FILE:bt-dendrite>)
  set_tests_properties("fleet: an axon killed during load" "fleet: Redis stopped during load"
                       PROPERTIES TIMEOUT 180 LABELS fleet RUN_SERIAL ON)
  # --wallet.*: the axons serve a wallet's hotkey; scripts/fleet's usage errors.
  if(TARGET bt-wallet)
    add_test(NAME "fleet: a wallet's hotkey"
             COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/fleet/fleet_wallet_test.sh
                     $<TARGET_FILE:bt-axon> $<TARGET_FILE:bt-dendrite> $<TARGET_FILE:bt-wallet>)
    set_tests_properties("fleet: a wallet's hotkey" PROPERTIES TIMEOUT 180 LABELS fleet)
  endif()
endif()
