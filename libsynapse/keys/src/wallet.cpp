#include <bt/wallet.hpp>

#include <bt/keyfile.hpp>

#include <sodium.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace bt {
namespace {

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

void check_component(std::string_view name, const char* what) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    throw std::invalid_argument(std::string(what) + " must be a single file name, not \"" +
                                std::string(name) + "\"");
}

struct secret_string {
  std::string s;
  ~secret_string() { sodium_memzero(s.data(), s.size()); }
};

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::string default_wallet_path() {
  return env_or("BT_WALLET_PATH", std::string(builtin_wallet_path));
}
std::string default_wallet_name() {
  return env_or("BT_WALLET_NAME", "default");
}
std::string default_wallet_hotkey() {
  return env_or("BT_WALLET_HOTKEY", "default");
}

wallet_config wallet_config::from_env() {
  return wallet_config{};
}

std::filesystem::path expand_user(std::string_view path) {
  if (path.empty() || path[0] != '~') return std::filesystem::path(path);
  const std::size_t slash = path.find('/');
  const std::string_view user =
      path.substr(1, slash == std::string_view::npos ? std::string_view::npos : slash - 1);
  std::string home;
  if (user.empty()) {
    if (const char* h = std::getenv("HOME"); h && *h) {
      home = h;
    } else if (const passwd* pw = ::getpwuid(::getuid())) {
      home = pw->pw_dir;
    }
  } else if (const passwd* pw = ::getpwnam(std::string(user).c_str())) {
    home = pw->pw_dir;
  }
  if (home.empty()) return std::filesystem::path(path);  // as Python: left unexpanded
  if (slash == std::string_view::npos) return std::filesystem::path(home);
  // Python strips a trailing '/' from the home directory before joining.
  while (home.size() > 1 && home.back() == '/') home.pop_back();
  return std::filesystem::path(home + std::string(path.substr(slash)));
}

wallet::wallet(wallet_config config) : config_(std::move(config)) {
  check_component(config_.name, "wallet name");
  check_component(config_.hotkey, "hotkey name");
  dir_ = expand_user(config_.path) / config_.name;
}

std::filesystem::path wallet::hotkey_path(std::string_view hotkey) const {
  check_component(hotkey, "hotkey name");
  return dir_ / "hotkeys" / std::string(hotkey);
}

std::filesystem::path wallet::hotkeypub_path(std::string_view hotkey) const {
  check_component(hotkey, "hotkey name");
  return dir_ / "hotkeys" / (std::string(hotkey) + "pub.txt");
}

std::optional<keypair> wallet::load_hotkey(error& err,
                                           std::optional<std::string_view> password) const {
  auto data = read_keyfile_bytes(hotkey_path(), err);
  if (!data) return std::nullopt;
  auto kp = keypair_from_keyfile_data(*data, password, err);
  sodium_memzero(data->data(), data->size());
  if (!kp && err.what.rfind("keyfile", 0) == 0) err.what = hotkey_path().string();
  return kp;
}

keypair wallet::load_hotkey() const {
  error err;
  auto kp = load_hotkey(err);
  if (!kp) throw std::system_error(err.code, err.message());
  return std::move(*kp);
}

std::optional<keypair> wallet::load_coldkeypub(error& err) const {
  auto data = read_keyfile_bytes(coldkeypub_path(), err);
  if (!data) return std::nullopt;
  if (is_keyfile_encrypted(*data)) {
    err = {make_error_code(key_errc::keyfile_invalid), coldkeypub_path().string(),
           "coldkeypub.txt must not be encrypted"};
    return std::nullopt;
  }
  auto kp = keypair_from_keyfile_data(*data, std::nullopt, err);
  if (!kp) err.what = coldkeypub_path().string();
  return kp;
}

std::optional<std::string> wallet::coldkeypub_ss58(error& err) const {
  auto kp = load_coldkeypub(err);
  if (!kp) return std::nullopt;
  return kp->ss58_address();
}

std::optional<bool> wallet::coldkey_encrypted(error& err) const {
  auto data = read_keyfile_bytes(coldkey_path(), err);
  if (!data) return std::nullopt;
  const bool enc = is_keyfile_encrypted(*data);
  sodium_memzero(data->data(), data->size());
  return enc;
}

std::optional<keypair> wallet::load_coldkey(std::optional<std::string_view> password,
                                            error& err) const {
  auto data = read_keyfile_bytes(coldkey_path(), err);
  if (!data) return std::nullopt;
  auto kp = keypair_from_keyfile_data(*data, password, err);
  sodium_memzero(data->data(), data->size());
  if (!kp && err.what.rfind("keyfile", 0) == 0) err.what = coldkey_path().string();
  return kp;
}

std::vector<std::string> wallet::hotkey_names() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "hotkeys", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (name.size() >= 7 && name.compare(name.size() - 7, 7, "pub.txt") == 0) continue;
    if (!entry.is_regular_file(ec)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool wallet::ensure_directory(const std::filesystem::path& dir, error& err) const {
  // Create each missing component with mode 0700 (keys live below; other users have no business
  // listing them). Existing directories are left as they are.
  std::filesystem::path p;
  for (const auto& part : dir) {
    p /= part;
    if (p.empty() || p == p.root_path()) continue;
    if (::mkdir(p.c_str(), 0700) == 0) {
      ::chmod(p.c_str(), 0700);  // regardless of the umask
      continue;
    }
    const int e = errno;
    struct stat st {};
    if (e == EEXIST && ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    err = {make_error_code(key_errc::keyfile_io), p.string(),
           std::string("cannot create directory: ") + std::strerror(e == EEXIST ? ENOTDIR : e)};
    return false;
  }
  return true;
}

bool wallet::write_coldkey(const keypair& kp, std::optional<std::string_view> password,
                           bool overwrite, error& err) const {
  return write_key_pair("coldkey", dir_, coldkey_path(), coldkeypub_path(), kp, password, overwrite,
                        err);
}

bool wallet::write_coldkeypub(const keypair& kp, bool overwrite, error& err) const {
  err = {};
  if (!ensure_directory(dir_, err)) return false;
  return write_keyfile_bytes(coldkeypub_path(), bytes_of(serialize_public_keyfile(kp)), overwrite,
                             err);
}

bool wallet::write_hotkey(const keypair& kp, bool overwrite, error& err,
                          std::optional<std::string_view> password) const {
  return write_key_pair("hotkey", dir_ / "hotkeys", hotkey_path(), hotkeypub_path(), kp, password,
                        overwrite, err);
}

bool wallet::write_key_pair(std::string_view role, const std::filesystem::path& dir,
                            const std::filesystem::path& secret_path,
                            const std::filesystem::path& public_path, const keypair& kp,
                            std::optional<std::string_view> password, bool overwrite,
                            error& err) const {
  err = {};
  if (!kp.has_secret()) {
    err = {make_error_code(key_errc::invalid_secret_key), std::string(role),
           "a public-only keypair cannot be a " + std::string(role)};
    return false;
  }
  if (!ensure_directory(dir, err)) return false;
  if (!overwrite) {
    for (const auto& p : {secret_path, public_path}) {
      if (::access(p.c_str(), F_OK) == 0) {
        err = {make_error_code(key_errc::keyfile_io), p.string(),
               "already exists (use overwrite to replace it)"};
        return false;
      }
    }
  }
  secret_string plain{serialize_keyfile(kp)};
  bool ok;
  if (password) {
    auto enc = encrypt_keyfile_data(bytes_of(plain.s), *password, err);
    if (!enc) return false;
    ok = write_keyfile_bytes(secret_path, *enc, overwrite, err);
  } else {
    ok = write_keyfile_bytes(secret_path, bytes_of(plain.s), overwrite, err);
  }
  return ok &&
         write_keyfile_bytes(public_path, bytes_of(serialize_public_keyfile(kp)), overwrite, err);
}

std::vector<std::string> list_wallets(std::string_view wallet_path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(expand_user(wallet_path), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_directory(ec)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace bt
