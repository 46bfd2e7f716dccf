# bt::axon: the asynchronous Beast HTTP/1.1 server a miner runs, and the bt-axon
# reference miner. Included by axon/CMakeLists.txt.

file(GLOB BT_AXON_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
add_library(bt_axon ${BT_AXON_SOURCES})
add_library(bt::axon ALIAS bt_axon)
set_target_properties(bt_axon PROPERTIES EXPORT_NAME axon OUTPUT_NAME bt_axon)
target_include_directories(bt_axon
  PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
# Asio and Beast come precompiled from bt::net (it carries the SEPARATE_COMPILATION defines).
target_link_libraries(bt_axon PUBLIC bt::synapse bt::net spdlog::spdlog)
bt_target_defaults(bt_axon)
bt_precompile_headers(bt_axon NET)

install(TARGETS bt_axon EXPORT bt-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

file(GLOB BT_AXON_CLI_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cli/*.cpp)
if(BT_BUILD_TOOLS AND BT_AXON_CLI_SOURCES)
  add_executable(bt-axon ${BT_AXON_CLI_SOURCES})
  target_link_libraries(bt-axon PRIVATE bt::axon CLI11::CLI11)
  bt_target_defaults(bt-axon)
  install(TARGETS bt-axon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
