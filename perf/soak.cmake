# bt-soak: the load and soak driver (scripts/soak [seconds] builds and runs it).
# Included by perf/CMakeLists.txt after ping.cmake (it uses bt_perf_support's process helpers).
if(TARGET bt::axon AND TARGET bt::dendrite AND TARGET bt_perf_support)
  add_executable(bt-soak ${CMAKE_CURRENT_SOURCE_DIR}/soak.cpp)
  target_link_libraries(bt-soak PRIVATE bt_perf_support bt::dendrite CLI11::CLI11 bt_examples)
  bt_target_defaults(bt-soak)
  if(TARGET bt-axon)
    add_dependencies(bt-soak bt-axon)
    target_compile_definitions(bt-soak PRIVATE BT_AXON_BINARY="$<TARGET_FILE:bt-axon>")
  endif()
endif()
