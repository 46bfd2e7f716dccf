# The option tables (bt/option_table.hpp) against the docs, the type stub and the --help of
# bt-axon and bt-dendrite query: "docs: ..." (tests/docs/option_tables_test.cpp).
if(TARGET bt-axon AND TARGET bt-dendrite)
  add_executable(option_tables_test ${CMAKE_CURRENT_SOURCE_DIR}/docs/option_tables_test.cpp)
  target_link_libraries(option_tables_test PRIVATE bt_test_main bt::axon bt::dendrite)
  target_compile_definitions(option_tables_test PRIVATE BT_AXON_EXE="$<TARGET_FILE:bt-axon>"
    BT_DENDRITE_EXE="$<TARGET_FILE:bt-dendrite>")
  add_dependencies(option_tables_test bt-axon bt-dendrite)
  bt_target_defaults(option_tables_test)
  catch_discover_tests(option_tables_test EXTRA_ARGS --warn NoTests PROPERTIES TIMEOUT 60)
endif()
