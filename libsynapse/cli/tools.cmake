# Command-line tools built from libsynapse (included by libsynapse/CMakeLists.txt when
# BT_BUILD_TOOLS is on).

# bt-wallet: Bittensor wallets (btcli-compatible layout and flags) and key tools (inspect, sign,
# verify, ss58). docs/keys.md describes it; tests/wallet_cli.cmake runs it.
add_executable(bt-wallet ${CMAKE_CURRENT_SOURCE_DIR}/cli/bt_wallet.cpp)
target_link_libraries(bt-wallet PRIVATE bt::synapse CLI11::CLI11)
bt_target_defaults(bt-wallet)
install(TARGETS bt-wallet RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
