// Scalar multiplication without doublings for points multiplied again and again: a table of
// d·2^(b·j)·P (d = 1..2^(b−1), one row per radix-2^b window j) and the scalar recoded into signed
// radix-2^b digits, so one product is one point addition per window. Used with b = 8 (32 rows of
// 128 libdecaf points, 1 MiB; at most 32 additions, about 4 µs a product against about 11 µs for
// libdecaf's constant-time comb) for ristretto255's base point B, built once per process on first
// use: s·B of sr25519::key_cache's verification of a key with a comb table, whose −k·A is a
// libdecaf point. (A hot key's verification sums both products in its own arithmetic:
// ristretto_niels.hpp, which reuses the digits below.) Variable time: for public scalars only
// (sr25519 verification). Not a public API.
#pragma once

#include <decaf/point_255.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace bt::sr25519::internal {

/// Signed radix-2^Bits digits of a scalar below 2^253 (every reduced scalar): Σ d_j·2^(Bits·j)
/// equals it, each d_j in [−2^(Bits−1), 2^(Bits−1)] (only the last, which absorbs the carry, may
/// reach the top; it stays at most 2^(253 − Bits·(windows − 1)) + 1, inside the table).
template <int Bits>
struct signed_radix {
  static constexpr int windows = (253 + Bits - 1) / Bits;
  static constexpr int max_digit = 1 << (Bits - 1);
  using digit = std::conditional_t<(max_digit <= 127), std::int8_t, std::int16_t>;
  using digits = std::array<digit, windows>;
  /// Where a row keeps |d|·2^(Bits·j)·P, for a digit d ≠ 0 (its sign is the caller's).
  static constexpr std::size_t entry_of(int d) noexcept {
    return static_cast<std::size_t>((d < 0 ? -d : d) - 1);
  }
};

/// Recodes `scalar` (reduced, so below 2^253) into signed radix-2^Bits digits. Instantiated for
/// table_bits (below) and for 8, the radix of ristretto_niels.hpp.
template <int Bits>
typename signed_radix<Bits>::digits recode_signed(const decaf_255_scalar_t scalar) noexcept;

/// Asks the cache for every line of the `size` bytes at `p`: a table's next point while the
/// current one is added (the tables are larger than the caches).
inline void prefetch_bytes(const void* p, std::size_t size) noexcept {
  constexpr std::uintptr_t line = 64;
  const auto first = reinterpret_cast<std::uintptr_t>(p) & ~(line - 1);
  const auto last = reinterpret_cast<std::uintptr_t>(p) + size - 1;
  for (std::uintptr_t at = first; at <= last; at += line)
    __builtin_prefetch(reinterpret_cast<const void*>(at));
}

/// The multiples d·2^(Bits·j)·P of one point P, and products of P with public scalars.
template <int Bits>
class multiples_table {
 public:
  explicit multiples_table(const decaf_255_point_t p) noexcept;

  /// out = scalar·P, in variable time.
  void multiply_public(decaf_255_point_t out, const decaf_255_scalar_t scalar) const noexcept;

 private:
  using radix = signed_radix<Bits>;
  // rows_[j][d − 1] = d·2^(Bits·j)·P
  std::array<std::array<decaf_255_point_s, radix::max_digit>, radix::windows> rows_;
};

/// The radix of B's table.
inline constexpr int table_bits = 8;

/// out = scalar·B, in variable time (the process's table of B).
void base_multiply_public(decaf_255_point_t out, const decaf_255_scalar_t scalar) noexcept;

}  // namespace bt::sr25519::internal
