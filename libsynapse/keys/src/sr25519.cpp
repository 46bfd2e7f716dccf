#include <bt/sr25519.hpp>

#include <bt/key_error.hpp>
#include "merlin.hpp"
#include "ristretto_base_table.hpp"
#include "sr25519_parse.hpp"
#include "sr25519_point_verify.hpp"

#include <decaf/point_255.h>
#include <sodium.h>

#include <algorithm>
#include <cstring>

namespace bt::sr25519 {
namespace {

using internal::scalar32;

// The group order l = 2^252 + 27742317777372353535851937790883648493, little-endian.
constexpr scalar32 group_order = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                  0xa2, 0xde, 0xf9, 0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};

// s < l, comparing from the most significant byte. Variable time: used on public values
// (signatures) and on secret keys being loaded, whose canonicity is not a secret.
bool is_canonical_scalar(const std::uint8_t* s) noexcept {
  for (int i = 31; i >= 0; --i) {
    if (s[i] < group_order[i]) return true;
    if (s[i] > group_order[i]) return false;
  }
  return false;  // s == l
}

// 64 bytes (challenge or witness output) reduced mod l: Scalar::from_bytes_mod_order_wide.
scalar32 reduce_wide(std::array<std::uint8_t, 64>& wide) noexcept {
  scalar32 out;
  crypto_core_ristretto255_scalar_reduce(out.data(), wide.data());
  return out;
}

// x * B. libsodium reports -1 only when the product is the identity, whose encoding (32 zero
// bytes) it has written all the same; for the scalars used here (a fresh witness, s, a derivation
// tweak) that is either impossible in practice or a correct result, so the output is used as is.
scalar32 mul_base(const scalar32& x) noexcept {
  scalar32 out;
  if (crypto_scalarmult_ristretto255_base(out.data(), x.data()) != 0) out.fill(0);
  return out;
}

const bt::detail::transcript& substrate_signing_context() noexcept {
  static const bt::detail::transcript t = [] {
    bt::detail::transcript c("SigningContext");
    c.append_message("", substrate_context);
    return c;
  }();
  return t;
}

// signing_context(context).bytes(message)
bt::detail::transcript signing_transcript(std::string_view context,
                                          std::span<const std::uint8_t> message) noexcept {
  bt::detail::transcript t = context == substrate_context ? substrate_signing_context() : [&] {
    bt::detail::transcript c("SigningContext");
    c.append_message("", context);
    return c;
  }();
  t.append_message("sign-bytes", message);
  return t;
}

std::span<const std::uint8_t> no_bytes() noexcept {
  return {};
}

}  // namespace

secret_key::~secret_key() {
  sodium_memzero(scalar.data(), scalar.size());
  sodium_memzero(nonce.data(), nonce.size());
}

secret_key expand_mini_secret(std::span<const std::uint8_t, 32> mini) noexcept {
  std::array<std::uint8_t, crypto_hash_sha512_BYTES> h;
  crypto_hash_sha512(h.data(), mini.data(), mini.size());
  h[0] &= 248;
  h[31] &= 63;
  h[31] |= 64;
  secret_key sk;
  // Divide the clamped 256-bit little-endian integer by the cofactor 8. The result lies in
  // [2^251, 2^252), below l, so it is already canonical.
  std::uint8_t carry = 0;
  for (int i = 31; i >= 0; --i) {
    const std::uint8_t low = h[i] & 7;
    sk.scalar[i] = static_cast<std::uint8_t>((h[i] >> 3) | carry);
    carry = static_cast<std::uint8_t>(low << 5);
  }
  std::copy(h.begin() + 32, h.end(), sk.nonce.begin());
  sodium_memzero(h.data(), h.size());
  return sk;
}

public_key to_public(const secret_key& secret) noexcept {
  return mul_base(secret.scalar);
}

std::array<std::uint8_t, 64> to_bytes(const secret_key& secret) noexcept {
  std::array<std::uint8_t, 64> out;
  std::copy(secret.scalar.begin(), secret.scalar.end(), out.begin());
  std::copy(secret.nonce.begin(), secret.nonce.end(), out.begin() + 32);
  return out;
}

std::array<std::uint8_t, 64> to_ed25519_bytes(const secret_key& secret) noexcept {
  std::array<std::uint8_t, 64> out;
  // 8 * scalar as a 256-bit integer: scalar < l < 2^253, so nothing overflows.
  std::uint8_t carry = 0;
  for (int i = 0; i < 32; ++i) {
    const std::uint8_t high = secret.scalar[i] >> 5;
    out[i] = static_cast<std::uint8_t>((secret.scalar[i] << 3) | carry);
    carry = high;
  }
  std::copy(secret.nonce.begin(), secret.nonce.end(), out.begin() + 32);
  return out;
}

std::error_code from_bytes(std::span<const std::uint8_t> bytes, secret_key& out) noexcept {
  if (bytes.size() != 64 || !is_canonical_scalar(bytes.data())) return key_errc::invalid_secret_key;
  std::copy(bytes.begin(), bytes.begin() + 32, out.scalar.begin());
  std::copy(bytes.begin() + 32, bytes.end(), out.nonce.begin());
  return {};
}

std::error_code from_ed25519_bytes(std::span<const std::uint8_t> bytes, secret_key& out) noexcept {
  if (bytes.size() != 64) return key_errc::invalid_secret_key;
  std::array<std::uint8_t, 64> wide{};
  std::uint8_t carry = 0;
  for (int i = 31; i >= 0; --i) {
    const std::uint8_t low = bytes[i] & 7;
    wide[i] = static_cast<std::uint8_t>((bytes[i] >> 3) | carry);
    carry = static_cast<std::uint8_t>(low << 5);
  }
  out.scalar = reduce_wide(wide);
  sodium_memzero(wide.data(), wide.size());
  std::copy(bytes.begin() + 32, bytes.end(), out.nonce.begin());
  return {};
}

bool is_valid_public_key(std::span<const std::uint8_t, 32> pub) noexcept {
  // Bit 255 set is never canonical (RFC 9496; schnorrkel refuses it, and so does verify()), but
  // libsodium 1.0.18's decoder ignores that bit: refuse it here first, so that this function and
  // verify() agree on every key.
  if ((pub[31] & 0x80) != 0) return false;
  // libsodium's is_valid_point rejects the identity; schnorrkel accepts it.
  static constexpr std::array<std::uint8_t, 32> identity{};
  return crypto_core_ristretto255_is_valid_point(pub.data()) == 1 ||
         std::equal(pub.begin(), pub.end(), identity.begin());
}

signature sign(const secret_key& secret, const public_key& pub,
               std::span<const std::uint8_t> message, std::string_view context) noexcept {
  bt::detail::transcript t = signing_transcript(context, message);
  t.append_message("proto-name", "Schnorr-sig");
  t.append_message("sign:pk", pub);

  // r = witness_scalar("signing", [nonce]): a PRF of the transcript, the nonce and fresh
  // randomness.
  std::array<std::uint8_t, 64> wide;
  {
    auto builder = t.build_rng();
    builder.rekey_with_witness_bytes("signing", secret.nonce);
    auto rng = builder.finalize();
    rng.fill_bytes(wide);
  }
  scalar32 r = reduce_wide(wide);
  const scalar32 big_r = mul_base(r);
  t.append_message("sign:R", big_r);

  t.challenge_bytes("sign:c", wide);
  const scalar32 k = reduce_wide(wide);

  // s = k·a + r
  scalar32 s;
  crypto_core_ristretto255_scalar_mul(s.data(), k.data(), secret.scalar.data());
  crypto_core_ristretto255_scalar_add(s.data(), s.data(), r.data());
  sodium_memzero(r.data(), r.size());
  sodium_memzero(wide.data(), wide.size());

  signature sig;
  std::copy(big_r.begin(), big_r.end(), sig.begin());
  std::copy(s.begin(), s.end(), sig.begin() + 32);
  sig[63] |= 0x80;  // schnorrkel marker: s < 2^253 leaves the top bit free
  return sig;
}

namespace internal {

std::error_code parse_and_challenge(std::span<const std::uint8_t, 32> pub,
                                    std::span<const std::uint8_t> message,
                                    std::span<const std::uint8_t> sig, std::string_view context,
                                    scalar32& s, scalar32& k) noexcept {
  if (sig.size() != 64) return key_errc::invalid_signature;
  if ((sig[63] & 0x80) == 0) return key_errc::invalid_signature;  // NotMarkedSchnorrkel
  std::copy(sig.begin() + 32, sig.end(), s.begin());
  s[31] &= 0x7f;
  if (!is_canonical_scalar(s.data())) return key_errc::invalid_signature;  // ScalarFormatError

  bt::detail::transcript t = signing_transcript(context, message);
  t.append_message("proto-name", "Schnorr-sig");
  t.append_message("sign:pk", pub);
  t.append_message("sign:R", sig.first<32>());
  std::array<std::uint8_t, 64> wide;
  t.challenge_bytes("sign:c", wide);
  k = reduce_wide(wide);
  return {};
}

}  // namespace internal

namespace internal {

std::error_code signature_scalars(std::span<const std::uint8_t, 32> pub,
                                  std::span<const std::uint8_t> message,
                                  std::span<const std::uint8_t> sig, std::string_view context,
                                  decaf_255_scalar_t s, decaf_255_scalar_t minus_k) noexcept {
  scalar32 s_bytes;
  scalar32 k_bytes;
  if (const std::error_code ec = parse_and_challenge(pub, message, sig, context, s_bytes, k_bytes))
    return ec;
  // s < l was checked and k is reduced, so neither decode can reduce (fail).
  if (decaf_255_scalar_decode(s, s_bytes.data()) != DECAF_SUCCESS ||
      decaf_255_scalar_decode(minus_k, k_bytes.data()) != DECAF_SUCCESS)
    return key_errc::invalid_signature;                           // unreachable
  decaf_255_scalar_sub(minus_k, decaf_255_scalar_zero, minus_k);  // −k
  return {};
}

std::error_code compare_with_r(const decaf_255_point_t r_prime,
                               std::span<const std::uint8_t> sig) noexcept {
  // schnorrkel's test: compress(R') == R, byte for byte. An encoding produced by point_encode is
  // canonical, so equal bytes also prove R valid; only on a mismatch is R decoded, to report an
  // invalid R as invalid_signature exactly as the constant-time verifier does.
  std::array<std::uint8_t, 32> encoded;
  decaf_255_point_encode(encoded.data(), r_prime);
  return compare_encoding_with_r(encoded, sig);
}

std::error_code compare_encoding_with_r(const std::array<std::uint8_t, 32>& encoded,
                                        std::span<const std::uint8_t> sig) noexcept {
  const std::span<const std::uint8_t, 32> big_r = sig.first<32>();
  if (std::equal(encoded.begin(), encoded.end(), big_r.begin())) return {};
  decaf_255_point_t r;
  if (decaf_255_point_decode(r, big_r.data(), DECAF_TRUE) != DECAF_SUCCESS)
    return key_errc::invalid_signature;
  return key_errc::signature_mismatch;
}

std::error_code verify_decoded(std::span<const std::uint8_t, 32> pub, const decaf_255_point_t a,
                               const decaf_255_precomputed_s* a_table,
                               std::span<const std::uint8_t> message,
                               std::span<const std::uint8_t> sig,
                               std::string_view context) noexcept {
  decaf_255_scalar_t ds;
  decaf_255_scalar_t dk;  // −k
  if (const std::error_code ec = signature_scalars(pub, message, sig, context, ds, dk)) return ec;
  decaf_255_point_t r_prime;
  if (a_table != nullptr) {
    // Two fixed-base multiplications, which avoid the 253 doublings of the double-scalar one:
    // s·B from the process's table of B (about 5 µs) and −k·A from the key's comb (constant
    // time, which costs nothing here: about 11 µs).
    decaf_255_point_t minus_ka;
    base_multiply_public(r_prime, ds);
    decaf_255_precomputed_scalarmul(minus_ka, a_table, dk);
    decaf_255_point_add(r_prime, r_prime, minus_ka);
  } else {
    decaf_255_base_double_scalarmul_non_secret(r_prime, ds, a, dk);
  }
  return compare_with_r(r_prime, sig);
}

}  // namespace internal

std::error_code verify(std::span<const std::uint8_t, 32> pub, std::span<const std::uint8_t> message,
                       std::span<const std::uint8_t> sig, std::string_view context) noexcept {
  // Every input here is public (key, message, signature), so the group arithmetic may take
  // variable time: one double-scalar multiplication R' = s·B + (−k)·A (libdecaf's ristretto255,
  // the same group and encoding as libsodium's) instead of three constant-time libsodium calls.
  // The outcome, error code included, is that of detail::verify_constant_time for every input
  // but one class (tests/libsynapse/sr25519_verify_differential_test.cpp): an A or R with bit 255
  // set, which libsodium 1.0.18's decoder ignores, is refused here, as RFC 9496 and schnorrkel
  // (curve25519-dalek) refuse it.
  //
  // A: a canonical Ristretto255 encoding, the identity included (schnorrkel's PublicKey accepts
  // it). A malformed signature is reported before an invalid key, as schnorrkel does.
  decaf_255_point_t a;
  if (decaf_255_point_decode(a, pub.data(), DECAF_TRUE) != DECAF_SUCCESS) {
    scalar32 s;
    scalar32 k;
    if (const std::error_code ec = internal::parse_and_challenge(pub, message, sig, context, s, k))
      return ec;
    return key_errc::invalid_public_key;
  }
  return internal::verify_decoded(pub, a, nullptr, message, sig, context);
}

namespace detail {

std::error_code verify_constant_time(std::span<const std::uint8_t, 32> pub,
                                     std::span<const std::uint8_t> message,
                                     std::span<const std::uint8_t> sig,
                                     std::string_view context) noexcept {
  scalar32 s;
  scalar32 k;
  if (const std::error_code ec = internal::parse_and_challenge(pub, message, sig, context, s, k))
    return ec;
  const std::span<const std::uint8_t, 32> big_r = sig.first<32>();

  // schnorrkel checks compress(s·B − k·A) == R. We check the equivalent R + k·A == s·B, which
  // costs the same group operations and makes libsodium decode R for us, so that an invalid R
  // encoding is reported as such (a non-canonical R could never equal a compressed point anyway).
  const scalar32 sb = mul_base(s);
  scalar32 ka{};
  if (crypto_scalarmult_ristretto255(ka.data(), k.data(), pub.data()) != 0) {
    // Either A does not decode, or k·A is the identity (k = 0, or A is the identity, which
    // schnorrkel accepts as a public key); ka then holds the identity's encoding (zeros).
    if (!is_valid_public_key(pub)) return key_errc::invalid_public_key;
    ka.fill(0);
  }
  scalar32 sum;
  if (crypto_core_ristretto255_add(sum.data(), big_r.data(), ka.data()) != 0)
    return key_errc::invalid_signature;
  if (std::memcmp(sum.data(), sb.data(), 32) != 0) return key_errc::signature_mismatch;
  return {};
}

}  // namespace detail

mini_secret hard_derive_mini_secret(const secret_key& parent, const chain_code& cc) noexcept {
  bt::detail::transcript t("SchnorrRistrettoHDKD");
  t.append_message("sign-bytes", no_bytes());
  t.append_message("chain-code", cc);
  t.append_message("secret-key", parent.scalar);
  mini_secret out;
  t.challenge_bytes("HDKD-hard", out);
  return out;
}

secret_key derive_hard(const secret_key& parent, const chain_code& cc) noexcept {
  mini_secret mini = hard_derive_mini_secret(parent, cc);
  secret_key out = expand_mini_secret(mini);
  sodium_memzero(mini.data(), mini.size());
  return out;
}

namespace {

// derive_scalar_and_chaincode over derived_key_simple's transcript; leaves `t` for the nonce.
scalar32 soft_tweak(bt::detail::transcript& t, std::span<const std::uint8_t, 32> parent_pub,
                    const chain_code& cc, chain_code* next_cc) noexcept {
  t.append_message("sign-bytes", no_bytes());
  t.append_message("chain-code", cc);
  t.append_message("public-key", parent_pub);
  std::array<std::uint8_t, 64> wide;
  t.challenge_bytes("HDKD-scalar", wide);
  const scalar32 tweak = reduce_wide(wide);
  chain_code next;
  t.challenge_bytes("HDKD-chaincode", next);
  if (next_cc != nullptr) *next_cc = next;
  return tweak;
}

}  // namespace

secret_key derive_soft(const secret_key& parent, const public_key& parent_pub, const chain_code& cc,
                       chain_code* next_cc) noexcept {
  bt::detail::transcript t("SchnorrRistrettoHDKD");
  const scalar32 tweak = soft_tweak(t, parent_pub, cc, next_cc);
  secret_key out;
  crypto_core_ristretto255_scalar_add(out.scalar.data(), parent.scalar.data(), tweak.data());
  // witness_bytes("HDKD-nonce", [parent nonce, parent to_bytes()])
  std::array<std::uint8_t, 64> parent_bytes = to_bytes(parent);
  auto builder = t.build_rng();
  builder.rekey_with_witness_bytes("HDKD-nonce", parent.nonce);
  builder.rekey_with_witness_bytes("HDKD-nonce", parent_bytes);
  sodium_memzero(parent_bytes.data(), parent_bytes.size());
  auto rng = builder.finalize();
  rng.fill_bytes(out.nonce);
  return out;
}

std::error_code derive_soft_public(std::span<const std::uint8_t, 32> parent, const chain_code& cc,
                                   public_key& out, chain_code* next_cc) noexcept {
  bt::detail::transcript t("SchnorrRistrettoHDKD");
  chain_code next;
  const scalar32 tweak = soft_tweak(t, parent, cc, &next);
  const scalar32 tb = mul_base(tweak);
  public_key sum;
  if (crypto_core_ristretto255_add(sum.data(), parent.data(), tb.data()) != 0)
    return key_errc::invalid_public_key;
  out = sum;
  if (next_cc != nullptr) *next_cc = next;
  return {};
}

}  // namespace bt::sr25519
