// ed25519 (RFC 8032, pure Ed25519) through libsodium, with the shape of sr25519.hpp. Substrate
// calls the 32-byte RFC 8032 private key the seed. Not usable for Bittensor hotkeys (PROTOCOL
// 9.3); provided for coldkey tooling and completeness.
//
// All functions expect libsodium to be initialised (bt::init_crypto()). None throws.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <system_error>

namespace bt::ed25519 {

using public_key = std::array<std::uint8_t, 32>;
using signature = std::array<std::uint8_t, 64>;
using seed = std::array<std::uint8_t, 32>;

/// libsodium's 64-byte secret key: seed || public key. Wiped on destruction.
struct secret_key {
  std::array<std::uint8_t, 64> bytes{};

  secret_key() = default;
  secret_key(const secret_key&) = default;
  secret_key& operator=(const secret_key&) = default;
  ~secret_key();

  std::span<const std::uint8_t, 32> seed_part() const noexcept {
    return std::span(bytes).first<32>();
  }
  std::span<const std::uint8_t, 32> public_part() const noexcept {
    return std::span(bytes).last<32>();
  }
};

/// crypto_sign_seed_keypair.
secret_key from_seed(std::span<const std::uint8_t, 32> seed) noexcept;
/// A 64-byte seed || public key; invalid_secret_key on a wrong length or when the public half is
/// not the seed's public key.
std::error_code from_bytes(std::span<const std::uint8_t> bytes, secret_key& out) noexcept;

/// Deterministic RFC 8032 signature (crypto_sign_detached).
signature sign(const secret_key& secret, std::span<const std::uint8_t> message) noexcept;

/// crypto_sign_verify_detached (libsodium's strict rules: canonical s, canonical non-small-order
/// A and R). Returns {} when valid, otherwise, checked in this order: invalid_signature (length
/// != 64, s >= l), invalid_public_key (A not a canonical point of the prime-order subgroup),
/// invalid_signature (R likewise) or signature_mismatch (everything else libsodium rejects).
/// The reason is worked out only after libsodium has rejected, so a valid signature costs exactly
/// one libsodium verification.
std::error_code verify(std::span<const std::uint8_t, 32> pub, std::span<const std::uint8_t> message,
                       std::span<const std::uint8_t> signature) noexcept;

}  // namespace bt::ed25519
