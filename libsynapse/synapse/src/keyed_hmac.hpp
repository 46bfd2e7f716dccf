// HMAC-SHA-256 keyed once (RFC 2104 with a 32-byte key), for the MACs of a session (PROTOCOL 13):
// one per request and one per answer, all under the same two keys, so the key's two padded
// blocks, and a prefix every message starts with, are absorbed once per session instead of once
// per MAC. The hashing runs on OpenSSL's SHA-256, which uses the CPU's SHA extensions where it
// has them; when OpenSSL cannot provide SHA-256, on libsodium's (the same function: the MAC is
// the same either way, tests/libsynapse/keyed_hmac_test.cpp).
#pragma once

#include <sodium.h>

#include <array>
#include <cstdint>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace bt::session_auth::detail {

class keyed_hmac {
 public:
  static constexpr std::size_t key_size = crypto_auth_hmacsha256_KEYBYTES;  // 32
  using key_bytes = std::array<std::uint8_t, key_size>;
  using mac_bytes = std::array<std::uint8_t, crypto_auth_hmacsha256_BYTES>;

  /// Keyed with `key`, with `prefix` absorbed: every MAC is then of prefix || message.
  keyed_hmac(const key_bytes& key, std::string_view prefix);
  keyed_hmac(const keyed_hmac&) = delete;
  keyed_hmac& operator=(const keyed_hmac&) = delete;
  /// Wipes the keyed states.
  ~keyed_hmac();

  /// HMAC-SHA-256(key, prefix || message). Thread-safe (the keyed states are only read).
  mac_bytes operator()(std::string_view message) const;

  /// Constant-time check of `mac` against the HMAC of prefix || message.
  bool ok(std::string_view message, const mac_bytes& mac) const;

  /// Whether OpenSSL hashes (false: libsodium does).
  bool uses_openssl() const noexcept { return inner_ != nullptr; }

 private:
  crypto_auth_hmacsha256_state sodium_{};  ///< used when OpenSSL's contexts are null
  evp_md_ctx_st* inner_ = nullptr;         ///< SHA-256 after (key ^ ipad) || prefix
  evp_md_ctx_st* outer_ = nullptr;         ///< SHA-256 after (key ^ opad)
};

}  // namespace bt::session_auth::detail
