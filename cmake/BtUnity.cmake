# Unity builds: a multi-file target compiles its files in batches, one translation unit per batch,
# so that the templates of Asio, Beast, nlohmann_json, pybind11 and Catch2 its files share are
# instantiated and compiled once per batch rather than once per file. Compiling is most of CI's
# time, and this halves it for the test suites and the axon library (docs/reliability.md,
# "Sanitizers"). The rule it sets: two files of one target must not define the same file-local
# name (anonymous namespace or static); what several files need lives once, in a shared header.
# -DBT_UNITY=OFF compiles file by file (quicker to rebuild after editing one file).
option(BT_UNITY "Compile the libraries', the Python module's and the test suites' files in batches"
       ON)
set(BT_UNITY_BATCH 8 CACHE STRING "Files per unity batch")

# bt_unity(target): compile `target` in batches of BT_UNITY_BATCH files when BT_UNITY is on.
# GCC's -Wsubobject-linkage flags a type that uses a file-local type when it is defined outside
# the main file; in a batch every source file is an included one, so each file's own private
# types would be flagged. The warning says nothing about a batch (its files are one translation
# unit by construction), so batched targets built with GCC turn it off.
function(bt_unity target)
  if(BT_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                               UNITY_BUILD_BATCH_SIZE ${BT_UNITY_BATCH})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
  endif()
endfunction()
