# bt-ping: the ping benchmark (the original 10,000-query measurement, its floor and
# the throughput, CPU and memory modes). Included by perf/CMakeLists.txt.

# The parts that need neither axon nor dendrite: statistics, the SVG histogram, the bare Beast
# echo floor; and the process helpers (bt_proc, proc/).
add_library(bt_perf_support STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/stats.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/bare_echo.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/floor.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/report.cpp)
target_include_directories(bt_perf_support PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(bt_perf_support PUBLIC bt::net bt::synapse bt_proc)
bt_target_defaults(bt_perf_support)

if(TARGET bt::axon AND TARGET bt::dendrite)
  add_executable(bt-ping ${CMAKE_CURRENT_SOURCE_DIR}/bt_ping.cpp ${CMAKE_CURRENT_SOURCE_DIR}/ping_driver.cpp
                         ${CMAKE_CURRENT_SOURCE_DIR}/ping_modes.cpp)
  target_link_libraries(bt-ping PRIVATE bt_perf_support bt::axon bt::dendrite bt_cli bt_examples
                                        bt_net_internal)
  bt_target_defaults(bt-ping)
  bt_precompile_headers(bt-ping NET)
  if(TARGET bt-axon)
    # --cross-process spawns this binary unless --axon-binary says otherwise.
    add_dependencies(bt-ping bt-axon)
    target_compile_definitions(bt-ping PRIVATE BT_AXON_BINARY="$<TARGET_FILE:bt-axon>")
  endif()
endif()
