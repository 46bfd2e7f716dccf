// The fixed-base table of ristretto255's base point behind sr25519's verification of cached keys
// (libsynapse/keys/src/ristretto_base_table.hpp) against libdecaf's own base-point
// multiplication: random scalars from a fixed seed, short ones, and the edge scalars whose signed
// digits carry the most (0, 1, 127, 128, 255, 256, every digit 128, every digit 127, l − 1).
#include "ristretto_base_table.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using table_bytes = std::array<std::uint8_t, 32>;

bool same_as_decaf(const table_bytes& bytes) {
  decaf_255_scalar_t s;
  decaf_255_scalar_decode_long(s, bytes.data(), bytes.size());
  decaf_255_point_t fast;
  decaf_255_point_t reference;
  bt::sr25519::internal::base_multiply_public(fast, s);
  decaf_255_precomputed_scalarmul(reference, decaf_255_precomputed_base, s);
  return decaf_255_point_eq(fast, reference) == DECAF_TRUE;
}

table_bytes small_scalar(std::uint64_t v) {
  table_bytes b{};
  for (std::size_t i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return b;
}

}  // namespace

TEST_CASE("ristretto base table: s·B equals libdecaf's for random and edge scalars",
          "[sr25519][base_table]") {
  std::vector<table_bytes> scalars;
  for (const std::uint64_t v : {0ULL, 1ULL, 31ULL, 32ULL, 33ULL, 63ULL, 64ULL, 127ULL, 128ULL,
                                129ULL, 255ULL, 256ULL, 32767ULL, 32768ULL})
    scalars.push_back(small_scalar(v));
  table_bytes all_128{};  // every base-256 digit 128: each one carries into the next
  table_bytes all_127{};  // every base-256 digit 127: the largest that does not
  for (std::size_t i = 0; i < 31; ++i) {
    all_128[i] = 0x80;
    all_127[i] = 0x7f;
  }
  scalars.push_back(all_128);
  scalars.push_back(all_127);
  table_bytes minus_one{};  // l − 1
  decaf_255_scalar_t m;
  decaf_255_scalar_sub(m, decaf_255_scalar_zero, decaf_255_scalar_one);
  decaf_255_scalar_encode(minus_one.data(), m);
  scalars.push_back(minus_one);
  std::mt19937_64 rng(0xba5e'7ab1eULL);
  for (int i = 0; i < 300; ++i) {
    table_bytes b{};
    const std::size_t length = 1 + rng() % 32;  // short scalars too
    for (std::size_t j = 0; j < length; ++j) b[j] = static_cast<std::uint8_t>(rng());
    scalars.push_back(b);
  }
  int differ = 0;
  for (const table_bytes& b : scalars)
    if (!same_as_decaf(b)) ++differ;
  CHECK(differ == 0);
}
