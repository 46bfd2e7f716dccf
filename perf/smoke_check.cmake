# cmake -DCMD="bt-ping|--count|200" -DEXPECT_COUNT=200 -P perf/smoke_check.cmake
# Runs the command (arguments separated by '|', which survives add_test unlike ';') and fails unless it exits 0 and prints the three lines of the original
# measurement (values are not checked: tests make no timing assertions).
string(REPLACE "|" ";" CMD "${CMD}")
execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 240)
message("${out}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "exit status ${rc}\n${err}")
endif()
foreach(re "Number of queries: ${EXPECT_COUNT}\n" "Average: [0-9]+\\.[0-9][0-9][0-9][0-9] seconds\n"
           "Standard deviation: [0-9]+\\.[0-9][0-9][0-9][0-9] seconds\n" "Failures: none\n")
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "output lacks /${re}/\n${err}")
  endif()
endforeach()
