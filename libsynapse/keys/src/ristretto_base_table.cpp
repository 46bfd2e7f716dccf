#include "ristretto_base_table.hpp"

#include <array>
#include <cstdint>
#include <cstring>

namespace bt::sr25519::internal {
namespace {

constexpr int base64_digit_bits = 6;
constexpr int max_base64_digit = 1 << (base64_digit_bits - 1);  // digits lie in [−32, 32]
// A scalar below 2^253 recodes into ceil(253 / 6) = 43 digits, the last one absorbing the carry
// (its value is at most 2^(253 − 252) + 1 = 3, well inside the table).
constexpr int base64_windows = 43;

using base64_digits = std::array<std::int8_t, base64_windows>;

// Radix-64 digits of `bytes` (little-endian, < 2^253) in [−32, 32): Σ d_j·64^j equals it.
base64_digits recode_base64(const std::array<std::uint8_t, 32>& bytes) noexcept {
  std::array<std::uint64_t, 5> words{};  // one spare word so a window may read past bit 255
  std::memcpy(words.data(), bytes.data(), bytes.size());  // little-endian hosts (x86-64, arm64)
  base64_digits out{};
  int carry = 0;
  for (int j = 0; j < base64_windows; ++j) {
    const int bit = j * base64_digit_bits;
    std::uint64_t v = words[static_cast<std::size_t>(bit / 64)] >> (bit % 64);
    if (bit % 64 + base64_digit_bits > 64)
      v |= words[static_cast<std::size_t>(bit / 64 + 1)] << (64 - bit % 64);
    int d = static_cast<int>(v & ((1u << base64_digit_bits) - 1)) + carry;
    carry = d >= max_base64_digit && j + 1 < base64_windows ? 1 : 0;
    if (carry) d -= 1 << base64_digit_bits;
    out[static_cast<std::size_t>(j)] = static_cast<std::int8_t>(d);
  }
  return out;
}

struct base_powers_table {
  // rows[j][d − 1] = d·64^j·B
  std::array<std::array<decaf_255_point_s, max_base64_digit>, base64_windows> rows;

  base_powers_table() noexcept {
    decaf_255_point_t power;  // 64^j·B
    decaf_255_point_copy(power, decaf_255_point_base);
    for (auto& row : rows) {
      decaf_255_point_copy(&row[0], power);
      for (std::size_t d = 1; d < row.size(); ++d) decaf_255_point_add(&row[d], &row[d - 1], power);
      decaf_255_point_add(power, &row[row.size() - 1], &row[row.size() - 1]);  // 64·64^j·B
    }
  }
};

const base_powers_table& base_powers() noexcept {
  static const base_powers_table t;  // static storage: touched (and built) on first use only
  return t;
}

}  // namespace

void base_multiply_public(decaf_255_point_t out, const decaf_255_scalar_t scalar) noexcept {
  std::array<std::uint8_t, 32> bytes;
  decaf_255_scalar_encode(bytes.data(), scalar);
  const base64_digits digits = recode_base64(bytes);
  const base_powers_table& t = base_powers();
  decaf_255_point_copy(out, decaf_255_point_identity);
  for (std::size_t j = 0; j < digits.size(); ++j) {
    const int d = digits[j];
    if (d > 0) decaf_255_point_add(out, out, &t.rows[j][static_cast<std::size_t>(d - 1)]);
    if (d < 0) decaf_255_point_sub(out, out, &t.rows[j][static_cast<std::size_t>(-d - 1)]);
  }
}

}  // namespace bt::sr25519::internal
