// Bittensor wallets on disk, in bittensor-wallet's layout (PROTOCOL 9.8):
//
//   <path>/<name>/coldkey                 keyfile, NaCl-encrypted unless written without a password
//   <path>/<name>/coldkeypub.txt          public-only keyfile
//   <path>/<name>/hotkeys/<hotkey>        keyfile, plaintext (as Bittensor writes hotkeys)
//   <path>/<name>/hotkeys/<hotkey>pub.txt public-only keyfile
//
// Files are written atomically (keyfile.hpp write_keyfile_bytes) with mode 0600; directories
// this code creates get mode 0700. Reading never modifies anything.
//
// Thread safety: a wallet is an immutable value; concurrent reads are fine. Concurrent writers
// of the same file do not corrupt it (each write is a rename), the last one wins.
#pragma once

#include <bt/key_error.hpp>
#include <bt/keypair.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bt {

/// Where a wallet lives. The defaults are btcli's and btwallet's.
/// Where wallets live when BT_WALLET_PATH is not set.
inline constexpr std::string_view builtin_wallet_path = "~/.bittensor/wallets";

/// Bittensor's defaults, as Python's wallet computes them: the environment variable when it is
/// set and non-empty, else the built-in value ("~/.bittensor/wallets", "default", "default").
std::string default_wallet_path();    ///< BT_WALLET_PATH, else builtin_wallet_path
std::string default_wallet_name();    ///< BT_WALLET_NAME
std::string default_wallet_hotkey();  ///< BT_WALLET_HOTKEY

/// Where a wallet lives. A field not written out takes the default above, so
/// `bt::wallet({.name = "miner"})` finds the wallet under BT_WALLET_PATH as the tools do.
struct wallet_config {
  std::string path = default_wallet_path();  ///< "~" is expanded when used
  std::string name = default_wallet_name();
  std::string hotkey = default_wallet_hotkey();

  /// Every field from its default: the same as `wallet_config{}`, kept for readability.
  static wallet_config from_env();
};

/// Python's os.path.expanduser: "~" and "~/..." use $HOME (else the password database),
/// "~user/..." that user's home directory; anything else is returned unchanged.
std::filesystem::path expand_user(std::string_view path);

class wallet {
 public:
  /// Throws std::invalid_argument when the wallet or hotkey name is empty, ".", "..", or holds a
  /// '/' or a NUL (names are single path components).
  explicit wallet(wallet_config config = {});

  const wallet_config& config() const noexcept { return config_; }
  /// <expanded path>/<name>
  const std::filesystem::path& directory() const noexcept { return dir_; }
  std::filesystem::path coldkey_path() const { return dir_ / "coldkey"; }
  std::filesystem::path coldkeypub_path() const { return dir_ / "coldkeypub.txt"; }
  std::filesystem::path hotkey_path() const { return hotkey_path(config_.hotkey); }
  /// Throws std::invalid_argument for a name that is not a single path component.
  std::filesystem::path hotkey_path(std::string_view hotkey) const;
  std::filesystem::path hotkeypub_path() const { return hotkeypub_path(config_.hotkey); }
  std::filesystem::path hotkeypub_path(std::string_view hotkey) const;

  // --- reading ---

  /// The hotkey keypair (config().hotkey). keyfile_not_found, keyfile_io, keyfile_invalid, or
  /// keyfile_wrong_password when the file is encrypted and `password` is absent or wrong.
  std::optional<keypair> load_hotkey(error& err,
                                     std::optional<std::string_view> password = std::nullopt) const;
  /// Throwing form: std::system_error carrying the bt::key_errc.
  keypair load_hotkey() const;

  /// coldkeypub.txt as a public-only keypair. keyfile_not_found when the wallet has none (an axon
  /// can run without it: AxonInfo.coldkey is then unknown).
  std::optional<keypair> load_coldkeypub(error& err) const;
  /// The SS58 address (format 42) of coldkeypub.txt; errors as load_coldkeypub.
  std::optional<std::string> coldkeypub_ss58(error& err) const;

  /// Whether the coldkey file is encrypted; nullopt (err set) when it cannot be read.
  std::optional<bool> coldkey_encrypted(error& err) const;
  /// The coldkey, decrypted with `password` when encrypted (about a second: Argon2i with
  /// 512 MiB). keyfile_wrong_password on a wrong or missing password.
  std::optional<keypair> load_coldkey(std::optional<std::string_view> password, error& err) const;

  /// Names of the files in hotkeys/ that are hotkeys (not "*pub.txt", not hidden), sorted.
  std::vector<std::string> hotkey_names() const;

  // --- writing (directories created 0700, files 0600, atomically) ---

  /// Writes coldkey (NaCl-encrypted when `password` is given, plaintext otherwise) and then
  /// coldkeypub.txt. With overwrite = false, fails with keyfile_io if either exists.
  bool write_coldkey(const keypair& kp, std::optional<std::string_view> password, bool overwrite,
                     error& err) const;
  /// Writes only coldkeypub.txt.
  bool write_coldkeypub(const keypair& kp, bool overwrite, error& err) const;
  /// Writes hotkeys/<hotkey> (plaintext, or encrypted when `password` is given) and
  /// hotkeys/<hotkey>pub.txt.
  bool write_hotkey(const keypair& kp, bool overwrite, error& err,
                    std::optional<std::string_view> password = std::nullopt) const;

 private:
  bool ensure_directory(const std::filesystem::path& dir, error& err) const;
  /// Writes a secret keyfile and its public twin in `dir` (the coldkey or a hotkey: `role`
  /// names it in errors); refuses a public-only keypair and, unless `overwrite`, existing files.
  bool write_key_pair(std::string_view role, const std::filesystem::path& dir,
                      const std::filesystem::path& secret_path,
                      const std::filesystem::path& public_path, const keypair& kp,
                      std::optional<std::string_view> password, bool overwrite, error& err) const;

  wallet_config config_;
  std::filesystem::path dir_;
};

/// Wallet names under `wallet_path` (expanded): the sub-directories, sorted, hidden ones skipped.
std::vector<std::string> list_wallets(std::string_view wallet_path);

}  // namespace bt
