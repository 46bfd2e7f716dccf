// Hostile encodings for the sr25519 verifier tests (the differential test of verify() and the
// batch verifier's test): non-canonical and small-order Ristretto255 encodings, 256-bit
// arithmetic to make them, and signatures with R or s replaced.
#pragma once

#include <bt/hex.hpp>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

namespace bt::test {

using bytes32 = std::array<std::uint8_t, 32>;

// p = 2^255 - 19 and l (the group order), little-endian.
inline constexpr bytes32 field_p = {
    0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
inline constexpr bytes32 group_l = {
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};

// a + b and a - b as 256-bit little-endian integers (wrapping).
inline bytes32 add_256(const bytes32& a, const bytes32& b) {
  bytes32 out{};
  unsigned carry = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    const unsigned v = a[i] + b[i] + carry;
    out[i] = static_cast<std::uint8_t>(v);
    carry = v >> 8;
  }
  return out;
}
inline bytes32 sub_256(const bytes32& a, const bytes32& b) {
  bytes32 out{};
  int borrow = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    const int v = a[i] - b[i] - borrow;
    out[i] = static_cast<std::uint8_t>(v);
    borrow = v < 0 ? 1 : 0;
  }
  return out;
}
inline bytes32 small_256(std::uint8_t v) {
  bytes32 out{};
  out[0] = v;
  return out;
}

// Encodings that are not canonical Ristretto255 encodings of a point whose canonical encoding
// is `e` (or are simply invalid): e + p (a field element >= p, when it fits in 255 bits), p - e
// (the same field element's negation, "negative" when e is non-negative), and the high bit set.
inline std::vector<bytes32> non_canonical_variants(const bytes32& e) {
  std::vector<bytes32> out;
  out.push_back(add_256(e, field_p));  // wraps above 2^256 for most e: still invalid bytes
  out.push_back(sub_256(field_p, e));
  bytes32 high = e;
  high[31] |= 0x80;
  out.push_back(high);
  return out;
}

// The eight Edwards 8-torsion points in Ed25519 encoding (all map to the Ristretto identity,
// none is a canonical Ristretto encoding except the all-zero one's cousins), the encodings of
// small field elements and each of p .. p + 18 (= 0 .. 18 unreduced): interpreted as Ristretto255
// encodings, whatever either library decides must agree.
inline std::vector<bytes32> edge_encodings() {
  std::vector<bytes32> out;
  for (const char* h : {"0000000000000000000000000000000000000000000000000000000000000000",
                        "0100000000000000000000000000000000000000000000000000000000000000",
                        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
                        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
                        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
                        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
                        "0000000000000000000000000000000000000000000000000000000000000080",
                        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"}) {
    const auto b = bt::from_hex(h);
    REQUIRE(b);
    REQUIRE(b->size() == 32);
    bytes32 e{};
    std::copy(b->begin(), b->end(), e.begin());
    out.push_back(e);
  }
  for (std::uint8_t v = 0; v <= 18; ++v) {
    out.push_back(small_256(v));
    out.push_back(add_256(field_p, small_256(v)));
  }
  out.push_back(sub_256(field_p, small_256(1)));
  out.push_back(sub_256(field_p, small_256(2)));
  return out;
}

/// The signature with R replaced.
inline std::array<std::uint8_t, 64> with_r(std::array<std::uint8_t, 64> sig, const bytes32& r) {
  std::copy(r.begin(), r.end(), sig.begin());
  return sig;
}
/// The signature with s replaced, the schnorrkel marker kept (so that the s check itself is what
/// a verifier decides on).
inline std::array<std::uint8_t, 64> with_s(std::array<std::uint8_t, 64> sig, bytes32 s) {
  s[31] |= 0x80;
  std::copy(s.begin(), s.end(), sig.begin() + 32);
  return sig;
}

}  // namespace bt::test
