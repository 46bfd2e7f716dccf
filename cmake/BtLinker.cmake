# Link with LLVM's lld when it is installed (scripts/setup installs it) and we are the top-level
# project. The build links about 35 executables and the Python module, each carrying the whole
# of Boost.Beast's and Catch2's debug information in sanitizer builds; GNU ld takes about four
# times as long as lld for each (dendrite_tests at -g1: 4.8 s against 1.2 s on the CI-sized
# machine), which adds up to minutes of scripts/test. -DBT_USE_LLD=OFF keeps the default linker.
find_program(BT_LLD_PROGRAM ld.lld)
set(bt_lld_default OFF)
if(PROJECT_IS_TOP_LEVEL AND BT_LLD_PROGRAM)
  set(bt_lld_default ON)
endif()
option(BT_USE_LLD "Link with lld (faster than GNU ld) when it is installed" ${bt_lld_default})
if(BT_USE_LLD)
  if(NOT BT_LLD_PROGRAM)
    message(FATAL_ERROR "BT_USE_LLD is ON but ld.lld was not found (apt-get install lld)")
  endif()
  add_link_options(-fuse-ld=lld)
  # GCC's link-time-optimisation objects need GCC's linker plugin, which lld does not have: it
  # links them into nothing (pybind11_add_module turns on -flto for the Python module, which then
  # came out as a 3.5 KB file without PyInit_bittensor_cpp). With GCC and lld, no LTO unless asked
  # for (pybind11 adds its own only when CMAKE_INTERPROCEDURAL_OPTIMIZATION is undefined).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT DEFINED CMAKE_INTERPROCEDURAL_OPTIMIZATION)
    set(CMAKE_INTERPROCEDURAL_OPTIMIZATION OFF)
  endif()
endif()
