// The signing hotkey of a tool that signs (bt-dendrite query, bt-chain serve-axon): one set of
// flags, registered and read the same way everywhere. Either a secret URI (--uri //Alice) or a
// wallet in Bittensor's layout (--wallet.path/--wallet.name/--wallet.hotkey, each defaulting to
// BT_WALLET_PATH/BT_WALLET_NAME/BT_WALLET_HOTKEY and then btcli's defaults), never both. bt-axon,
// which has its own wallet flags, says the same about its hotkey (hotkey_load_failure,
// exposure_warning).
#pragma once

#include <bt/error.hpp>
#include <bt/keyfile.hpp>
#include <bt/keypair.hpp>
#include <bt/wallet.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

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

/// Why a wallet's hotkey did not load, as the tools say it. A missing hotkey or wallet names what
/// exists (the wallet's hotkeys, or the wallets at its path) and the bt-wallet command that
/// creates it; any other failure is err's message, which names the file.
inline std::string hotkey_load_failure(const wallet& w, const error& err) {
  if (err.code != make_error_code(key_errc::keyfile_not_found)) return "hotkey: " + err.message();
  const wallet_config& c = w.config();
  const std::string path_flag = c.path == default_wallet_path() ? "" : " --wallet.path " + c.path;
  const auto listed = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? std::string("none") : out;
  };
  std::error_code ec;
  if (!std::filesystem::is_directory(w.directory(), ec))
    return "no wallet \"" + c.name + "\" at " + w.directory().string() +
           " (wallets there: " + listed(list_wallets(c.path)) +
           "); create it with: bt-wallet new-coldkey" + path_flag + " --wallet.name " + c.name +
           ", then bt-wallet new-hotkey" + path_flag + " --wallet.name " + c.name +
           " --wallet.hotkey " + c.hotkey;
  return "wallet \"" + c.name + "\" has no hotkey \"" + c.hotkey + "\" (no file " +
         w.hotkey_path().string() + "; its hotkeys: " + listed(w.hotkey_names()) +
         "); create it with: bt-wallet new-hotkey" + path_flag + " --wallet.name " + c.name +
         " --wallet.hotkey " + c.hotkey;
}

/// The warning for a secret keyfile that other users may read or replace (`role`: "hotkey",
/// "coldkey"), or empty when only its owner can (bt::keyfile_exposure). The tools print it and
/// go on: the file is still loaded (docs/keys.md, "Permissions").
inline std::string exposure_warning(std::string_view role, const std::filesystem::path& file) {
  const std::string why = keyfile_exposure(file);
  if (why.empty()) return why;
  return "the " + std::string(role) + " " + file.string() + " is not private to its owner: " + why;
}

/// The sr25519 hotkey the flags name. Throws std::invalid_argument with a message naming the
/// flag or the hotkey and why ("--uri and --wallet.* are exclusive", "--uri: ...",
/// hotkey_load_failure's). A hotkey file that other users may read is loaded, with a warning on
/// stderr.
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
  if (!k) throw std::invalid_argument(hotkey_load_failure(w, err));
  if (const std::string warning = exposure_warning("hotkey", w.hotkey_path()); !warning.empty())
    std::cerr << "warning: " << warning << "\n";
  return std::move(*k);
}

}  // namespace bt::cli
