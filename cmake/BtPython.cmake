# Finds what the Python bindings (python/) need, quietly: a Python 3 interpreter with its
# development headers (Development.Module) and pybind11's CMake package. Sets bt_python_found.
#
# The interpreter: -DPython3_EXECUTABLE when given; else an active virtual environment's; else
# Debian's /usr/bin/python3, where scripts/setup installs pytest, aiohttp and pydantic, in
# preference to another python3 earlier on PATH (a pyenv shim, say) that lacks them.
if(NOT DEFINED Python3_EXECUTABLE AND NOT DEFINED ENV{VIRTUAL_ENV} AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python interpreter of the bindings")
endif()
find_package(Python3 3.8 QUIET COMPONENTS Interpreter Development.Module)
if(Python3_FOUND)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
if(Python3_FOUND AND pybind11_FOUND)
  set(bt_python_found ON)
else()
  set(bt_python_found OFF)
endif()
