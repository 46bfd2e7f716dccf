// The hot path's own arithmetic (libsynapse/keys/src/ristretto_niels.hpp, field25519.hpp) against
// libdecaf, which the rest of sr25519 verification uses: field encodings at the edges of p,
// ristretto255 decoding of valid, invalid and non-canonical encodings, encodings of products
// from the tables of B and of other points (the identity included), and sums of two products as
// the verification equation forms them.
#include "ristretto_niels.hpp"
#include "field25519.hpp"

#include <catch2/catch.hpp>
#include <support/sr25519_encodings.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace {

namespace in = bt::sr25519::internal;
using bytes32 = std::array<std::uint8_t, 32>;

bytes32 random_bytes(std::mt19937_64& rng) {
  bytes32 b;
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

bytes32 decaf_encode(const decaf_255_point_t p) {
  bytes32 b;
  decaf_255_point_encode(b.data(), p);
  return b;
}

// The scalars a product is tested with: edges of the signed radix-256 digits, and random ones.
std::vector<bytes32> test_scalars(std::mt19937_64& rng) {
  std::vector<bytes32> out;
  for (const std::uint64_t v :
       {0ULL, 1ULL, 2ULL, 127ULL, 128ULL, 129ULL, 255ULL, 256ULL, 32768ULL}) {
    bytes32 b{};
    for (std::size_t i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
    out.push_back(b);
  }
  bytes32 all_128{};
  bytes32 all_127{};
  for (std::size_t i = 0; i < 31; ++i) {
    all_128[i] = 0x80;
    all_127[i] = 0x7f;
  }
  out.push_back(all_128);
  out.push_back(all_127);
  decaf_255_scalar_t minus_one;
  decaf_255_scalar_sub(minus_one, decaf_255_scalar_zero, decaf_255_scalar_one);
  bytes32 l_minus_1;
  decaf_255_scalar_encode(l_minus_1.data(), minus_one);
  out.push_back(l_minus_1);
  for (int i = 0; i < 100; ++i) out.push_back(random_bytes(rng));  // reduced when decoded
  return out;
}

void to_scalar(decaf_255_scalar_t s, const bytes32& b) {
  decaf_255_scalar_decode_long(s, b.data(), b.size());
}

// A random multiple of B: a valid point.
void random_point(std::mt19937_64& rng, decaf_255_point_t out) {
  decaf_255_scalar_t s;
  to_scalar(s, random_bytes(rng));
  decaf_255_precomputed_scalarmul(out, decaf_255_precomputed_base, s);
}

// A random point as libdecaf's, and its table of our own.
struct point_with_table {
  decaf_255_point_t point;
  std::unique_ptr<const in::niels_table> table;
  explicit point_with_table(std::mt19937_64& rng) {
    random_point(rng, point);
    table = std::make_unique<const in::niels_table>(*in::ristretto_decode(decaf_encode(point)));
  }
};

}  // namespace

TEST_CASE("ristretto niels: field encodings are canonical at the edges of p", "[sr25519][niels]") {
  // p − 1, p, p + 1, 2^255 − 1 (= p + 18) and 2^255 − 20 + 19 written with bit 255 clear.
  bytes32 p_bytes{};
  p_bytes.fill(0xff);
  p_bytes[0] = 0xed;
  p_bytes[31] = 0x7f;
  const auto reduced = [](bytes32 b) {
    return in::field::to_bytes(in::field::from_bytes(b.data()));
  };
  bytes32 zero{};
  CHECK(reduced(p_bytes) == zero);
  bytes32 p_plus_1 = p_bytes;
  p_plus_1[0] = 0xee;
  bytes32 one{};
  one[0] = 1;
  CHECK(reduced(p_plus_1) == one);
  bytes32 p_minus_1 = p_bytes;
  p_minus_1[0] = 0xec;
  CHECK(reduced(p_minus_1) == p_minus_1);
  bytes32 top{};
  top.fill(0xff);
  top[31] = 0x7f;  // 2^255 − 1 = p + 18
  bytes32 eighteen{};
  eighteen[0] = 18;
  CHECK(reduced(top) == eighteen);
  // x · x⁻¹ = 1 and (x + y) − y = x for random elements, through loose limbs.
  std::mt19937_64 rng(0x4e1e'0001ULL);
  for (int i = 0; i < 200; ++i) {
    const in::field::fe x = in::field::from_bytes(random_bytes(rng).data());
    const in::field::fe y = in::field::from_bytes(random_bytes(rng).data());
    if (in::field::is_zero(x)) continue;
    CHECK(in::field::to_bytes(in::field::mul(x, in::field::invert(x))) == one);
    CHECK(in::field::equal(in::field::sub(in::field::add(x, y), y), x));
    CHECK(in::field::equal(in::field::sqr(x), in::field::mul(x, x)));
  }
}

TEST_CASE("ristretto niels: decoding accepts and refuses exactly what libdecaf does",
          "[sr25519][niels]") {
  std::mt19937_64 rng(0x4e1e'0002ULL);
  std::vector<bytes32> inputs;
  for (const bytes32& e : bt::test::edge_encodings()) inputs.push_back(e);
  for (int i = 0; i < 500; ++i) {  // random bytes: most are not points
    bytes32 b = random_bytes(rng);
    if (i % 2 == 0) b[31] &= 0x7f;
    inputs.push_back(b);
  }
  for (int i = 0; i < 200; ++i) {  // valid points
    decaf_255_point_t p;
    random_point(rng, p);
    inputs.push_back(decaf_encode(p));
  }
  int valid = 0;
  for (const bytes32& b : inputs) {
    decaf_255_point_t reference;
    const bool decaf_ok = decaf_255_point_decode(reference, b.data(), DECAF_TRUE) == DECAF_SUCCESS;
    const auto ours = in::ristretto_decode(b);
    CHECK(ours.has_value() == decaf_ok);
    if (ours && decaf_ok) {
      ++valid;
      CHECK(in::ristretto_encode(*ours) == b);  // a valid encoding is its point's only one
    }
  }
  CHECK(valid >= 200);
}

TEST_CASE("ristretto niels: products from the tables encode as libdecaf's", "[sr25519][niels]") {
  std::mt19937_64 rng(0x4e1e'0003ULL);
  const std::vector<bytes32> scalars = test_scalars(rng);
  // B's table, and tables of a random point and of the identity.
  const point_with_table a(rng);
  const auto identity_table = std::make_unique<const in::niels_table>(in::edwards_identity());
  int differ = 0;
  for (const bytes32& b : scalars) {
    decaf_255_scalar_t s;
    to_scalar(s, b);
    decaf_255_point_t reference;
    in::edwards_point sum = in::edwards_identity();
    in::base_add_product_fast(sum, s);
    decaf_255_precomputed_scalarmul(reference, decaf_255_precomputed_base, s);
    if (in::ristretto_encode(sum) != decaf_encode(reference)) ++differ;
    sum = in::edwards_identity();
    a.table->add_product_public(sum, s);
    decaf_255_point_scalarmul(reference, a.point, s);
    if (in::ristretto_encode(sum) != decaf_encode(reference)) ++differ;
    sum = in::edwards_identity();
    identity_table->add_product_public(sum, s);
    if (in::ristretto_encode(sum) != bytes32{}) ++differ;
  }
  CHECK(differ == 0);
}

TEST_CASE("ristretto niels: s·B + k·A in one sum equals libdecaf's double-scalar product",
          "[sr25519][niels]") {
  std::mt19937_64 rng(0x4e1e'0004ULL);
  int differ = 0;
  for (int key = 0; key < 4; ++key) {
    const point_with_table a(rng);
    for (int i = 0; i < 50; ++i) {
      decaf_255_scalar_t s;
      decaf_255_scalar_t k;
      to_scalar(s, random_bytes(rng));
      to_scalar(k, random_bytes(rng));
      in::edwards_point sum = in::edwards_identity();
      in::base_add_product_fast(sum, s);
      a.table->add_product_public(sum, k);
      decaf_255_point_t reference;
      decaf_255_base_double_scalarmul_non_secret(reference, s, a.point, k);
      if (in::ristretto_encode(sum) != decaf_encode(reference)) ++differ;
    }
  }
  CHECK(differ == 0);
}
