// bt-wallet: Bittensor wallets and key tools.
//
// Output contract (docs/keys.md, "bt-wallet"): every command prints exactly one JSON object on
// stdout. Exit codes: 0 success; 1 only for `verify` when the signature does not verify;
// 2 for any error (bad flags, invalid input, missing files, wrong password), with
// {"error": "..."} naming what is wrong.
//
// Secrets: passwords come from BT_WALLET_PASSWORD or a no-echo prompt on /dev/tty, never from a
// flag. The only secret ever printed is the mnemonic of a key created by new-coldkey or
// new-hotkey: once, on stderr (so stdout stays a JSON document that is safe to log), framed
// with a warning, as btcli prints it at creation.
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/key_error.hpp>
#include <bt/keyfile.hpp>
#include <bt/keypair.hpp>
#include <bt/mnemonic.hpp>
#include <bt/ss58.hpp>
#include <bt/wallet.hpp>

#include <sodium.h>
#include <bt_cli.hpp>
#include <signing_key.hpp>

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

namespace {

// --- results ---------------------------------------------------------------------------------

/// An error reported as {"error": ...} with exit code 2.
struct cli_error {
  std::string message;
};

int print(const bt::json& j, int code = 0) {
  std::cout << j.dump(-1, ' ', false, bt::json::error_handler_t::replace) << '\n' << std::flush;
  return code;
}

[[noreturn]] void fail(std::string message) {
  throw cli_error{std::move(message)};
}
[[noreturn]] void fail(const bt::error& err) {
  fail(err.message());
}

/// A std::string wiped on destruction (passwords, mnemonics, URIs).
struct secret {
  std::string s;
  secret() = default;
  explicit secret(std::string v) : s(std::move(v)) {}
  // A copy, then the source wiped: moving a short std::string would leave its bytes behind.
  secret(secret&& o) : s(o.s) { sodium_memzero(o.s.data(), o.s.size()); }
  secret(const secret&) = delete;
  secret& operator=(const secret&) = delete;
  ~secret() { sodium_memzero(s.data(), s.size()); }
};

// --- password input --------------------------------------------------------------------------

int g_tty_fd = -1;
termios g_saved_termios{};
bool g_termios_saved = false;

void restore_terminal() {
  if (g_termios_saved && g_tty_fd >= 0) ::tcsetattr(g_tty_fd, TCSAFLUSH, &g_saved_termios);
  g_termios_saved = false;
}

extern "C" void on_interrupt(int sig) {
  restore_terminal();  // tcsetattr is async-signal-safe
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// `s` without leading and trailing ASCII whitespace, copied straight into a wiped buffer.
secret trimmed(const std::string& s) {
  const char* ws = " \t\r\n\v\f";
  secret out;
  const auto b = s.find_first_not_of(ws);
  if (b != std::string::npos) out.s.assign(s, b, s.find_last_not_of(ws) - b + 1);
  return out;
}

/// Reads one line from /dev/tty with echo off. Whitespace is trimmed, as btwallet trims
/// interactively entered passwords.
secret prompt_no_echo(const std::string& prompt) {
  const int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    fail(
        "no terminal to ask for the password: set BT_WALLET_PASSWORD (or use --no-password where "
        "allowed)");
  g_tty_fd = fd;
  (void)!::write(fd, prompt.data(), prompt.size());
  if (::tcgetattr(fd, &g_saved_termios) == 0) {
    g_termios_saved = true;
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    termios quiet = g_saved_termios;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  secret line;
  line.s.reserve(1024);
  char c;
  while (line.s.size() < 1024) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line.s.push_back(c);
  }
  restore_terminal();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  (void)!::write(fd, "\n", 1);
  ::close(fd);
  g_tty_fd = -1;
  return trimmed(line.s);
}

/// The password for an existing keyfile: BT_WALLET_PASSWORD (as is), else a prompt.
secret existing_password(const std::string& what) {
  if (const char* env = std::getenv("BT_WALLET_PASSWORD")) return secret(env);
  return prompt_no_echo("Password to decrypt " + what + ": ");
}

/// A password for a new encrypted keyfile: BT_WALLET_PASSWORD, else prompted twice.
secret new_password(const std::string& what) {
  if (const char* env = std::getenv("BT_WALLET_PASSWORD")) {
    if (!*env) fail("BT_WALLET_PASSWORD is empty; use --no-password for an unencrypted " + what);
    return secret(env);
  }
  secret first = prompt_no_echo("Password to encrypt " + what + ": ");
  if (first.s.empty()) fail("empty password; use --no-password for an unencrypted " + what);
  secret second = prompt_no_echo("Retype the password: ");
  if (first.s != second.s) fail("the passwords do not match");
  return secret(first.s);
}

// --- helpers ---------------------------------------------------------------------------------

bt::crypto_type parse_crypto(const std::string& name) {
  if (name == "sr25519") return bt::crypto_type::sr25519;
  if (name == "ed25519") return bt::crypto_type::ed25519;
  fail("--crypto must be sr25519 or ed25519, not \"" + name + "\"");
}

const char* crypto_name(bt::crypto_type t) {
  return t == bt::crypto_type::ed25519 ? "ed25519" : "sr25519";
}

std::string hex0x(std::span<const std::uint8_t> b) {
  return "0x" + bt::to_hex(b);
}

/// "-" means: read the value from one line of stdin (keeps secrets out of argv and ps).
secret value_or_stdin(const std::string& value, const char* flag) {
  if (value != "-") return secret(value);
  secret line;
  if (!std::getline(std::cin, line.s)) fail(std::string(flag) + " - : nothing on stdin");
  if (!line.s.empty() && line.s.back() == '\r') line.s.pop_back();
  return secret(line.s);
}

bt::keypair keypair_from_uri(const std::string& uri_flag, bt::crypto_type type) {
  secret uri = value_or_stdin(uri_flag, "--uri");
  bt::error err;
  auto kp = bt::keypair::from_uri(uri.s, type, err);
  if (!kp) fail("--uri: " + err.message());
  return std::move(*kp);
}

std::vector<std::uint8_t> message_bytes(const std::string& message, bool is_hex) {
  if (!is_hex) return {message.begin(), message.end()};
  auto bytes = bt::from_hex(message);
  if (!bytes) fail("--message is not hex (--hex was given)");
  return *bytes;
}

bt::json or_null(const std::optional<std::string>& s) {
  return s ? bt::json(*s) : bt::json(nullptr);
}

/// `s` as one shell word: as is when it has only safe characters, else single-quoted.
std::string sh_word(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") ==
          std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The regen command that recreates the key just made in the same place, followed literally:
/// --wallet.name always (BT_WALLET_NAME may be unset where it is run), --wallet.hotkey for a
/// hotkey, --wallet.path (absolute) when it is not the built-in default.
std::string regen_hint(const bt::wallet& w, bool coldkey) {
  const auto& c = w.config();
  std::string out = std::string("bt-wallet regen-") + (coldkey ? "coldkey" : "hotkey");
  const auto dir = std::filesystem::absolute(w.directory().parent_path());
  if (dir != std::filesystem::absolute(bt::expand_user(bt::builtin_wallet_path)))
    out += " --wallet.path " + sh_word(dir.string());
  out += " --wallet.name " + sh_word(c.name);
  if (!coldkey) out += " --wallet.hotkey " + sh_word(c.hotkey);
  return out + " --mnemonic \"<the words>\"";
}

void print_mnemonic(const bt::wallet& w, bool coldkey, const std::string& phrase) {
  std::cerr << "\nIMPORTANT: the mnemonic of the new " << (coldkey ? "coldkey" : "hotkey")
            << " is printed below, once.\n"
            << "Write it down and keep it offline; anyone who has it controls the key, and it is\n"
            << "the only way to recover the key:\n\n"
            << "    " << phrase << "\n\n"
            << "To regenerate: " << regen_hint(w, coldkey) << "\n\n"
            << std::flush;
}

// --- commands --------------------------------------------------------------------------------

struct wallet_flags {
  std::string path;
  std::string name;
  std::string hotkey;

  void add_to(CLI::App& cmd, bool with_hotkey) {
    cmd.add_option("--wallet.path,--wallet-path", path, "Wallets directory (BT_WALLET_PATH)")
        ->capture_default_str();
    cmd.add_option("--wallet.name,--wallet-name", name, "Wallet name (BT_WALLET_NAME)")
        ->capture_default_str();
    if (with_hotkey)
      cmd.add_option("--wallet.hotkey,--wallet-hotkey", hotkey, "Hotkey name (BT_WALLET_HOTKEY)")
          ->capture_default_str();
  }
  bt::wallet open() const {
    try {
      return bt::wallet(bt::wallet_config{.path = path, .name = name, .hotkey = hotkey});
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }
};

int create_coldkey(const bt::wallet& w, const bt::keypair& kp, bool no_password, bool overwrite) {
  // Checked before asking for a password (write_coldkey checks again, atomically).
  for (const auto& p : {w.coldkey_path(), w.coldkeypub_path()})
    if (!overwrite && ::access(p.c_str(), F_OK) == 0)
      fail(p.string() + " already exists (use --overwrite to replace it)");
  bt::error err;
  bool ok;
  if (no_password) {
    ok = w.write_coldkey(kp, std::nullopt, overwrite, err);
  } else {
    secret pw = new_password("the coldkey");
    ok = w.write_coldkey(kp, pw.s, overwrite, err);
  }
  if (!ok) fail(err);
  return print({{"wallet", w.config().name},
                {"path", w.directory().string()},
                {"coldkey", kp.ss58_address()},
                {"encrypted", !no_password}});
}

int create_hotkey(const bt::wallet& w, const bt::keypair& kp, bool overwrite) {
  bt::error err;
  if (!w.write_hotkey(kp, overwrite, err)) fail(err);
  return print({{"wallet", w.config().name},
                {"path", w.directory().string()},
                {"hotkey_name", w.config().hotkey},
                {"hotkey", kp.ss58_address()}});
}

bt::keypair keypair_from_mnemonic_flag(const std::string& flag) {
  secret phrase = value_or_stdin(flag, "--mnemonic");
  bt::error err;
  auto kp = bt::keypair::from_mnemonic(phrase.s, "", bt::crypto_type::sr25519, err);
  if (!kp) fail("--mnemonic: " + err.message());
  return std::move(*kp);
}

int check_words(int words) {
  if (words < 12 || words > 24 || words % 3 != 0) fail("--n-words must be 12, 15, 18, 21 or 24");
  return words;
}

// The address of a hotkey for listings: its pub file, else the plaintext keyfile.
std::optional<std::string> hotkey_address(const bt::wallet& w, const std::string& name) {
  bt::error err;
  if (auto data = bt::read_keyfile_bytes(w.hotkeypub_path(name), err)) {
    if (auto kp = bt::keypair_from_keyfile_data(*data, std::nullopt, err))
      return kp->ss58_address();
  }
  if (auto data = bt::read_keyfile_bytes(w.hotkey_path(name), err)) {
    auto kp = bt::keypair_from_keyfile_data(*data, std::nullopt, err);
    sodium_memzero(data->data(), data->size());
    if (kp) return kp->ss58_address();
  }
  return std::nullopt;
}

int cmd_list(const wallet_flags& f) {
  bt::json wallets = bt::json::array();
  for (const auto& name : bt::list_wallets(f.path)) {
    const bt::wallet w(bt::wallet_config{.path = f.path, .name = name});
    bt::error err;
    bt::json hotkeys = bt::json::array();
    for (const auto& hk : w.hotkey_names())
      hotkeys.push_back({{"name", hk}, {"ss58_address", or_null(hotkey_address(w, hk))}});
    wallets.push_back({{"name", name},
                       {"coldkeypub", or_null(w.coldkeypub_ss58(err))},
                       {"hotkeys", std::move(hotkeys)}});
  }
  return print({{"path", bt::expand_user(f.path).string()}, {"wallets", std::move(wallets)}});
}

int cmd_show(const wallet_flags& f, bool decrypt) {
  const bt::wallet w = f.open();
  bt::error err;
  // Missing files are null (an axon runs without a coldkeypub); unreadable ones are errors.
  auto cold = w.coldkeypub_ss58(err);
  if (!cold && err.code != bt::make_error_code(bt::key_errc::keyfile_not_found)) fail(err);
  std::optional<std::string> hot;
  bool hotkey_missing = false;
  {
    auto kp = w.load_hotkey(err);
    if (kp)
      hot = kp->ss58_address();
    else if (err.code == bt::make_error_code(bt::key_errc::keyfile_wrong_password))
      hot = hotkey_address(w, f.hotkey);
    else if (err.code == bt::make_error_code(bt::key_errc::keyfile_not_found))
      hotkey_missing = true;
    else
      fail(err);
  }
  const bool coldkey_exists = ::access(w.coldkey_path().c_str(), F_OK) == 0;
  if (!cold && !hot && !coldkey_exists) fail("no wallet at " + w.directory().string());
  if (hotkey_missing)  // the JSON keeps "hotkey": null; stderr says what is missing and the fix
    std::cerr << "bt-wallet: warning: " << bt::cli::hotkey_load_failure(w, err) << "\n";
  // Secret keyfiles that other users may read or replace: said on stderr, shown all the same.
  for (const auto& [role, file] :
       {std::pair{"hotkey", w.hotkey_path()}, {"coldkey", w.coldkey_path()}})
    if (const std::string warning = bt::cli::exposure_warning(role, file); !warning.empty())
      std::cerr << "bt-wallet: warning: " << warning << "\n";
  bt::json out = {{"wallet", f.name},
                  {"path", w.directory().string()},
                  {"coldkeypub", or_null(cold)},
                  {"hotkey_name", f.hotkey},
                  {"hotkey", or_null(hot)}};
  if (decrypt) {
    const auto encrypted = w.coldkey_encrypted(err);
    if (!encrypted) fail(err);
    std::optional<bt::keypair> kp;
    if (*encrypted) {
      secret pw = existing_password("the coldkey of wallet \"" + f.name + "\"");
      kp = w.load_coldkey(pw.s, err);
    } else {
      kp = w.load_coldkey(std::nullopt, err);
    }
    if (!kp) fail(err);
    out["coldkey"] = kp->ss58_address();
    out["coldkey_encrypted"] = *encrypted;
    out["coldkey_matches_coldkeypub"] = cold && *cold == kp->ss58_address();
  }
  return print(out);
}

int cmd_inspect(const std::string& uri, const std::string& crypto, int ss58_format) {
  const auto kp = keypair_from_uri(uri, parse_crypto(crypto));
  std::error_code ec;
  const auto address = bt::ss58::encode(kp.public_key(), ss58_format, ec);
  if (!address) fail("--ss58-format " + std::to_string(ss58_format) + ": " + ec.message());
  return print({{"crypto", crypto_name(kp.type())},
                {"public_key", hex0x(kp.public_key())},
                {"ss58_address", *address}});
}

int cmd_sign(const std::string& uri, const std::string& crypto, const std::string& message,
             bool is_hex) {
  const auto kp = keypair_from_uri(uri, parse_crypto(crypto));
  const auto bytes = message_bytes(message, is_hex);
  return print({{"signature", hex0x(kp.sign(std::span<const std::uint8_t>(bytes)))}});
}

int cmd_verify(const std::string& address, const std::string& message, const std::string& signature,
               const std::string& crypto, bool is_hex) {
  const auto type = parse_crypto(crypto);
  std::error_code ec;
  const auto decoded = bt::ss58::decode(address, ec);
  if (!decoded) fail("--address: " + ec.message());
  const auto sig = bt::from_hex(signature);
  if (!sig) fail("--signature is not hex");
  if (sig->size() != 64) fail("--signature must be 64 bytes, not " + std::to_string(sig->size()));
  const auto bytes = message_bytes(message, is_hex);
  const auto result = bt::verify_signature(type, decoded->public_key, bytes, *sig);
  if (!result) return print({{"valid", true}}, 0);
  return print({{"valid", false}, {"reason", result.message()}}, 1);
}

int cmd_ss58_decode(const std::string& address) {
  std::error_code ec;
  const auto d = bt::ss58::decode(address, ec);
  if (!d) fail("address: " + ec.message());
  return print({{"public_key", hex0x(d->public_key)}, {"ss58_format", d->format}});
}

int cmd_ss58_encode(const std::string& public_key, int format) {
  const auto bytes = bt::from_hex(public_key);
  if (!bytes) fail("--public-key is not hex");
  if (bytes->size() != 32)
    fail("--public-key must be 32 bytes, not " + std::to_string(bytes->size()));
  std::error_code ec;
  const auto address =
      bt::ss58::encode(std::span<const std::uint8_t, 32>(bytes->data(), 32), format, ec);
  if (!address) fail("--format " + std::to_string(format) + ": " + ec.message());
  return print({{"ss58_address", *address}});
}

int run(int argc, char** argv) {
  CLI::App app{
      "bt-wallet: Bittensor wallets (btcli layout) and sr25519/ed25519 key tools.\n"
      "Prints one JSON object on stdout; exit 0 ok, 1 verify failed, 2 error."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "bt-wallet 0.1.0");

  const auto env = bt::wallet_config::from_env();
  wallet_flags wf{env.path, env.name, env.hotkey};

  int n_words = 12;
  bool no_password = false, overwrite = false, decrypt = false, is_hex = false;
  std::string mnemonic, uri, crypto = "sr25519", message, address, signature, public_key;
  int ss58_format = bt::ss58::default_format;

  auto* new_cold = app.add_subcommand(
      "new-coldkey", "Create a coldkey from a fresh mnemonic (encrypted unless --no-password)");
  wf.add_to(*new_cold, false);
  new_cold->add_option("--n-words", n_words, "Mnemonic length: 12, 15, 18, 21 or 24")
      ->capture_default_str();
  new_cold->add_flag("--no-password", no_password,
                     "Write the coldkey unencrypted (as btcli allows)");
  new_cold->add_flag("--overwrite", overwrite, "Replace an existing coldkey");

  auto* new_hot =
      app.add_subcommand("new-hotkey", "Create a hotkey (plaintext, as Bittensor stores hotkeys)");
  wf.add_to(*new_hot, true);
  new_hot->add_option("--n-words", n_words, "Mnemonic length: 12, 15, 18, 21 or 24")
      ->capture_default_str();
  new_hot->add_flag("--overwrite", overwrite, "Replace an existing hotkey");

  auto* regen_cold = app.add_subcommand("regen-coldkey", "Recreate a coldkey from its mnemonic");
  wf.add_to(*regen_cold, false);
  regen_cold
      ->add_option("--mnemonic", mnemonic, "The words, quoted (\"-\": read one line from stdin)")
      ->required();
  regen_cold->add_flag("--no-password", no_password, "Write the coldkey unencrypted");
  regen_cold->add_flag("--overwrite", overwrite, "Replace an existing coldkey");

  auto* regen_hot = app.add_subcommand("regen-hotkey", "Recreate a hotkey from its mnemonic");
  wf.add_to(*regen_hot, true);
  regen_hot
      ->add_option("--mnemonic", mnemonic, "The words, quoted (\"-\": read one line from stdin)")
      ->required();
  regen_hot->add_flag("--overwrite", overwrite, "Replace an existing hotkey");

  auto* list =
      app.add_subcommand("list", "List the wallets under --wallet.path with their addresses");
  list->add_option("--wallet.path,--wallet-path", wf.path, "Wallets directory (BT_WALLET_PATH)")
      ->capture_default_str();

  auto* show = app.add_subcommand("show", "Print the coldkeypub and hotkey addresses of a wallet");
  wf.add_to(*show, true);
  show->add_flag("--decrypt", decrypt,
                 "Also open the coldkey (asks for its password) and print its address");

  auto* inspect = app.add_subcommand("inspect", "Public key and SS58 address of a secret URI");
  inspect
      ->add_option("--uri", uri,
                   "Mnemonic[//hard][/soft][///password], //Alice, or 0x<seed> (\"-\": stdin)")
      ->required();
  inspect->add_option("--crypto", crypto, "sr25519 or ed25519")->capture_default_str();
  inspect->add_option("--ss58-format", ss58_format, "SS58 format of the printed address")
      ->capture_default_str();

  auto* sign = app.add_subcommand("sign", "Sign a message with the key of a secret URI");
  sign->add_option("--uri", uri, "Secret URI (\"-\": stdin)")->required();
  sign->add_option("--message", message, "The message (UTF-8 text, or hex with --hex)")->required();
  sign->add_option("--crypto", crypto, "sr25519 or ed25519")->capture_default_str();
  sign->add_flag("--hex", is_hex, "--message is hex (an optional 0x prefix)");

  auto* verify = app.add_subcommand("verify", "Verify a signature; exit 0 if valid, 1 if not");
  verify->add_option("--address", address, "SS58 address of the signer (any format)")->required();
  verify->add_option("--message", message, "The message (UTF-8 text, or hex with --hex)")
      ->required();
  verify->add_option("--signature", signature, "0x + 128 hex digits")->required();
  verify->add_option("--crypto", crypto, "sr25519 or ed25519")->capture_default_str();
  verify->add_flag("--hex", is_hex, "--message is hex (an optional 0x prefix)");

  auto* ss58 = app.add_subcommand("ss58", "SS58 address encoding");
  ss58->require_subcommand(1);
  auto* decode = ss58->add_subcommand("decode", "Public key and format of an address");
  decode->add_option("address", address, "SS58 address")->required();
  auto* encode = ss58->add_subcommand("encode", "Address of a 32-byte public key");
  encode->add_option("--public-key", public_key, "0x + 64 hex digits")->required();
  encode->add_option("--format", ss58_format, "SS58 format, 0..16383")->capture_default_str();

  bt::cli::strict_unsigned(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return print({{"error", bt::cli::usage_message(app, e)}}, 2);
  }

  bt::init_crypto();
  if (*new_cold) {
    const bt::wallet w = wf.open();
    secret phrase(bt::generate_mnemonic(check_words(n_words)));
    const auto kp = bt::keypair::from_mnemonic(phrase.s);
    const int rc = create_coldkey(w, kp, no_password, overwrite);
    print_mnemonic(w, true, phrase.s);
    return rc;
  }
  if (*new_hot) {
    const bt::wallet w = wf.open();
    secret phrase(bt::generate_mnemonic(check_words(n_words)));
    const auto kp = bt::keypair::from_mnemonic(phrase.s);
    const int rc = create_hotkey(w, kp, overwrite);
    print_mnemonic(w, false, phrase.s);
    return rc;
  }
  if (*regen_cold) {
    const bt::wallet w = wf.open();
    return create_coldkey(w, keypair_from_mnemonic_flag(mnemonic), no_password, overwrite);
  }
  if (*regen_hot) {
    const bt::wallet w = wf.open();
    return create_hotkey(w, keypair_from_mnemonic_flag(mnemonic), overwrite);
  }
  if (*list) return cmd_list(wf);
  if (*show) return cmd_show(wf, decrypt);
  if (*inspect) return cmd_inspect(uri, crypto, ss58_format);
  if (*sign) return cmd_sign(uri, crypto, message, is_hex);
  if (*verify) return cmd_verify(address, message, signature, crypto, is_hex);
  if (*decode) return cmd_ss58_decode(address);
  if (*encode) return cmd_ss58_encode(public_key, ss58_format);
  return print({{"error", "no command"}}, 2);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const cli_error& e) {
    return print({{"error", e.message}}, 2);
  } catch (const std::exception& e) {
    return print({{"error", e.what()}}, 2);
  }
}
