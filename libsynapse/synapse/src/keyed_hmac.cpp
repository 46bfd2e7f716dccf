// HMAC-SHA-256 keyed once (see keyed_hmac.hpp).
#include "keyed_hmac.hpp"

#include <openssl/evp.h>

#include <memory>

namespace bt::session_auth::detail {
namespace {

constexpr std::size_t block_size = 64;  // SHA-256's

/// OpenSSL's SHA-256, fetched once (a fetch per MAC costs more than the MAC); null when no
/// provider has it.
const EVP_MD* openssl_sha256() noexcept {
  static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

struct ctx_free {
  void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
using ctx_ptr = std::unique_ptr<EVP_MD_CTX, ctx_free>;

/// A SHA-256 context that has absorbed `pad` and `prefix`; null on any OpenSSL failure.
ctx_ptr absorbed(const EVP_MD* md, const std::array<std::uint8_t, block_size>& pad,
                 std::string_view prefix) noexcept {
  ctx_ptr c(EVP_MD_CTX_new());
  if (!c || EVP_DigestInit_ex2(c.get(), md, nullptr) != 1 ||
      EVP_DigestUpdate(c.get(), pad.data(), pad.size()) != 1 ||
      EVP_DigestUpdate(c.get(), prefix.data(), prefix.size()) != 1)
    return nullptr;
  return c;
}

/// Finishes a copy of `keyed` with `data` appended; false on any OpenSSL failure.
bool finish_copy(EVP_MD_CTX* work, const EVP_MD_CTX* keyed, const std::uint8_t* data,
                 std::size_t size, std::uint8_t* out) noexcept {
  unsigned int n = 0;
  return EVP_MD_CTX_copy_ex(work, keyed) == 1 && EVP_DigestUpdate(work, data, size) == 1 &&
         EVP_DigestFinal_ex(work, out, &n) == 1 && n == crypto_auth_hmacsha256_BYTES;
}

}  // namespace

keyed_hmac::keyed_hmac(const key_bytes& key, std::string_view prefix) {
  crypto_auth_hmacsha256_init(&sodium_, key.data(), key.size());
  crypto_auth_hmacsha256_update(&sodium_, reinterpret_cast<const std::uint8_t*>(prefix.data()),
                                prefix.size());
  const EVP_MD* md = openssl_sha256();
  if (md == nullptr) return;
  // RFC 2104: a key no longer than the block is zero-padded to it, then xored with the pads.
  std::array<std::uint8_t, block_size> ipad{}, opad{};
  for (std::size_t i = 0; i < block_size; ++i) {
    const std::uint8_t k = i < key.size() ? key[i] : 0;
    ipad[i] = static_cast<std::uint8_t>(k ^ 0x36);
    opad[i] = static_cast<std::uint8_t>(k ^ 0x5c);
  }
  ctx_ptr inner = absorbed(md, ipad, prefix);
  ctx_ptr outer = absorbed(md, opad, {});
  sodium_memzero(ipad.data(), ipad.size());
  sodium_memzero(opad.data(), opad.size());
  if (!inner || !outer) return;
  inner_ = inner.release();
  outer_ = outer.release();
}

keyed_hmac::~keyed_hmac() {
  sodium_memzero(&sodium_, sizeof sodium_);
  EVP_MD_CTX_free(inner_);  // OpenSSL wipes a SHA-256 state when it frees it
  EVP_MD_CTX_free(outer_);
}

keyed_hmac::mac_bytes keyed_hmac::operator()(std::string_view message) const {
  const auto* data = reinterpret_cast<const std::uint8_t*>(message.data());
  mac_bytes mac{};
  if (inner_ != nullptr) {
    ctx_ptr work(EVP_MD_CTX_new());
    mac_bytes inner{};
    const bool done = work && finish_copy(work.get(), inner_, data, message.size(), inner.data()) &&
                      finish_copy(work.get(), outer_, inner.data(), inner.size(), mac.data());
    sodium_memzero(inner.data(), inner.size());
    if (done) return mac;
    // An OpenSSL failure (out of memory): the same MAC through libsodium.
  }
  crypto_auth_hmacsha256_state st = sodium_;
  crypto_auth_hmacsha256_update(&st, data, message.size());
  crypto_auth_hmacsha256_final(&st, mac.data());
  sodium_memzero(&st, sizeof st);
  return mac;
}

bool keyed_hmac::ok(std::string_view message, const mac_bytes& mac) const {
  const mac_bytes expected = (*this)(message);
  return sodium_memcmp(expected.data(), mac.data(), mac.size()) == 0;
}

}  // namespace bt::session_auth::detail
