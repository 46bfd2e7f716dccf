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

# The shared header itself (tools/common/bt_cli.hpp), on small CLI11 apps: "tools: bt_cli: ...".
if(TARGET bt_cli)
  add_executable(bt_cli_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/bt_cli_test.cpp)
  target_link_libraries(bt_cli_test PRIVATE bt_test_main bt_cli)
  bt_target_defaults(bt_cli_test)
  catch_discover_tests(bt_cli_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 60)
endif()

# bt-axon's log formatters (tools/common/log_setup.hpp, header-only, through bt_cli): "tools: log ...".
if(BT_BUILD_TOOLS)
  add_executable(log_setup_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/log_setup_test.cpp)
  target_link_libraries(log_setup_test PRIVATE bt_test_main bt::synapse bt_cli)
  bt_target_defaults(log_setup_test)
  catch_discover_tests(log_setup_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 60)
endif()

# The allocator policy of bt-axon and bt-ping (tools/common/heap_policy.hpp), in a process of its own (the
# policy is process-wide): "tools: heap policy: ...". It observes glibc's allocator, which the
# sanitizers replace with their own, so in a sanitizer build this one executable is compiled and
# linked without them; it links nothing instrumented (its own Catch2 main, a header).
if(TARGET bt_cli)
  add_executable(heap_policy_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/heap_policy_test.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/support/catch_main.cpp)
  target_include_directories(heap_policy_test PRIVATE ${PROJECT_SOURCE_DIR}/tools/common)
  target_link_libraries(heap_policy_test PRIVATE Catch2::Catch2)
  if(BT_SANITIZE OR BT_TSAN)
    set_target_properties(heap_policy_test PROPERTIES COMPILE_OPTIONS "" LINK_OPTIONS "")
  endif()
  bt_target_defaults(heap_policy_test)
  catch_discover_tests(heap_policy_test TEST_PREFIX "tools: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 60)
endif()

# The docs against the tools: each tool's section lists exactly the flags its --help lists
# (tests/docs/flags_test.sh), and files quoted in README.md and docs/ are quoted whole
# (tests/docs/snippets_test.sh): "docs: ...".
find_program(BT_BASH bash REQUIRED)
add_test(NAME "docs: quoted files match their sources"
         COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/docs/snippets_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties("docs: quoted files match their sources" PROPERTIES TIMEOUT 60)
# The axon's source folders include only lower layers (tests/docs/axon_layering_test.sh).
add_test(NAME "docs: axon/src folders include only lower layers"
         COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/docs/axon_layering_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties("docs: axon/src folders include only lower layers" PROPERTIES TIMEOUT 60)
set(bt_flags_test ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/docs/flags_test.sh)
set(bt_docs ${PROJECT_SOURCE_DIR}/docs)
if(BT_BUILD_TOOLS)
  add_test(NAME "docs: bt-axon flags agree with --help"
           COMMAND ${bt_flags_test} $<TARGET_FILE:bt-axon> ${bt_docs}/axon.md "## `bt-axon`")
  add_test(NAME "docs: bt-dendrite flags agree with --help"
           COMMAND ${bt_flags_test} $<TARGET_FILE:bt-dendrite> ${bt_docs}/dendrite.md
                   "## `bt-dendrite query`" "## `bt-dendrite epistula`"
                   "## `bt-dendrite btauth`"
                   @${bt_docs}/message-model.md "## `bt-dendrite encode`" -- query epistula btauth encode)
  add_test(NAME "docs: bt-wallet flags agree with --help"
           COMMAND ${bt_flags_test} $<TARGET_FILE:bt-wallet> ${bt_docs}/keys.md "## bt-wallet" --
                   new-coldkey new-hotkey regen-coldkey regen-hotkey list show inspect sign verify
                   ss58 "ss58 encode" "ss58 decode")
  set_tests_properties("docs: bt-axon flags agree with --help" "docs: bt-dendrite flags agree with --help"
                       "docs: bt-wallet flags agree with --help" PROPERTIES TIMEOUT 60)
  if(TARGET bt-chain)
    add_test(NAME "docs: bt-chain flags agree with --help"
             COMMAND ${bt_flags_test} $<TARGET_FILE:bt-chain> ${bt_docs}/chain.md
                     "### `bt-chain metagraph`" "## Publishing an axon" -- metagraph serve-axon)
    set_tests_properties("docs: bt-chain flags agree with --help" PROPERTIES TIMEOUT 60)
  endif()
endif()
if(BT_BUILD_PERF AND TARGET bt::axon AND TARGET bt::dendrite)
  # The first "### Commands" of docs/performance.md is the one under "## Ping (bt-ping)".
  add_test(NAME "docs: bt-ping flags agree with --help"
           COMMAND ${bt_flags_test} $<TARGET_FILE:bt-ping> ${bt_docs}/performance.md "### Commands")
  set_tests_properties("docs: bt-ping flags agree with --help" PROPERTIES TIMEOUT 60)
endif()
