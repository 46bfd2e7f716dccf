# bt-wallet end to end: tests/tools/wallet_cli_test.sh runs the built binary in
# a temporary directory. "keys" is quick; "wallet" runs Argon2i (512 MiB) three times.
if(TARGET bt-wallet)
  find_program(BT_BASH bash REQUIRED)
  add_test(NAME "tools: bt-wallet key tools"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/wallet_cli_test.sh $<TARGET_FILE:bt-wallet> keys)
  add_test(NAME "tools: bt-wallet wallets"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/wallet_cli_test.sh $<TARGET_FILE:bt-wallet> wallet)
  set_tests_properties("tools: bt-wallet key tools" PROPERTIES TIMEOUT 60)
  set_tests_properties("tools: bt-wallet wallets" PROPERTIES TIMEOUT 240)
endif()

# bt-axon's start-up messages: the missing hotkey's, the warning for an exposed hotkey file, the
# coldkey in AxonInfo, a port in use, IPv6 in brackets (tests/tools/axon_startup_test.sh).
if(TARGET bt-wallet AND TARGET bt-axon)
  add_test(NAME "tools: bt-axon start-up messages"
           COMMAND ${BT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/tools/axon_startup_test.sh
                   $<TARGET_FILE:bt-axon> $<TARGET_FILE:bt-wallet>)
  set_tests_properties("tools: bt-axon start-up messages" PROPERTIES TIMEOUT 120)
endif()
