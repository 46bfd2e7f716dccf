#include "ristretto_msm.hpp"

#include <algorithm>
#include <cstring>

namespace bt::sr25519::internal {
namespace {

// Window widths: a width-w table holds 2^(w-2) odd multiples (2^(w-2) − 1 additions and a
// doubling to build) and a b-bit scalar then needs about b/(w+1) additions, so the cost
// b/(w+1) + 2^(w-2) is least at w = 4 or 5 for 128 bits (equal in BM_sr25519_verify_batch; 4 uses
// half the memory) and at w = 5 for 253 bits.
constexpr int short_width = 4;  // scalars below 2^128: the batch weights z_i on R_i
constexpr int long_width = 5;   // full scalars: z_i·k_i on A_i
// B's table is built once per process, so it can be wide.
constexpr int base_width = 8;
constexpr std::size_t base_table_size = std::size_t{1} << (base_width - 2);

std::size_t table_size(int width) noexcept {
  return std::size_t{1} << (width - 2);
}

// P, 3P, 5P, ..., (2·count − 1)P into out[0..count).
void fill_odd_multiples(const decaf_255_point_t p, decaf_255_point_s* out,
                        std::size_t count) noexcept {
  decaf_255_point_t twice;
  decaf_255_point_double(twice, p);
  decaf_255_point_copy(&out[0], p);
  for (std::size_t i = 1; i < count; ++i) decaf_255_point_add(&out[i], &out[i - 1], twice);
}

struct base_table {
  std::array<decaf_255_point_s, base_table_size> odd{};
  base_table() noexcept { fill_odd_multiples(decaf_255_point_base, odd.data(), odd.size()); }
};

const base_table& base_multiples() noexcept {
  static const base_table table;  // thread-safe initialisation
  return table;
}

// acc += digit·table (digit odd, table[j] = (2j + 1)·P).
void add_digit(decaf_255_point_t acc, std::int8_t digit, const decaf_255_point_s* table) noexcept {
  if (digit > 0)
    decaf_255_point_add(acc, acc, &table[digit >> 1]);
  else
    decaf_255_point_sub(acc, acc, &table[(-digit) >> 1]);
}

int top_digit(const multiscalar::digits& naf) noexcept {
  for (int i = static_cast<int>(naf.size()) - 1; i >= 0; --i)
    if (naf[static_cast<std::size_t>(i)] != 0) return i;
  return -1;
}

std::array<std::uint8_t, 32> encode(const decaf_255_scalar_t scalar) noexcept {
  std::array<std::uint8_t, 32> bytes;
  decaf_255_scalar_encode(bytes.data(), scalar);
  return bytes;
}

}  // namespace

void multiscalar::non_adjacent_form(const std::array<std::uint8_t, 32>& scalar, int width,
                                    digits& out) noexcept {
  // Five 64-bit words, the last zero, so that a window may read past bit 255.
  std::array<std::uint64_t, 5> words{};
  std::memcpy(words.data(), scalar.data(), scalar.size());  // little-endian hosts (x86-64, arm64)
  out.fill(0);
  const std::uint64_t window = std::uint64_t{1} << width;
  const std::uint64_t mask = window - 1;
  std::uint64_t carry = 0;
  std::size_t pos = 0;
  while (pos < out.size()) {
    const std::size_t word = pos / 64;
    const std::size_t bit = pos % 64;
    std::uint64_t bits = words[word] >> bit;
    if (bit + static_cast<std::size_t>(width) > 64 && word + 1 < words.size())
      bits |= words[word + 1] << (64 - bit);
    const std::uint64_t value = carry + (bits & mask);
    if ((value & 1) == 0) {
      ++pos;
      continue;
    }
    if (value < window / 2) {
      carry = 0;
      out[pos] = static_cast<std::int8_t>(value);
    } else {
      carry = 1;
      out[pos] = static_cast<std::int8_t>(static_cast<std::int64_t>(value) -
                                          static_cast<std::int64_t>(window));
    }
    pos += static_cast<std::size_t>(width);
  }
  // A scalar below 2^253 leaves no carry: a window that yields a negative digit starts at least
  // w positions below bit 254, so the carry lands on a later position (<= 256).
}

void multiscalar::reserve(std::size_t terms) {
  terms_.reserve(terms);
  odd_multiples_.reserve(terms * table_size(std::max(short_width, long_width)));
}

void multiscalar::add_term(const decaf_255_point_t point, const decaf_255_scalar_t scalar) {
  const std::array<std::uint8_t, 32> bytes = encode(scalar);
  const bool short_scalar =
      std::all_of(bytes.begin() + 16, bytes.end(), [](std::uint8_t b) { return b == 0; });
  const int width = short_scalar ? short_width : long_width;
  term& t = terms_.emplace_back();
  non_adjacent_form(bytes, width, t.naf);
  t.top = top_digit(t.naf);
  if (t.top < 0) return;  // zero scalar: no table needed
  t.first_multiple = odd_multiples_.size();
  odd_multiples_.resize(odd_multiples_.size() + table_size(width));
  fill_odd_multiples(point, &odd_multiples_[t.first_multiple], table_size(width));
}

void multiscalar::evaluate(decaf_255_point_t out,
                           const decaf_255_scalar_t base_scalar) const noexcept {
  digits base_naf;
  non_adjacent_form(encode(base_scalar), base_width, base_naf);
  int top = top_digit(base_naf);
  for (const term& t : terms_) top = std::max(top, t.top);

  const decaf_255_point_s* base = base_multiples().odd.data();
  decaf_255_point_copy(out, decaf_255_point_identity);
  for (int i = top; i >= 0; --i) {
    const auto at = static_cast<std::size_t>(i);
    if (i != top) decaf_255_point_double(out, out);
    if (base_naf[at] != 0) add_digit(out, base_naf[at], base);
    for (const term& t : terms_)
      if (t.naf[at] != 0) add_digit(out, t.naf[at], &odd_multiples_[t.first_multiple]);
  }
}

}  // namespace bt::sr25519::internal
