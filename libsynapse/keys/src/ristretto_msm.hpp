// A variable-time multi-scalar multiplication on ristretto255 over libdecaf's public point API:
// out = base_scalar·B + Σ scalar_i·P_i (Straus' interleaving with width-w non-adjacent forms).
// For sr25519 batch verification, where every input is public. Not a public API.
#pragma once

#include <decaf/point_255.h>

#include <array>
#include <cstdint>
#include <vector>

namespace bt::sr25519::internal {

class multiscalar {
 public:
  /// Room for `terms` add_term calls without reallocation (may throw std::bad_alloc).
  void reserve(std::size_t terms);

  /// Adds scalar·point. The scalar's bit length picks the window: a short scalar (a 128-bit batch
  /// weight) costs fewer additions. Copies what it needs; may throw std::bad_alloc.
  void add_term(const decaf_255_point_t point, const decaf_255_scalar_t scalar);

  /// out = base_scalar·B + Σ scalar_i·P_i over every term added. Variable time: it leaks the
  /// scalars and points through timing, so only for public values.
  void evaluate(decaf_255_point_t out, const decaf_255_scalar_t base_scalar) const noexcept;

  /// Signed digits of a scalar (< 2^253) in width-w non-adjacent form: each digit odd with
  /// |digit| < 2^(w-1), or zero, and any two non-zero digits at least w positions apart;
  /// Σ digit_i·2^i equals the scalar. 257 positions: the top carry always lands inside.
  using digits = std::array<std::int8_t, 257>;
  static void non_adjacent_form(const std::array<std::uint8_t, 32>& scalar, int width,
                                digits& out) noexcept;

 private:
  struct term {
    digits naf;
    std::size_t first_multiple = 0;  // index into odd_multiples_: P, 3P, 5P, ...
    int top = -1;                    // highest non-zero digit, -1 for a zero scalar
  };
  std::vector<term> terms_;
  std::vector<decaf_255_point_s> odd_multiples_;
};

}  // namespace bt::sr25519::internal
