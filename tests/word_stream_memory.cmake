# bt-axon's WordStream route under a large body (tests/hostile/word_stream_memory_test.cpp): a
# real bt-axon process, a slow client holding one big stream open, the axon's resident memory
# bounded by a small multiple of the body. perf/proc.cpp (spawn a child, read its stdout line,
# stop it) is compiled in, as for the hostile catalogue: perf/ may be off (sanitizer builds).
if(TARGET bt-axon AND TARGET bt::dendrite)
  add_executable(word_stream_memory_test ${CMAKE_CURRENT_SOURCE_DIR}/hostile/word_stream_memory_test.cpp
                                         ${PROJECT_SOURCE_DIR}/perf/proc.cpp)
  target_include_directories(word_stream_memory_test PRIVATE ${PROJECT_SOURCE_DIR}/perf)
  target_link_libraries(word_stream_memory_test PRIVATE bt_test_main bt::dendrite)
  target_compile_definitions(word_stream_memory_test PRIVATE BT_AXON_EXE="$<TARGET_FILE:bt-axon>")
  add_dependencies(word_stream_memory_test bt-axon)
  bt_target_defaults(word_stream_memory_test)
  catch_discover_tests(word_stream_memory_test TEST_PREFIX "hostile: " PROPERTIES TIMEOUT 120)
endif()
