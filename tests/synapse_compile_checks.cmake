# BT_SYNAPSE refuses a bad synapse name when the declaration compiles, not when it is attached:
# tests/libsynapse/bad_synapse_name.cpp declares BT_SYNAPSE(x, "Sum-marize v2", ...), and this
# test compiles it (syntax only) and passes when the compiler prints the static_assert's message.
add_test(NAME "synapse: BT_SYNAPSE refuses a bad name at compile time"
         COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only
                 "-I$<JOIN:$<TARGET_PROPERTY:bt_synapse,INTERFACE_INCLUDE_DIRECTORIES>,;-I>"
                 "-I$<JOIN:$<TARGET_PROPERTY:bt_keys,INTERFACE_INCLUDE_DIRECTORIES>,;-I>"
                 ${CMAKE_CURRENT_SOURCE_DIR}/libsynapse/bad_synapse_name.cpp
         COMMAND_EXPAND_LISTS)
set_tests_properties("synapse: BT_SYNAPSE refuses a bad name at compile time" PROPERTIES
  TIMEOUT 120
  PASS_REGULAR_EXPRESSION "Name must be an ASCII identifier of 1 to 128 characters")
