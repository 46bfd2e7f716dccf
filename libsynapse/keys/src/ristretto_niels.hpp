// The hot path of sr25519 verification for the keys an sr25519::key_cache verifies most: R' =
// s·B − k·A summed from two tables of multiples without a doubling, in this project's own
// variable-time arithmetic (field25519.hpp) on the Edwards curve under ristretto255 (RFC 9496),
// then encoded to compare with R.
//
// Why not libdecaf's points, as the rest of verification uses: a table entry here is an affine
// point in the form one mixed addition wants (y + x, y − x, 2d·x·y: 120 bytes, 7 multiplications
// an addition) where libdecaf's public API offers only its full projective points (256 bytes,
// 8 multiplications and a small one). With radix 256, a product is at most 32 additions and a
// table 480 KiB. Every result is checked against libdecaf in tests/libsynapse (encodings of
// products, decoding of valid and invalid points, verdicts of cached verification).
//
// Variable time: for public points and scalars only. Not a public API.
#pragma once

#include "field25519.hpp"
#include "ristretto_base_table.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace bt::sr25519::internal {

/// A point in extended coordinates (X : Y : Z : T), x = X/Z, y = Y/Z, x·y = T/Z.
struct edwards_point {
  field::fe x, y, z, t;
};

/// The point a canonical ristretto255 encoding names, or nothing for an invalid encoding
/// (non-canonical, negative, or not on the curve: RFC 9496, section 4.3.1).
std::optional<edwards_point> ristretto_decode(std::span<const std::uint8_t, 32> bytes) noexcept;

/// The canonical ristretto255 encoding of `p` (RFC 9496, section 4.3.2).
std::array<std::uint8_t, 32> ristretto_encode(const edwards_point& p) noexcept;

/// The multiples d·256^j·P (d = 1..128, j = 0..31) of one point, in affine Niels form.
class niels_table {
 public:
  /// Builds the table (about 4,100 additions and 32 inversions) with no allocation of its own:
  /// its working space is about 25 KiB of stack.
  explicit niels_table(const edwards_point& p) noexcept;

  /// sum += scalar·P, in variable time.
  void add_product_public(edwards_point& sum, const decaf_255_scalar_t scalar) const noexcept;

 private:
  struct entry {
    field::fe y_plus_x, y_minus_x, xy2d;
  };
  using radix = signed_radix<8>;
  std::array<std::array<entry, radix::max_digit>, radix::windows> rows_;
};

/// The identity, the starting point of a sum.
edwards_point edwards_identity() noexcept;

/// sum += scalar·B, from the process's table of ristretto255's base point B.
void base_add_product_fast(edwards_point& sum, const decaf_255_scalar_t scalar) noexcept;

}  // namespace bt::sr25519::internal
