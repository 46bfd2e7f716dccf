// bt::sr25519::verify (variable-time, libdecaf) against detail::verify_constant_time (the previous
// verifier, libsodium's constant-time calls): the same result, error code included, for valid
// signatures, tampered messages, signatures and keys, non-canonical encodings of R, A and s,
// the identity and the Edwards torsion encodings, and random bytes. Bounded: about 2,200 inputs,
// each verified twice (well under a second in a Debug build), from a fixed seed so that a failure
// reproduces. The one difference allowed, bit 255 of A or R, is explained at check_same.
#include <bt/sr25519.hpp>

#include <bt/hex.hpp>
#include <bt/key_error.hpp>
#include <bt/keypair.hpp>

#include <sodium.h>
#include <catch2/catch.hpp>
#include <support/sr25519_encodings.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using bt::test::add_256;
using bt::test::bytes32;
using bt::test::edge_encodings;
using bt::test::group_l;
using bt::test::non_canonical_variants;
using bt::test::small_256;
using bt::test::sub_256;
using bt::test::with_r;
using bt::test::with_s;

struct outcome_counts {
  std::map<std::string, int> by_code;
  int compared = 0;
  int high_bit_refusals = 0;  // inputs where the reference accepted bit 255 (see check_same)
};

std::string name_of(std::error_code ec) {
  return ec ? ec.message() : std::string("valid");
}

bool well_formed(const std::array<std::uint8_t, 64>& sig) {
  if ((sig[63] & 0x80) == 0) return false;
  for (int i = 31; i >= 0; --i) {
    const std::uint8_t b =
        i == 31 ? static_cast<std::uint8_t>(sig[63] & 0x7f) : sig[32 + static_cast<std::size_t>(i)];
    if (b != group_l[static_cast<std::size_t>(i)]) return b < group_l[static_cast<std::size_t>(i)];
  }
  return false;
}

// Verifies with both and requires the same result; tallies it. The one permitted difference:
// libsodium 1.0.18's Ristretto255 decoder ignores bit 255 of an encoding, so the reference
// treats A or R with that bit set as the point with it cleared; RFC 9496 and schnorrkel
// (curve25519-dalek) refuse such an encoding, and so does verify(): A with bit 255 set is
// invalid_public_key, R with bit 255 set (A valid) invalid_signature. Everything else must match.
void check_same(const bytes32& pub, const std::vector<std::uint8_t>& msg,
                const std::array<std::uint8_t, 64>& sig, std::string_view context,
                outcome_counts& counts, const char* what) {
  const std::error_code fast = bt::sr25519::verify(pub, msg, sig, context);
  const std::error_code reference =
      bt::sr25519::detail::verify_constant_time(pub, msg, sig, context);
  ++counts.compared;
  ++counts.by_code[name_of(fast)];
  if (fast == reference) return;
  INFO(what << ": pub " << bt::to_hex(pub) << " sig " << bt::to_hex(sig) << " msg "
            << bt::to_hex(msg) << " context " << context << "; fast: " << name_of(fast)
            << ", reference: " << name_of(reference));
  const bool reference_accepts_a = reference != bt::key_errc::invalid_public_key;
  const bool high_a = (pub[31] & 0x80) != 0;
  const bool high_r = (sig[31] & 0x80) != 0;
  const bool permitted = well_formed(sig) && reference_accepts_a &&
                         ((high_a && fast == bt::key_errc::invalid_public_key) ||
                          (!high_a && high_r && fast == bt::key_errc::invalid_signature));
  CHECK(permitted);
  ++counts.high_bit_refusals;
}

}  // namespace

TEST_CASE("sr25519 verify agrees with the constant-time reference verifier on every input class",
          "[sr25519][differential]") {
  bt::init_crypto();
  std::mt19937_64 rng(0x5eed'17'2026ULL);
  const auto rand_bytes = [&](std::uint8_t* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(rng());
  };
  outcome_counts counts;
  const std::vector<bytes32> edges = edge_encodings();
  constexpr int rounds = 80;

  for (int round = 0; round < rounds; ++round) {
    bt::sr25519::mini_secret mini{};
    rand_bytes(mini.data(), mini.size());
    const auto sk = bt::sr25519::expand_mini_secret(mini);
    const auto pub = bt::sr25519::to_public(sk);
    std::vector<std::uint8_t> msg(rng() % 200);
    rand_bytes(msg.data(), msg.size());
    const std::string_view context =
        round % 7 == 0 ? std::string_view("other-context") : bt::sr25519::substrate_context;
    const auto sig = bt::sr25519::sign(sk, pub, msg, context);
    bytes32 r{};
    std::copy(sig.begin(), sig.begin() + 32, r.begin());
    bytes32 s{};
    std::copy(sig.begin() + 32, sig.end(), s.begin());
    s[31] &= 0x7f;

    // Valid, and the fast verifier must accept it on its own too.
    REQUIRE_FALSE(bt::sr25519::verify(pub, msg, sig, context));
    check_same(pub, msg, sig, context, counts, "valid");

    // One flipped bit in the message, the signature and the key (a few each).
    for (int j = 0; j < 3; ++j) {
      if (!msg.empty()) {
        auto m = msg;
        m[rng() % m.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        check_same(pub, m, sig, context, counts, "message bit");
      }
      auto g = sig;
      g[rng() % 64] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      check_same(pub, msg, g, context, counts, "signature bit");
      auto p = pub;
      p[rng() % 32] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      check_same(p, msg, sig, context, counts, "key bit");
    }

    // Non-canonical encodings of R and of A (the same points, or no point at all).
    for (const bytes32& v : non_canonical_variants(r))
      check_same(pub, msg, with_r(sig, v), context, counts, "non-canonical R");
    for (const bytes32& v : non_canonical_variants(pub))
      check_same(v, msg, sig, context, counts, "non-canonical A");

    // s: s + l (the same scalar, unreduced), l, l - 1, s + 1, and the largest value the marker
    // leaves (2^255 - 1); and the marker missing.
    check_same(pub, msg, with_s(sig, add_256(s, group_l)), context, counts, "s + l");
    check_same(pub, msg, with_s(sig, group_l), context, counts, "s = l");
    check_same(pub, msg, with_s(sig, sub_256(group_l, small_256(1))), context, counts, "s = l - 1");
    check_same(pub, msg, with_s(sig, add_256(s, small_256(1))), context, counts, "s + 1");
    bytes32 top{};
    top.fill(0xff);
    top[31] = 0x7f;
    check_same(pub, msg, with_s(sig, top), context, counts, "s = 2^255 - 1");
    auto unmarked = sig;
    unmarked[63] &= 0x7f;
    check_same(pub, msg, unmarked, context, counts, "marker missing");

    // Edge encodings (identity, torsion, small field elements) as A and as R.
    const bytes32& edge = edges[static_cast<std::size_t>(round) % edges.size()];
    check_same(edge, msg, sig, context, counts, "edge A");
    check_same(pub, msg, with_r(sig, edge), context, counts, "edge R");

    // Random bytes as A and as R.
    bytes32 junk{};
    rand_bytes(junk.data(), junk.size());
    check_same(junk, msg, sig, context, counts, "random A");
    check_same(pub, msg, with_r(sig, junk), context, counts, "random R");
  }

  // The identity public key, which schnorrkel (and so both verifiers) accepts: with A = 0 the
  // equation is s·B == R whatever the message, so (R = s·B, s) verifies; R = 0 with s = 0 too.
  for (int j = 0; j < 40; ++j) {
    const bytes32 identity{};
    std::vector<std::uint8_t> msg(rng() % 64);
    rand_bytes(msg.data(), msg.size());
    bytes32 s{};
    crypto_core_ristretto255_scalar_random(s.data());
    bytes32 r{};
    REQUIRE(crypto_scalarmult_ristretto255_base(r.data(), s.data()) == 0);
    std::array<std::uint8_t, 64> sig{};
    sig = with_s(with_r(sig, r), s);
    REQUIRE_FALSE(bt::sr25519::verify(identity, msg, sig));
    check_same(identity, msg, sig, bt::sr25519::substrate_context, counts, "identity A");
    check_same(identity, msg, with_s(with_r(sig, identity), bytes32{}),
               bt::sr25519::substrate_context, counts, "identity A, R, s = 0");
    // Every edge encoding as A with this signature, and each as R with A = identity.
    check_same(edges[static_cast<std::size_t>(j) % edges.size()], msg, sig,
               bt::sr25519::substrate_context, counts, "edge A, forged");
    check_same(identity, msg, with_r(sig, edges[static_cast<std::size_t>(j) % edges.size()]),
               bt::sr25519::substrate_context, counts, "identity A, edge R");
  }

  // Every class of outcome was reached, so that agreement is not vacuous.
  INFO("compared " << counts.compared << ", bit-255 refusals " << counts.high_bit_refusals);
  CHECK(counts.compared >= 2000);
  CHECK(counts.by_code["valid"] >= rounds + 40);
  CHECK(counts.by_code[name_of(make_error_code(bt::key_errc::signature_mismatch))] >= 100);
  CHECK(counts.by_code[name_of(make_error_code(bt::key_errc::invalid_signature))] >= 100);
  CHECK(counts.by_code[name_of(make_error_code(bt::key_errc::invalid_public_key))] >= 100);
}

TEST_CASE("sr25519 verify refuses A and R encodings with bit 255 set, as schnorrkel does",
          "[sr25519][differential]") {
  // RFC 9496 and curve25519-dalek require a canonical field element (< p < 2^255); the encoding
  // with bit 255 set is another byte string for the same signature (malleability).
  bt::init_crypto();
  bt::sr25519::mini_secret mini{};
  mini.fill(7);
  const auto sk = bt::sr25519::expand_mini_secret(mini);
  const auto pub = bt::sr25519::to_public(sk);
  const std::vector<std::uint8_t> msg = {'h', 'i'};
  const auto sig = bt::sr25519::sign(sk, pub, msg);
  REQUIRE_FALSE(bt::sr25519::verify(pub, msg, sig));
  auto high_r = sig;
  high_r[31] |= 0x80;
  CHECK(bt::sr25519::verify(pub, msg, high_r) == bt::key_errc::invalid_signature);
  auto high_a = pub;
  high_a[31] |= 0x80;
  CHECK(bt::sr25519::verify(high_a, msg, sig) == bt::key_errc::invalid_public_key);
  const bytes32 identity_high = [] {
    bytes32 b{};
    b[31] = 0x80;
    return b;
  }();
  CHECK(bt::sr25519::verify(identity_high, msg, sig) == bt::key_errc::invalid_public_key);
}
