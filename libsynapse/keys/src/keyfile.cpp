#include <bt/keyfile.hpp>

#include <bt/detail/text.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/ss58.hpp>

#include <sodium.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bt {
namespace {

constexpr std::string_view nacl_prefix = "$NACL";
constexpr std::size_t max_keyfile_bytes = 1 << 20;

bool starts_with(std::span<const std::uint8_t> data, std::string_view prefix) noexcept {
  return data.size() >= prefix.size() &&
         std::memcmp(data.data(), prefix.data(), prefix.size()) == 0;
}

error kf_error(key_errc e, std::string detail, std::string what = "keyfile") {
  return {make_error_code(e), std::move(what), std::move(detail)};
}

// JSON string escaping for the values we write (hex, SS58, mnemonic words): quotes, backslashes
// and control characters, so that even an unusual phrase yields valid JSON.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += detail::hex_digit(u >> 4);
      out += detail::hex_digit(u);
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_field(std::string& out, std::string_view key, std::string_view value) {
  out += out.size() > 1 ? "," : "";
  append_json_string(out, key);
  out += ':';
  append_json_string(out, value);
}

// Overwrites every string in a parsed document before it is freed (they may hold secrets).
void wipe_json(json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    sodium_memzero(s.data(), s.size());
  } else if (j.is_structured()) {
    for (auto& item : j) wipe_json(item);
  }
}

struct json_wiper {
  json& j;
  ~json_wiper() { wipe_json(j); }
};

std::string hex0x(std::span<const std::uint8_t> bytes) {
  return "0x" + to_hex(bytes);
}

// The public key a keyfile claims: publicKey, else accountId, else ss58Address; nullopt in
// `out` when it claims none. Returns false (err set) when a claim is malformed.
bool claimed_public(const json& doc, std::optional<public_key_bytes>& out, error& err) {
  out.reset();
  for (const char* key : {"publicKey", "accountId"}) {
    const auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) continue;
    auto bytes = from_hex(it->get_ref<const std::string&>());
    if (!bytes || bytes->size() != 32) {
      err = kf_error(key_errc::keyfile_invalid, std::string(key) + " is not 32 bytes of hex");
      return false;
    }
    out.emplace();
    std::copy(bytes->begin(), bytes->end(), out->begin());
    return true;
  }
  const auto it = doc.find("ss58Address");
  if (it != doc.end() && !it->is_null()) {
    std::error_code ec;
    const auto d = ss58::decode(it->get_ref<const std::string&>(), ec);
    if (!d) {
      err = kf_error(key_errc::keyfile_invalid, "ss58Address: " + ec.message());
      return false;
    }
    out = d->public_key;
  }
  return true;
}

const std::string* field(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return nullptr;
  return &it->get_ref<const std::string&>();
}

// secretSeed / privateKey: 32 bytes = a seed, 64 bytes = a secret key checked against the
// claimed public key.
std::optional<keypair> from_secret_field(const std::string& text, const char* key, const json& doc,
                                         crypto_type type, bool allow_seed, error& err) {
  auto bytes = from_hex(text);
  if (!bytes) {
    err = kf_error(key_errc::keyfile_invalid, std::string(key) + " is not hex");
    return std::nullopt;
  }
  struct wipe_vec {
    std::vector<std::uint8_t>& v;
    ~wipe_vec() { sodium_memzero(v.data(), v.size()); }
  } wipe{*bytes};
  if (allow_seed && bytes->size() == 32) {
    return keypair::from_seed(std::span<const std::uint8_t, 32>(bytes->data(), 32), type);
  }
  if (bytes->size() != 64) {
    err = kf_error(key_errc::keyfile_invalid, std::string(key) + " must be " +
                                                  (allow_seed ? "32 or " : "") + "64 bytes, not " +
                                                  std::to_string(bytes->size()));
    return std::nullopt;
  }
  std::optional<public_key_bytes> claimed;
  if (!claimed_public(doc, claimed, err)) return std::nullopt;
  const bool have_claim = claimed.has_value();
  auto kp = keypair::from_secret_key(*bytes, type, err, have_claim ? &*claimed : nullptr);
  if (!kp) {
    // With a claimed public key, from_secret_key fails when neither form matches it.
    if (have_claim) {
      err = kf_error(
          key_errc::keyfile_invalid,
          std::string(key) + " does not belong to the file's public key (" + err.message() + ")");
    } else {
      err.what = "keyfile " + std::string(key);
    }
    return std::nullopt;
  }
  if (have_claim && kp->public_key() != *claimed) {
    err = kf_error(key_errc::keyfile_invalid,
                   std::string(key) + " does not belong to the file's public key " +
                       "(neither the canonical nor the x8 secret key form matches)");
    return std::nullopt;
  }
  return kp;
}

}  // namespace

keyfile_encryption detect_keyfile_encryption(std::span<const std::uint8_t> data) noexcept {
  if (starts_with(data, nacl_prefix)) return keyfile_encryption::nacl;
  if (starts_with(data, "$ANSIBLE_VAULT")) return keyfile_encryption::ansible_vault;
  if (starts_with(data, "gAAAAA")) return keyfile_encryption::legacy_fernet;
  return keyfile_encryption::none;
}

std::string serialize_keyfile(const keypair& kp) {
  std::string out;
  out.reserve(1024);  // one allocation, so no stale copy of a secret is left in freed memory
  out += '{';
  const auto pub = hex0x(kp.public_key());
  append_field(out, "accountId", pub);
  append_field(out, "publicKey", pub);
  if (auto secret = kp.secret_key_bytes()) {
    std::string hex = hex0x(*secret);
    append_field(out, "privateKey", hex);
    sodium_memzero(hex.data(), hex.size());
    sodium_memzero(secret->data(), secret->size());
  }
  if (auto phrase = kp.mnemonic()) {
    append_field(out, "secretPhrase", *phrase);
    sodium_memzero(phrase->data(), phrase->size());
  }
  if (auto seed = kp.seed()) {
    std::string hex = hex0x(*seed);
    append_field(out, "secretSeed", hex);
    sodium_memzero(hex.data(), hex.size());
    sodium_memzero(seed->data(), seed->size());
  }
  append_field(out, "ss58Address", kp.ss58_address());
  out += '}';
  return out;
}

std::string serialize_public_keyfile(const keypair& kp) {
  std::string out = "{";
  const auto pub = hex0x(kp.public_key());
  append_field(out, "accountId", pub);
  append_field(out, "publicKey", pub);
  append_field(out, "ss58Address", kp.ss58_address());
  out += '}';
  return out;
}

std::optional<keypair> deserialize_keyfile(std::string_view text, error& err, crypto_type type) {
  err = {};
  init_crypto();
  json doc = json::parse(text, nullptr, false);
  json_wiper wiper{doc};
  if (doc.is_discarded() || !doc.is_object()) {
    err = kf_error(key_errc::keyfile_invalid, "not a JSON object (Failed to parse keyfile data)");
    return std::nullopt;
  }
  for (const auto& [key, value] : doc.items()) {
    if (!value.is_string() && !value.is_null()) {
      err = kf_error(key_errc::keyfile_invalid,
                     "value of \"" + key.substr(0, 64) + "\" is not a string or null");
      return std::nullopt;
    }
  }
  if (const auto* phrase = field(doc, "secretPhrase")) {
    auto kp = keypair::from_mnemonic(*phrase, {}, type, err);
    if (!kp) err.what = "keyfile secretPhrase";
    return kp;
  }
  if (const auto* seed = field(doc, "secretSeed"))
    return from_secret_field(*seed, "secretSeed", doc, type, true, err);
  if (const auto* priv = field(doc, "privateKey"))
    return from_secret_field(*priv, "privateKey", doc, type, false, err);
  if (const auto* address = field(doc, "ss58Address")) {
    auto kp = keypair::from_ss58(*address, type, err);
    if (!kp) err.what = "keyfile ss58Address";
    return kp;
  }
  err = kf_error(key_errc::keyfile_invalid,
                 "none of secretPhrase, secretSeed, privateKey or ss58Address is present");
  return std::nullopt;
}

keyfile_key::~keyfile_key() {
  sodium_memzero(bytes.data(), bytes.size());
}

std::optional<keyfile_key> derive_keyfile_key(std::string_view password, error& err,
                                              keyfile_kdf kdf) {
  err = {};
  init_crypto();
  static_assert(nacl_salt.size() == crypto_pwhash_SALTBYTES);
  keyfile_key key;
  if (crypto_pwhash(key.bytes.data(), key.bytes.size(), password.data(), password.size(),
                    nacl_salt.data(), kdf.opslimit, kdf.memlimit,
                    crypto_pwhash_ALG_ARGON2I13) != 0) {
    err =
        kf_error(key_errc::keyfile_io, "Argon2i key derivation failed (it needs " +
                                           std::to_string(kdf.memlimit >> 20) + " MiB of memory)");
    return std::nullopt;
  }
  return key;
}

std::vector<std::uint8_t> encrypt_keyfile_data(std::span<const std::uint8_t> plaintext,
                                               const keyfile_key& key) {
  init_crypto();
  const std::size_t head = nacl_prefix.size() + crypto_secretbox_NONCEBYTES;
  std::vector<std::uint8_t> out(head + crypto_secretbox_MACBYTES + plaintext.size());
  std::copy(nacl_prefix.begin(), nacl_prefix.end(), out.begin());
  std::uint8_t* nonce = out.data() + nacl_prefix.size();
  randombytes_buf(nonce, crypto_secretbox_NONCEBYTES);
  if (crypto_secretbox_easy(out.data() + head, plaintext.data(), plaintext.size(), nonce,
                            key.bytes.data()) != 0)
    throw std::runtime_error("crypto_secretbox_easy failed");
  return out;
}

std::optional<std::vector<std::uint8_t>> encrypt_keyfile_data(
    std::span<const std::uint8_t> plaintext, std::string_view password, error& err) {
  const auto key = derive_keyfile_key(password, err);
  if (!key) return std::nullopt;
  return encrypt_keyfile_data(plaintext, *key);
}

namespace {

// Format checks shared by both decrypt overloads; returns false with err set.
bool check_nacl_format(std::span<const std::uint8_t> data, error& err) {
  switch (detect_keyfile_encryption(data)) {
    case keyfile_encryption::nacl:
      break;
    case keyfile_encryption::ansible_vault:
      err = kf_error(
          key_errc::keyfile_invalid,
          "Ansible Vault keyfiles ($ANSIBLE_VAULT) are not supported; regenerate the key from its "
          "mnemonic, or re-encrypt it with btcli (which writes $NACL)");
      return false;
    case keyfile_encryption::legacy_fernet:
      err = kf_error(key_errc::keyfile_invalid,
                     "legacy Fernet keyfiles (gAAAAA..., bittensor <= 6) are not supported; "
                     "regenerate the key "
                     "from its mnemonic");
      return false;
    case keyfile_encryption::none:
      err = kf_error(key_errc::keyfile_invalid, "not encrypted ($NACL prefix missing)");
      return false;
  }
  if (data.size() < nacl_prefix.size() + crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES) {
    err = kf_error(key_errc::keyfile_invalid,
                   "truncated $NACL data (" + std::to_string(data.size()) + " bytes)");
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> decrypt_keyfile_data(std::span<const std::uint8_t> data,
                                                const keyfile_key& key, error& err) {
  err = {};
  init_crypto();
  if (!check_nacl_format(data, err)) return std::nullopt;
  const std::uint8_t* nonce = data.data() + nacl_prefix.size();
  const std::uint8_t* box = nonce + crypto_secretbox_NONCEBYTES;
  const std::size_t box_len = data.size() - nacl_prefix.size() - crypto_secretbox_NONCEBYTES;
  std::string plain(box_len - crypto_secretbox_MACBYTES, '\0');
  if (crypto_secretbox_open_easy(reinterpret_cast<std::uint8_t*>(plain.data()), box, box_len, nonce,
                                 key.bytes.data()) != 0) {
    err = kf_error(
        key_errc::keyfile_wrong_password,
        "the password does not open this keyfile (wrong password, or the file is corrupted)");
    return std::nullopt;
  }
  return plain;
}

std::optional<std::string> decrypt_keyfile_data(std::span<const std::uint8_t> data,
                                                std::string_view password, error& err) {
  err = {};
  if (!check_nacl_format(data, err)) return std::nullopt;
  const auto key = derive_keyfile_key(password, err);
  if (!key) return std::nullopt;
  return decrypt_keyfile_data(data, *key, err);
}

std::optional<keypair> keypair_from_keyfile_data(std::span<const std::uint8_t> data,
                                                 std::optional<std::string_view> password,
                                                 error& err, crypto_type type) {
  err = {};
  if (detect_keyfile_encryption(data) == keyfile_encryption::none) {
    return deserialize_keyfile({reinterpret_cast<const char*>(data.data()), data.size()}, err,
                               type);
  }
  if (!check_nacl_format(data, err)) return std::nullopt;
  if (!password) {
    err = kf_error(key_errc::keyfile_wrong_password,
                   "the keyfile is encrypted and no password was given");
    return std::nullopt;
  }
  auto plain = decrypt_keyfile_data(data, *password, err);
  if (!plain) return std::nullopt;
  auto kp = deserialize_keyfile(*plain, err, type);
  sodium_memzero(plain->data(), plain->size());
  return kp;
}

std::optional<std::vector<std::uint8_t>> read_keyfile_bytes(const std::filesystem::path& path,
                                                            error& err) {
  err = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    err = kf_error(e == ENOENT ? key_errc::keyfile_not_found : key_errc::keyfile_io,
                   std::strerror(e), path.string());
    return std::nullopt;
  }
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    err = kf_error(key_errc::keyfile_io, "not a regular file", path.string());
    return std::nullopt;
  }
  if (static_cast<std::uintmax_t>(st.st_size) > max_keyfile_bytes) {
    err = kf_error(key_errc::keyfile_invalid, "larger than 1 MiB: not a keyfile", path.string());
    return std::nullopt;
  }
  std::vector<std::uint8_t> out(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = kf_error(key_errc::keyfile_io, std::strerror(errno), path.string());
      sodium_memzero(out.data(), out.size());
      return std::nullopt;
    }
    if (n == 0) break;  // shrank while reading
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

namespace {

/// "0644": the permission bits as chmod takes them.
std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

/// "read", "change" or "read and change": what the group and other bits of `mode` allow.
std::string_view others_may(mode_t mode) {
  const bool read = (mode & (S_IRGRP | S_IROTH)) != 0, write = (mode & (S_IWGRP | S_IWOTH)) != 0;
  return read && write ? "read and change" : read ? "read" : "change";
}

}  // namespace

std::string keyfile_exposure(const std::filesystem::path& path) {
  struct stat file {};
  if (::stat(path.c_str(), &file) != 0 || !S_ISREG(file.st_mode)) return {};
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  struct stat folder {};
  const bool folder_open = ::stat(dir.c_str(), &folder) == 0 &&
                           (folder.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
                           (folder.st_mode & S_ISVTX) == 0;
  const bool file_open = (file.st_mode & (S_IRWXG | S_IRWXO)) != 0;
  if (!file_open && !folder_open) return {};
  std::string why, fix;
  if (file_open) {
    why = "mode " + octal_mode(file.st_mode) + " lets other users " +
          std::string(others_may(file.st_mode)) + " it";
    fix = "chmod 600 " + path.string();
  }
  if (folder_open) {
    why += (why.empty() ? "" : ", ") + std::string("its folder ") + dir.string() + " (mode " +
           octal_mode(folder.st_mode) + ") lets other users replace it";
    fix += (fix.empty() ? "" : " && ") + std::string("chmod 700 ") + dir.string();
  }
  return why + "; run: " + fix;
}

bool write_keyfile_bytes(const std::filesystem::path& path, std::span<const std::uint8_t> data,
                         bool overwrite, error& err) {
  err = {};
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmp = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  auto fail = [&](const std::string& what, int e) {
    err = kf_error(key_errc::keyfile_io, what + ": " + std::strerror(e), path.string());
    return false;
  };
  if (!overwrite && ::access(path.c_str(), F_OK) == 0) {
    err = kf_error(key_errc::keyfile_io, "already exists (pass overwrite to replace it)",
                   path.string());
    return false;
  }
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);  // mode 0600
  if (fd < 0) return fail("cannot create a temporary file", errno);
  bool ok = ::fchmod(fd, 0600) == 0;
  int e = ok ? 0 : errno;
  for (std::size_t done = 0; ok && done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      e = n < 0 ? errno : EIO;
    } else {
      done += static_cast<std::size_t>(n);
    }
  }
  if (ok && ::fsync(fd) != 0) ok = false, e = errno;
  if (::close(fd) != 0 && ok) ok = false, e = errno;
  if (!ok) {
    ::unlink(tmp.c_str());
    return fail("cannot write", e);
  }
  int r;
  if (overwrite) {
    r = ::rename(tmp.c_str(), path.c_str());
  } else {
    // link() fails with EEXIST if another writer got there first: no silent replacement.
    r = ::link(tmp.c_str(), path.c_str());
    if (r == 0) ::unlink(tmp.c_str());
  }
  if (r != 0) {
    e = errno;
    ::unlink(tmp.c_str());
    if (e == EEXIST) {
      err = kf_error(key_errc::keyfile_io, "already exists (pass overwrite to replace it)",
                     path.string());
      return false;
    }
    return fail("cannot move the new file into place", e);
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

}  // namespace bt
