#include "merlin.hpp"

#include <bt/hex.hpp>
#include <bt/keypair.hpp>
#include "strobe.hpp"

#include <catch2/catch.hpp>
#include <support/bytes.hpp>

#include <array>
#include <string_view>
#include <vector>

using bt::test::bytes_of;

// merlin 3.0 src/strobe.rs test_conformance (checked there against strobe-rs); the outputs are
// the published values of that test.
TEST_CASE("strobe128 matches merlin's STROBE conformance test", "[merlin]") {
  bt::detail::strobe128 s(bytes_of("Conformance Test Protocol"));
  const std::vector<std::uint8_t> msg(1024, 99);
  s.meta_ad(bytes_of("ms"), false);
  s.meta_ad(bytes_of("g"), true);
  s.ad(msg, false);

  std::array<std::uint8_t, 32> prf{};
  s.meta_ad(bytes_of("prf"), false);
  s.prf(prf, false);
  CHECK(bt::to_hex(prf) == "b48e645ca17c667fd5206ba57a6a228d72d8e1903814d3f17f622996d7cfefb0");

  s.meta_ad(bytes_of("key"), false);
  s.key(prf, false);
  s.meta_ad(bytes_of("prf"), false);
  s.prf(prf, false);
  CHECK(bt::to_hex(prf) == "07e45cce8078cee259e3e375bb85d75610e2d1e1201c5f645045a194edd49ff8");
}

// merlin src/transcript.rs equivalence_simple: the published test vector.
TEST_CASE("merlin transcript matches the simple test vector", "[merlin]") {
  bt::detail::transcript t("test protocol");
  t.append_message("some label", "some data");
  std::array<std::uint8_t, 32> c{};
  t.challenge_bytes("challenge", c);
  CHECK(bt::to_hex(c) == "d5a21972d0d5fe320c0d263fac7fffb8145aa640af6e9bca177c03c7efcf0615");
}

// merlin equivalence_complex: long messages wrap the sponge many times.
TEST_CASE("merlin transcript matches the complex test vector", "[merlin]") {
  bt::detail::transcript t("test protocol");
  t.append_message("step1", "some data");
  const std::vector<std::uint8_t> data(1024, 99);
  std::array<std::uint8_t, 32> c{};
  for (int i = 0; i < 32; ++i) {
    t.challenge_bytes("challenge", c);
    t.append_message("bigdata", data);
    t.append_message("challengedata", c);
  }
  CHECK(bt::to_hex(c) == "a8c933f54fae76e3f9bea93648c1308e7dfa2152dd51674ff3ca438351cf003c");
}

TEST_CASE("a copied transcript forks independently", "[merlin]") {
  bt::detail::transcript t("fork");
  t.append_message("a", "x");
  bt::detail::transcript u = t;
  std::array<std::uint8_t, 16> ct{}, cu{};
  t.challenge_bytes("c", ct);
  u.challenge_bytes("c", cu);
  CHECK(ct == cu);
  t.append_message("b", "1");
  u.append_message("b", "2");
  t.challenge_bytes("c", ct);
  u.challenge_bytes("c", cu);
  CHECK(ct != cu);
}

// merlin transcript_rng_is_bound_to_transcript_and_witnesses, with fixed external randomness.
TEST_CASE("the witness RNG is bound to the transcript, the witness and the randomness",
          "[merlin]") {
  bt::init_crypto();
  const std::array<std::uint8_t, 32> zero{};
  auto draw = [&](std::string_view commitment, std::string_view witness,
                  const std::array<std::uint8_t, 32>* random) {
    bt::detail::transcript t("test TranscriptRng collisions");
    t.append_message("com", commitment);
    auto b = t.build_rng();
    b.rekey_with_witness_bytes("witness", bytes_of(witness));
    auto rng = random ? b.finalize(*random) : b.finalize();
    std::array<std::uint8_t, 64> out{};
    rng.fill_bytes(out);
    return out;
  };
  const auto s1 = draw("commitment data 1", "witness data 1", &zero);
  const auto s2 = draw("commitment data 2", "witness data 1", &zero);
  const auto s3 = draw("commitment data 2", "witness data 2", &zero);
  const auto s4 = draw("commitment data 2", "witness data 2", &zero);
  CHECK(s1 != s2);
  CHECK(s1 != s3);
  CHECK(s2 != s3);
  CHECK(s3 == s4);
  // With libsodium randomness the same inputs give different outputs.
  CHECK(draw("commitment data 2", "witness data 2", nullptr) !=
        draw("commitment data 2", "witness data 2", nullptr));
}

TEST_CASE("building a witness RNG leaves the transcript unchanged", "[merlin]") {
  bt::init_crypto();
  bt::detail::transcript t("p"), u("p");
  t.append_message("m", "x");
  u.append_message("m", "x");
  auto b = t.build_rng();
  b.rekey_with_witness_bytes("w", bytes_of("secret"));
  std::array<std::uint8_t, 8> junk{};
  b.finalize().fill_bytes(junk);
  std::array<std::uint8_t, 32> ct{}, cu{};
  t.challenge_bytes("c", ct);
  u.challenge_bytes("c", cu);
  CHECK(ct == cu);
}
