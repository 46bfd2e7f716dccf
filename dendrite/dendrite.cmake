# bt::dendrite: the async Beast client a validator uses. Included by CMakeLists.txt.
# Asio and Beast come compiled from bt::net (BOOST_ASIO/BEAST_SEPARATE_COMPILATION).
file(GLOB BT_DENDRITE_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
add_library(bt_dendrite ${BT_DENDRITE_SOURCES})
add_library(bt::dendrite ALIAS bt_dendrite)
set_target_properties(bt_dendrite PROPERTIES EXPORT_NAME dendrite OUTPUT_NAME bt_dendrite)
target_include_directories(bt_dendrite PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(bt_dendrite PUBLIC bt::synapse bt::net spdlog::spdlog)
bt_target_defaults(bt_dendrite)
bt_precompile_headers(bt_dendrite NET)

install(TARGETS bt_dendrite EXPORT bt-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
