# The Debian package (scripts/package builds and checks it): CPack's DEB generator over the
# project's install rules (libraries, headers, the CMake package, the command-line tools, the
# Python module when BT_BUILD_PYTHON), plus what only a system package installs: bt-axon's systemd
# template unit, under BT_INSTALL_SYSTEMD_UNIT (off, so a plain `cmake --install` is unchanged),
# and the maintainer scripts that make and remove the system user it runs as.
option(BT_INSTALL_SYSTEMD_UNIT "Install bt-axon's systemd template unit bt-axon@.service" OFF)
set(BT_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "Where BT_INSTALL_SYSTEMD_UNIT puts bt-axon@.service, relative to the install prefix")
# The unit's User= and Group=, which the package's postinst makes; its home holds the wallets
# (docs/deployment.md, "Running under systemd").
set(BT_SERVICE_USER bt-miner)
set(BT_SERVICE_HOME /home/${BT_SERVICE_USER})
# The passwd comment that marks a user the postinst made: only such a user is removed by a purge.
set(BT_SERVICE_USER_COMMENT "bt-axon service user (bittensor-cpp)")
set(BT_SYSTEMD_UNIT_PATTERN "bt-axon@*.service")
if(BT_INSTALL_SYSTEMD_UNIT)
  # The unit names bt-axon by its installed path.
  configure_file(${PROJECT_SOURCE_DIR}/packaging/bt-axon@.service.in
                 ${PROJECT_BINARY_DIR}/packaging/bt-axon@.service @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/packaging/bt-axon@.service DESTINATION ${BT_SYSTEMD_UNIT_DIR})
  if(IS_ABSOLUTE "${BT_SYSTEMD_UNIT_DIR}")
    set(BT_SYSTEMD_UNIT_FILE "${BT_SYSTEMD_UNIT_DIR}/bt-axon@.service")
  else()
    set(BT_SYSTEMD_UNIT_FILE "${CMAKE_INSTALL_PREFIX}/${BT_SYSTEMD_UNIT_DIR}/bt-axon@.service")
  endif()
  # The Debian maintainer scripts (packaging/debian/): the user, the unit's removal, daemon-reload.
  set(bt_maintainer_scripts)
  foreach(script postinst prerm postrm)
    configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/${script}.in
                   ${PROJECT_BINARY_DIR}/packaging/debian/${script} @ONLY
                   FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                    WORLD_READ WORLD_EXECUTE)
    list(APPEND bt_maintainer_scripts ${PROJECT_BINARY_DIR}/packaging/debian/${script})
  endforeach()
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
# Lines of fewer than 80 characters, CPack's leading space included (lintian).
set(CPACK_PACKAGE_DESCRIPTION
    "The libraries (static), headers and CMake package
(find_package(bittensor_cpp)), the tools bt-axon, bt-dendrite, bt-wallet and
bt-chain, the Python module bittensor_cpp, and bt-axon's systemd template unit
with the system user it runs as.")
set(CPACK_PACKAGE_CONTACT "bittensor-cpp maintainers <bittensor-cpp@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# Depends: from the shared libraries the programs and the module link (dpkg-shlibdeps, dpkg-dev),
# plus those listed here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Programs and the module lose their symbols (install(TARGETS) strips executables and modules,
# never the static libraries).
set(CPACK_STRIP_FILES ON)
set(bt_depends)
if(BT_BUILD_PYTHON)
  # The module is built for one Python minor version.
  math(EXPR bt_next_minor "${Python3_VERSION_MINOR} + 1")
  list(APPEND bt_depends "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR})"
       "python3 (<< ${Python3_VERSION_MAJOR}.${bt_next_minor})")
endif()
if(BT_INSTALL_SYSTEMD_UNIT)
  list(APPEND bt_depends passwd) # useradd, userdel, groupdel in the maintainer scripts
endif()
list(JOIN bt_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# What find_package(bittensor_cpp) needs to build against the installed headers and static
# libraries (cmake/bittensor_cppConfig.cmake.in); not needed to run the programs.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "cmake, pkg-config, libboost-dev (>= 1.81), nlohmann-json3-dev, libspdlog-dev, libssl-dev, libsodium-dev, libxxhash-dev, libhiredis-dev, libdecaf-dev")
if(BT_INSTALL_SYSTEMD_UNIT)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${bt_maintainer_scripts})
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
endif()
include(CPack)
