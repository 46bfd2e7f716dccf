# bt-ping smoke tests: the in-process ping and the cross-process ping against a spawned
# bt-axon both run and print the seed-format summary. Exit status and output lines only; no
# timings are asserted. (tests/ is configured before perf/, so test the conditions bt-ping is
# built under rather than the target itself.)
if(BT_BUILD_PERF AND TARGET bt::axon AND TARGET bt::dendrite)
  add_test(NAME "perf: bt-ping in-process"
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:bt-ping>|--count|200" -DEXPECT_COUNT=200
                   -P ${PROJECT_SOURCE_DIR}/perf/smoke_check.cmake)
  set_tests_properties("perf: bt-ping in-process" PROPERTIES TIMEOUT 240)
  # --epistula: Epistula-signed POST /echo against the in-process axon serving bt-axon's handler.
  add_test(NAME "perf: bt-ping epistula in-process"
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:bt-ping>|--epistula|--count|200"
                   -DEXPECT_COUNT=200 -P ${PROJECT_SOURCE_DIR}/perf/smoke_check.cmake)
  set_tests_properties("perf: bt-ping epistula in-process" PROPERTIES TIMEOUT 240)
  # --btauth: btauth/1-signed POST /echo against the same in-process route.
  add_test(NAME "perf: bt-ping btauth in-process"
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:bt-ping>|--btauth|--count|200"
                   -DEXPECT_COUNT=200 -P ${PROJECT_SOURCE_DIR}/perf/smoke_check.cmake)
  set_tests_properties("perf: bt-ping btauth in-process" PROPERTIES TIMEOUT 240)
  # --no-crypto: unsigned requests, an axon that verifies nothing and signs no answer.
  add_test(NAME "perf: bt-ping no-crypto in-process"
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:bt-ping>|--no-crypto|--count|200"
                   -DEXPECT_COUNT=200 -P ${PROJECT_SOURCE_DIR}/perf/smoke_check.cmake)
  set_tests_properties("perf: bt-ping no-crypto in-process" PROPERTIES TIMEOUT 240)
  if(BT_BUILD_TOOLS)
    add_test(NAME "perf: bt-ping cross-process"
             COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:bt-ping>|--cross-process|--count|100"
                     -DEXPECT_COUNT=100 -P ${PROJECT_SOURCE_DIR}/perf/smoke_check.cmake)
    set_tests_properties("perf: bt-ping cross-process" PROPERTIES TIMEOUT 240)
    # The spawned bt-axon gets --insecure-skip-verification and --axon.sign_responses off.
    add_test(NAME "perf: bt-ping no-crypto cross-process"
             COMMAND ${CMAKE_COMMAND}
                     "-DCMD=$<TARGET_FILE:bt-ping>|--cross-process|--no-crypto|--count|100"
                     -DEXPECT_COUNT=100 -P ${PROJECT_SOURCE_DIR}/perf/smoke_check.cmake)
    set_tests_properties("perf: bt-ping no-crypto cross-process" PROPERTIES TIMEOUT 240)
  endif()
  # Every call failing: the failures by status and message, no figure, exit 1.
  find_program(BT_BASH bash REQUIRED)
  add_test(NAME "perf: bt-ping failure report"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/ping_failures_test.sh
                   $<TARGET_FILE:bt-ping>)
  set_tests_properties("perf: bt-ping failure report" PROPERTIES TIMEOUT 120)
  # --baseline's JSON carries the bare round trip's percentiles, and perf/plot_latency.py (the
  # plot of docs/performance.md) draws them and refuses inputs without the figures it names.
  add_test(NAME "perf: bt-ping latency plot"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/ping_plot_test.sh
                   $<TARGET_FILE:bt-ping> ${PROJECT_SOURCE_DIR}/perf/plot_latency.py)
  set_tests_properties("perf: bt-ping latency plot" PROPERTIES TIMEOUT 120)
  # --baseline ends with a verdict line on the ratio's goal, agreeing with its JSON.
  add_test(NAME "perf: bt-ping ratio verdict"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/ping_verdict_test.sh
                   $<TARGET_FILE:bt-ping>)
  set_tests_properties("perf: bt-ping ratio verdict" PROPERTIES TIMEOUT 120)
  if(BT_BUILD_TOOLS)
    # CPU per request (in process and with a spawned bt-axon), its ratio to the bare round
    # trip's, and --rounds: best ping round over best floor round, the rounds in the verdict.
    add_test(NAME "perf: bt-ping cpu and rounds"
             COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/ping_cpu_rounds_test.sh
                     $<TARGET_FILE:bt-ping>)
    set_tests_properties("perf: bt-ping cpu and rounds" PROPERTIES TIMEOUT 240)
    # --memory: 1,200 one-hotkey callers (above the per-hotkey replay quota), all answered.
    add_test(NAME "perf: bt-ping memory mode"
             COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/ping_memory_test.sh
                     $<TARGET_FILE:bt-ping>)
    set_tests_properties("perf: bt-ping memory mode" PROPERTIES TIMEOUT 240)
  endif()
endif()
