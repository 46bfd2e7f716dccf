# bt_add_library(<name> EXPORT_NAME <export> SOURCES <file>... [HEADERS <file>...]
#                [PRIVATE_HEADERS <file>...])
# Makes one library of the package the way all of them are made: the target <name> with the alias
# bt::<export>; HEADERS (paths under include/, public, installed with the target as a header file
# set, so include/ is on the include path of the target's users in the build and in an install);
# PRIVATE_HEADERS and src/ reachable only from the target's own sources; C++20 as a PUBLIC compile
# feature; the project's warnings; installed into the bt-targets export.
function(bt_add_library name)
  cmake_parse_arguments(arg "" "EXPORT_NAME" "SOURCES;HEADERS;PRIVATE_HEADERS" ${ARGN})
  if(NOT arg_EXPORT_NAME OR NOT arg_SOURCES OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "bt_add_library(${name}): needs EXPORT_NAME and SOURCES; unknown: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  add_library(${name} ${arg_SOURCES})
  add_library(bt::${arg_EXPORT_NAME} ALIAS ${name})
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${arg_EXPORT_NAME} OUTPUT_NAME ${name})
  if(arg_HEADERS)
    target_sources(${name} PUBLIC FILE_SET HEADERS BASE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/include
                   FILES ${arg_HEADERS})
  endif()
  if(arg_PRIVATE_HEADERS)
    target_sources(${name} PRIVATE ${arg_PRIVATE_HEADERS})
  endif()
  if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/src)
    target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  endif()
  target_compile_features(${name} PUBLIC cxx_std_20)
  bt_target_defaults(${name})
  bt_unity(${name})
  install(TARGETS ${name} EXPORT bt-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
