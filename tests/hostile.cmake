# The hostile-input catalogue: Catch2 cases that start a real bt-axon process (with --test-routes
# and small limits, or a large body limit for the WordStream memory case) and attack it over
# loopback; see tests/hostile/*_test.cpp and docs/reliability.md "Hostile inputs".
# bt_proc (perf/proc/proc.cpp: spawn a child, read its stdout line, stop it) starts the axon.
if(TARGET bt-axon AND TARGET bt::dendrite)
  add_executable(hostile_tests ${CMAKE_CURRENT_SOURCE_DIR}/hostile/hostile_catalogue_test.cpp
                               ${CMAKE_CURRENT_SOURCE_DIR}/hostile/word_stream_memory_test.cpp)
  target_link_libraries(hostile_tests PRIVATE bt_test_main bt_proc bt::dendrite)
  target_compile_definitions(hostile_tests PRIVATE BT_AXON_EXE="$<TARGET_FILE:bt-axon>")
  add_dependencies(hostile_tests bt-axon)
  bt_target_defaults(hostile_tests)
  catch_discover_tests(hostile_tests TEST_PREFIX "hostile: " EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 120)
endif()
