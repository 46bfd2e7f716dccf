#include <bt/ed25519.hpp>

#include <bt/key_error.hpp>

#include <sodium.h>

#include <algorithm>

namespace bt::ed25519 {
namespace {

constexpr std::uint8_t group_order[32] = {
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};

bool is_canonical_scalar(const std::uint8_t* s) noexcept {
  for (int i = 31; i >= 0; --i) {
    if (s[i] < group_order[i]) return true;
    if (s[i] > group_order[i]) return false;
  }
  return false;
}

}  // namespace

secret_key::~secret_key() {
  sodium_memzero(bytes.data(), bytes.size());
}

secret_key from_seed(std::span<const std::uint8_t, 32> seed) noexcept {
  secret_key sk;
  public_key pk;
  // Cannot fail for a 32-byte seed (libsodium always returns 0 here).
  (void)crypto_sign_seed_keypair(pk.data(), sk.bytes.data(), seed.data());
  return sk;
}

std::error_code from_bytes(std::span<const std::uint8_t> bytes, secret_key& out) noexcept {
  if (bytes.size() != 64) return key_errc::invalid_secret_key;
  secret_key sk = from_seed(bytes.first<32>());
  if (!std::equal(sk.bytes.begin() + 32, sk.bytes.end(), bytes.begin() + 32))
    return key_errc::invalid_secret_key;
  out = sk;
  return {};
}

signature sign(const secret_key& secret, std::span<const std::uint8_t> message) noexcept {
  signature sig;
  (void)crypto_sign_detached(sig.data(), nullptr, message.data(), message.size(),
                             secret.bytes.data());
  return sig;
}

std::error_code verify(std::span<const std::uint8_t, 32> pub, std::span<const std::uint8_t> message,
                       std::span<const std::uint8_t> sig) noexcept {
  if (sig.size() != 64) return key_errc::invalid_signature;
  if (crypto_sign_verify_detached(sig.data(), message.data(), message.size(), pub.data()) == 0)
    return {};
  // Rejected: say why. libsodium refuses s >= l (which covers the high bits of s), a small-order
  // or undecodable R, and a non-canonical, small-order or undecodable A; everything else is an
  // equation that does not hold. crypto_core_ed25519_is_valid_point is stricter than those rules
  // (it also wants the prime-order subgroup), which only matters for the reason given here: a
  // mixed-order A or R that libsodium rejected is reported as invalid rather than mismatched.
  if (!is_canonical_scalar(sig.data() + 32)) return key_errc::invalid_signature;
  if (crypto_core_ed25519_is_valid_point(pub.data()) != 1) return key_errc::invalid_public_key;
  if (crypto_core_ed25519_is_valid_point(sig.data()) != 1) return key_errc::invalid_signature;
  return key_errc::signature_mismatch;
}

}  // namespace bt::ed25519
