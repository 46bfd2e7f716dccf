#include "ristretto_base_table.hpp"

#include <cstring>

namespace bt::sr25519::internal {

template <int Bits>
typename signed_radix<Bits>::digits recode_signed(const decaf_255_scalar_t scalar) noexcept {
  using radix = signed_radix<Bits>;
  std::array<std::uint8_t, 32> bytes;
  decaf_255_scalar_encode(bytes.data(), scalar);
  std::array<std::uint64_t, 5> words{};  // one spare word so a window may read past bit 255
  std::memcpy(words.data(), bytes.data(), bytes.size());  // little-endian hosts (x86-64, arm64)
  typename radix::digits out{};
  int carry = 0;
  for (int j = 0; j < radix::windows; ++j) {
    const int bit = j * Bits;
    std::uint64_t v = words[static_cast<std::size_t>(bit / 64)] >> (bit % 64);
    if (bit % 64 + Bits > 64) v |= words[static_cast<std::size_t>(bit / 64 + 1)] << (64 - bit % 64);
    int d = static_cast<int>(v & ((1u << Bits) - 1)) + carry;
    carry = d >= radix::max_digit && j + 1 < radix::windows ? 1 : 0;
    if (carry) d -= 1 << Bits;
    out[static_cast<std::size_t>(j)] = static_cast<typename radix::digit>(d);
  }
  return out;
}

template <int Bits>
multiples_table<Bits>::multiples_table(const decaf_255_point_t p) noexcept {
  decaf_255_point_t power;  // 2^(Bits·j)·P
  decaf_255_point_copy(power, p);
  for (auto& row : rows_) {
    decaf_255_point_copy(&row[0], power);
    for (std::size_t d = 1; d < row.size(); ++d) decaf_255_point_add(&row[d], &row[d - 1], power);
    // (2^(Bits−1))·power doubled once more: 2^Bits·power, the next row's unit
    decaf_255_point_add(power, &row[row.size() - 1], &row[row.size() - 1]);
  }
}

template <int Bits>
void multiples_table<Bits>::multiply_public(decaf_255_point_t out,
                                            const decaf_255_scalar_t scalar) const noexcept {
  const typename radix::digits digits = recode_signed<Bits>(scalar);
  const auto entry = [&](std::size_t j) { return &rows_[j][radix::entry_of(digits[j])]; };
  const auto prefetch = [&](std::size_t j) {
    if (digits[j] != 0) prefetch_bytes(entry(j), sizeof(decaf_255_point_s));
  };
  decaf_255_point_copy(out, decaf_255_point_identity);
  prefetch(0);
  for (std::size_t j = 0; j < digits.size(); ++j) {
    if (j + 1 < digits.size()) prefetch(j + 1);
    const int d = digits[j];
    if (d > 0) decaf_255_point_add(out, out, entry(j));
    if (d < 0) decaf_255_point_sub(out, out, entry(j));
  }
}

template class multiples_table<table_bits>;
template signed_radix<8>::digits recode_signed<8>(const decaf_255_scalar_t scalar) noexcept;

namespace {

const multiples_table<table_bits>& table_of_base() noexcept {
  static const multiples_table<table_bits> base(decaf_255_point_base);  // built on first use only
  return base;
}

}  // namespace

void base_multiply_public(decaf_255_point_t out, const decaf_255_scalar_t scalar) noexcept {
  table_of_base().multiply_public(out, scalar);
}

}  // namespace bt::sr25519::internal
