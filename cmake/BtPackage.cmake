# The Debian package (scripts/package builds and checks it): CPack's DEB generator over the
# project's install rules (libraries, headers, the CMake package, the command-line tools, the
# Python module when BT_BUILD_PYTHON), plus what only a system package installs: bt-axon's systemd
# template unit, under BT_INSTALL_SYSTEMD_UNIT (off, so a plain `cmake --install` is unchanged).
option(BT_INSTALL_SYSTEMD_UNIT "Install bt-axon's systemd template unit bt-axon@.service" OFF)
set(BT_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "Where BT_INSTALL_SYSTEMD_UNIT puts bt-axon@.service, relative to the install prefix")
if(BT_INSTALL_SYSTEMD_UNIT)
  # The unit names bt-axon by its installed path.
  configure_file(${PROJECT_SOURCE_DIR}/packaging/bt-axon@.service.in
                 ${PROJECT_BINARY_DIR}/packaging/bt-axon@.service @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/packaging/bt-axon@.service DESTINATION ${BT_SYSTEMD_UNIT_DIR})
endif()

if(NOT PROJECT_IS_TOP_LEVEL)
  return() # a parent project packages itself
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME bittensor-cpp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Bittensor axon (server), dendrite (client), keys and chain client in C++20")
set(CPACK_PACKAGE_DESCRIPTION
    "The libraries (static), headers and CMake package (find_package(bittensor_cpp)), the tools bt-axon, bt-dendrite, bt-wallet and bt-chain, the Python module bittensor_cpp and bt-axon's systemd template unit.")
set(CPACK_PACKAGE_CONTACT "bittensor-cpp maintainers <bittensor-cpp@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# Depends: from the shared libraries the programs and the module link (dpkg-shlibdeps, dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(BT_BUILD_PYTHON)
  # The module is built for one Python minor version.
  math(EXPR bt_next_minor "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${bt_next_minor})")
endif()
# What find_package(bittensor_cpp) needs to build against the installed headers and static
# libraries (cmake/bittensor_cppConfig.cmake.in); not needed to run the programs.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "cmake, pkg-config, libboost-dev (>= 1.81), nlohmann-json3-dev, libspdlog-dev, libssl-dev, libsodium-dev, libxxhash-dev, libhiredis-dev, libdecaf-dev")
if(BT_INSTALL_SYSTEMD_UNIT)
  # daemon-reload after install and removal, so that a running systemd sees the unit come and go.
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
                                         ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
endif()
include(CPack)
