# Bad usage of bt-axon, bt-dendrite and bt-ping: exit status 2 and a message naming the problem
# (tests/tools/usage_errors_test.sh; bt-wallet's JSON errors are checked by wallet_cli.cmake).
# tests/ is configured before perf/, so bt-ping is tested under the conditions it is built under.
if(BT_BUILD_TOOLS)
  find_program(BT_BASH bash REQUIRED)
  foreach(tool bt-axon bt-dendrite)
    add_test(NAME "tools: ${tool} usage errors"
             COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/usage_errors_test.sh ${tool}
                     $<TARGET_FILE:${tool}>)
    set_tests_properties("tools: ${tool} usage errors" PROPERTIES TIMEOUT 120)
  endforeach()
endif()
if(BT_BUILD_PERF AND TARGET bt::axon AND TARGET bt::dendrite)
  find_program(BT_BASH bash REQUIRED)
  add_test(NAME "tools: bt-ping usage errors"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/usage_errors_test.sh bt-ping
                   $<TARGET_FILE:bt-ping>)
  set_tests_properties("tools: bt-ping usage errors" PROPERTIES TIMEOUT 120)
endif()

# The shared header itself (cli/bt_cli.hpp), on small CLI11 apps: "tools: bt_cli: ...".
if(TARGET bt_cli)
  add_executable(bt_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/bt_cli_test.cpp)
  target_link_libraries(bt_cli_test PRIVATE bt_test_main bt_cli)
  bt_target_defaults(bt_cli_test)
  catch_discover_tests(bt_cli_test TEST_PREFIX "tools: " PROPERTIES TIMEOUT 60)
endif()
