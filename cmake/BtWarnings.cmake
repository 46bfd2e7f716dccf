# bt_target_defaults(target): warnings (PRIVATE, so consumers are not forced to use them).
function(bt_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
endfunction()
