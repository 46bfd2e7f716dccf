// The multi-scalar multiplication behind sr25519 batch verification (libsynapse/keys/src/
// ristretto_msm.hpp) against libdecaf's own scalar multiplications, and its width-w non-adjacent
// forms against their definition. Random inputs from a fixed seed plus the edge scalars (0, 1,
// l − 1, 2^128 − 1, 2^252); bounded: a few hundred scalar multiplications.
#include "ristretto_msm.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using msm_bytes = std::array<std::uint8_t, 32>;

msm_bytes msm_random_scalar_bytes(std::mt19937_64& rng, std::size_t length = 32) {
  msm_bytes b{};
  for (std::size_t i = 0; i < length; ++i) b[i] = static_cast<std::uint8_t>(rng());
  return b;
}

// A scalar from up to 32 little-endian bytes, reduced mod l.
void msm_scalar(decaf_255_scalar_t out, const msm_bytes& bytes) {
  decaf_255_scalar_decode_long(out, bytes.data(), bytes.size());
}

msm_bytes msm_encode(const decaf_255_scalar_t s) {
  msm_bytes b{};
  decaf_255_scalar_encode(b.data(), s);
  return b;
}

// 0, 1, l − 1, 2^128 − 1 (the largest batch weight), 2^252.
std::vector<msm_bytes> msm_edge_scalars() {
  std::vector<msm_bytes> out;
  out.push_back(msm_bytes{});
  msm_bytes one{};
  one[0] = 1;
  out.push_back(one);
  decaf_255_scalar_t minus_one;
  decaf_255_scalar_sub(minus_one, decaf_255_scalar_zero, decaf_255_scalar_one);
  out.push_back(msm_encode(minus_one));
  msm_bytes weight_max{};
  for (std::size_t i = 0; i < 16; ++i) weight_max[i] = 0xff;
  out.push_back(weight_max);
  msm_bytes top{};
  top[31] = 0x10;
  out.push_back(top);
  return out;
}

// Σ digit_i·2^i mod l, by Horner's rule from the top.
msm_bytes msm_naf_value(const bt::sr25519::internal::multiscalar::digits& naf) {
  decaf_255_scalar_t acc;
  decaf_255_scalar_copy(acc, decaf_255_scalar_zero);
  decaf_255_scalar_t two;
  decaf_255_scalar_set_unsigned(two, 2);
  for (std::size_t i = naf.size(); i-- > 0;) {
    decaf_255_scalar_mul(acc, acc, two);
    const int d = naf[i];
    decaf_255_scalar_t digit;
    decaf_255_scalar_set_unsigned(digit, static_cast<std::uint64_t>(d < 0 ? -d : d));
    if (d < 0)
      decaf_255_scalar_sub(acc, acc, digit);
    else
      decaf_255_scalar_add(acc, acc, digit);
  }
  return msm_encode(acc);
}

}  // namespace

TEST_CASE("ristretto MSM: non-adjacent forms sum to the scalar and keep their shape",
          "[sr25519][batch][msm]") {
  using bt::sr25519::internal::multiscalar;
  std::mt19937_64 rng(0x3a5f'0001ULL);
  std::vector<msm_bytes> scalars = msm_edge_scalars();
  for (int i = 0; i < 40; ++i) {
    decaf_255_scalar_t s;
    msm_scalar(s, msm_random_scalar_bytes(rng, i % 2 == 0 ? 32 : 16));
    scalars.push_back(msm_encode(s));
  }
  for (const msm_bytes& scalar : scalars) {
    for (int width = 2; width <= 8; ++width) {
      multiscalar::digits naf;
      multiscalar::non_adjacent_form(scalar, width, naf);
      INFO("width " << width);
      CHECK(msm_naf_value(naf) == scalar);
      int last = -width;
      for (int i = 0; i < static_cast<int>(naf.size()); ++i) {
        const int d = naf[static_cast<std::size_t>(i)];
        if (d == 0) continue;
        CHECK(d % 2 != 0);
        CHECK(d < (1 << (width - 1)));
        CHECK(d > -(1 << (width - 1)));
        CHECK(i - last >= width);
        last = i;
      }
    }
  }
}

TEST_CASE("ristretto MSM: base_scalar·B + Σ scalar_i·P_i equals libdecaf's scalar multiplications",
          "[sr25519][batch][msm]") {
  std::mt19937_64 rng(0x3a5f'0002ULL);
  const std::vector<msm_bytes> edges = msm_edge_scalars();
  for (const std::size_t n : {0, 1, 2, 5, 17, 40}) {
    for (int round = 0; round < 3; ++round) {
      bt::sr25519::internal::multiscalar msm;
      msm.reserve(n);
      decaf_255_point_t expected;
      decaf_255_point_t term;
      // The base scalar: random, or one of the edges.
      decaf_255_scalar_t base;
      msm_scalar(base,
                 round == 0 ? msm_random_scalar_bytes(rng) : edges[(n + round) % edges.size()]);
      decaf_255_point_scalarmul(expected, decaf_255_point_base, base);
      for (std::size_t i = 0; i < n; ++i) {
        // P = t·B for a random t (any point of the group).
        decaf_255_scalar_t t;
        msm_scalar(t, msm_random_scalar_bytes(rng));
        decaf_255_point_t p;
        decaf_255_precomputed_scalarmul(p, decaf_255_precomputed_base, t);
        // Short (batch weight), full, or edge scalars, and some repeated points.
        decaf_255_scalar_t s;
        if (i % 3 == 0)
          msm_scalar(s, msm_random_scalar_bytes(rng, 16));
        else if (i % 3 == 1)
          msm_scalar(s, msm_random_scalar_bytes(rng));
        else
          msm_scalar(s, edges[i % edges.size()]);
        msm.add_term(p, s);
        decaf_255_point_scalarmul(term, p, s);
        decaf_255_point_add(expected, expected, term);
      }
      decaf_255_point_t got;
      msm.evaluate(got, base);
      INFO(n << " terms, round " << round);
      CHECK(decaf_255_point_eq(got, expected) == DECAF_TRUE);
      // And a wrong answer is seen: one more B.
      decaf_255_point_add(expected, expected, decaf_255_point_base);
      CHECK(decaf_255_point_eq(got, expected) == DECAF_FALSE);
    }
  }
}
