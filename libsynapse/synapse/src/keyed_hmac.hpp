// HMAC-SHA-256 keyed once (RFC 2104 with a 32-byte key), for the MACs of a session (PROTOCOL 13):
// one per request and one per answer, all under the same two keys, so the key's two padded
// blocks, and a prefix every message starts with, are absorbed once per session instead of once
// per MAC. A MAC copies the two keyed states (bt::sha256_hasher: plain values on OpenSSL's
// SHA-256, with the CPU's SHA extensions), so it neither allocates nor fails; the result is
// libsodium's crypto_auth_hmacsha256 of prefix || message (tests/libsynapse/keyed_hmac_test.cpp).
#pragma once

#include <bt/sha256.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace bt::session_auth::detail {

class keyed_hmac {
 public:
  static constexpr std::size_t key_size = 32;
  using key_bytes = std::array<std::uint8_t, key_size>;
  using mac_bytes = sha256_digest;

  /// Keyed with `key`, with `prefix` absorbed: every MAC is then of prefix || message.
  keyed_hmac(const key_bytes& key, std::string_view prefix) noexcept;
  keyed_hmac(const keyed_hmac&) = delete;
  keyed_hmac& operator=(const keyed_hmac&) = delete;
  // The keyed states wipe themselves on destruction (sha256_hasher).

  /// HMAC-SHA-256(key, prefix || message). Thread-safe (the keyed states are only read).
  mac_bytes operator()(std::string_view message) const noexcept;

  /// Constant-time check of `mac` against the HMAC of prefix || message.
  bool ok(std::string_view message, const mac_bytes& mac) const noexcept;

 private:
  sha256_hasher inner_;  ///< SHA-256 after (key ^ ipad) || prefix
  sha256_hasher outer_;  ///< SHA-256 after (key ^ opad)
};

}  // namespace bt::session_auth::detail
