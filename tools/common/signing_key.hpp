// The signing hotkey of a tool that signs (bt-dendrite query, bt-chain serve-axon): one set of
// flags, registered and read the same way everywhere. Either a secret URI (--uri //Alice) or a
// wallet in Bittensor's layout (--wallet.path/--wallet.name/--wallet.hotkey, each defaulting to
// BT_WALLET_PATH/BT_WALLET_NAME/BT_WALLET_HOTKEY and then btcli's defaults), never both.
#pragma once

#include <bt/error.hpp>
#include <bt/keypair.hpp>
#include <bt/wallet.hpp>

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>
#include <utility>

namespace bt::cli {

struct key_flags {
  std::string uri;            ///< --uri: sign with this secret URI instead of a wallet
  std::string wallet_path;    ///< --wallet.path (default BT_WALLET_PATH or ~/.bittensor/wallets)
  std::string wallet_name;    ///< --wallet.name
  std::string wallet_hotkey;  ///< --wallet.hotkey
};

/// Registers --uri and --wallet.path/--wallet.name/--wallet.hotkey on `cmd`, into `flags`.
inline void add_key_flags(CLI::App& cmd, key_flags& flags) {
  cmd.add_option("--uri", flags.uri,
                 "Sign with the key of this secret URI (e.g. //Alice) instead of a wallet");
  cmd.add_option("--wallet.path", flags.wallet_path,
                 "Wallet directory (default BT_WALLET_PATH or ~/.bittensor/wallets)");
  cmd.add_option("--wallet.name", flags.wallet_name,
                 "Wallet name (default BT_WALLET_NAME or default)");
  cmd.add_option("--wallet.hotkey", flags.wallet_hotkey,
                 "Hotkey name (default BT_WALLET_HOTKEY or default)");
}

/// The sr25519 hotkey the flags name. Throws std::invalid_argument with a message naming the
/// flag or the hotkey file and why ("--uri and --wallet.* are exclusive", "--uri: ...",
/// "hotkey /path/...: ...").
inline keypair signing_hotkey(const key_flags& flags) {
  error err;
  if (!flags.uri.empty()) {
    if (!flags.wallet_path.empty() || !flags.wallet_name.empty() || !flags.wallet_hotkey.empty())
      throw std::invalid_argument("--uri and --wallet.* are exclusive");
    auto k = keypair::from_uri(flags.uri, crypto_type::sr25519, err);
    if (!k) throw std::invalid_argument("--uri: " + err.message());
    return std::move(*k);
  }
  wallet_config wc = wallet_config::from_env();
  if (!flags.wallet_path.empty()) wc.path = flags.wallet_path;
  if (!flags.wallet_name.empty()) wc.name = flags.wallet_name;
  if (!flags.wallet_hotkey.empty()) wc.hotkey = flags.wallet_hotkey;
  const wallet w(wc);  // throws std::invalid_argument for a bad name
  auto k = w.load_hotkey(err);
  if (!k) throw std::invalid_argument("hotkey " + w.hotkey_path().string() + ": " + err.message());
  return std::move(*k);
}

}  // namespace bt::cli
