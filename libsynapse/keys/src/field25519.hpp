// Arithmetic modulo p = 2^255 − 19 in five 51-bit limbs (value = Σ limb[i]·2^(51·i)), for the
// variable-time ristretto255 tables of sr25519 verification (ristretto_niels.hpp). Not a public
// API, and not for secrets: equality, sign and zero tests branch on the value.
//
// Limb bounds, the contract every function keeps: mul and sqr accept limbs below 2^56 and return
// limbs below 2^52 ("loose"); add returns the sum of its inputs' limbs (two loose inputs: below
// 2^53); sub(f, g) accepts limbs below 2^53 and returns limbs below 2^55; neg returns loose
// limbs, and so does abs of a loose value. So mul and sqr take any loose value, one add or sub of
// loose values, or the add of a loose value and such a sub; sub and add take loose values or one
// add of them. to_bytes reduces fully.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

namespace bt::sr25519::internal::field {

// Bytes and words are converted by memcpy.
static_assert(std::endian::native == std::endian::little, "field25519.hpp assumes little-endian");

struct fe {
  std::uint64_t v[5];
};

using u128 = unsigned __int128;
inline constexpr std::uint64_t mask51 = (std::uint64_t{1} << 51) - 1;

inline constexpr fe zero{{0, 0, 0, 0, 0}};
inline constexpr fe one{{1, 0, 0, 0, 0}};

// Reduces five 128-bit column sums (each below 2^120) to loose limbs.
inline fe carry_columns(u128 r0, u128 r1, u128 r2, u128 r3, u128 r4) noexcept {
  fe h;
  r1 += r0 >> 51;
  h.v[0] = static_cast<std::uint64_t>(r0) & mask51;
  r2 += r1 >> 51;
  h.v[1] = static_cast<std::uint64_t>(r1) & mask51;
  r3 += r2 >> 51;
  h.v[2] = static_cast<std::uint64_t>(r2) & mask51;
  r4 += r3 >> 51;
  h.v[3] = static_cast<std::uint64_t>(r3) & mask51;
  h.v[4] = static_cast<std::uint64_t>(r4) & mask51;
  // 2^255 ≡ 19: the carry out of the top limb (below 2^70) re-enters at the bottom.
  const u128 t = u128{h.v[0]} + (r4 >> 51) * 19;
  h.v[0] = static_cast<std::uint64_t>(t) & mask51;
  h.v[1] += static_cast<std::uint64_t>(t >> 51);
  return h;
}

inline fe mul(const fe& f, const fe& g) noexcept {
  const std::uint64_t g1 = 19 * g.v[1], g2 = 19 * g.v[2], g3 = 19 * g.v[3], g4 = 19 * g.v[4];
  const auto m = [](std::uint64_t a, std::uint64_t b) { return u128{a} * b; };
  return carry_columns(
      m(f.v[0], g.v[0]) + m(f.v[1], g4) + m(f.v[2], g3) + m(f.v[3], g2) + m(f.v[4], g1),
      m(f.v[0], g.v[1]) + m(f.v[1], g.v[0]) + m(f.v[2], g4) + m(f.v[3], g3) + m(f.v[4], g2),
      m(f.v[0], g.v[2]) + m(f.v[1], g.v[1]) + m(f.v[2], g.v[0]) + m(f.v[3], g4) + m(f.v[4], g3),
      m(f.v[0], g.v[3]) + m(f.v[1], g.v[2]) + m(f.v[2], g.v[1]) + m(f.v[3], g.v[0]) + m(f.v[4], g4),
      m(f.v[0], g.v[4]) + m(f.v[1], g.v[3]) + m(f.v[2], g.v[2]) + m(f.v[3], g.v[1]) +
          m(f.v[4], g.v[0]));
}

inline fe sqr(const fe& f) noexcept {
  const std::uint64_t f0 = f.v[0], f1 = f.v[1], f2 = f.v[2], f3 = f.v[3], f4 = f.v[4];
  const std::uint64_t d0 = 2 * f0, d1 = 2 * f1;
  const std::uint64_t f3_19 = 19 * f3, f4_19 = 19 * f4, d4_19 = 2 * f4_19;
  const auto m = [](std::uint64_t a, std::uint64_t b) { return u128{a} * b; };
  return carry_columns(m(f0, f0) + m(d1, f4_19) + m(2 * f2, f3_19),
                       m(d0, f1) + m(f3, f3_19) + m(f2, d4_19),
                       m(d0, f2) + m(f1, f1) + m(f3, d4_19), m(d0, f3) + m(d1, f2) + m(f4, f4_19),
                       m(d0, f4) + m(d1, f3) + m(f2, f2));
}

inline fe sqr_times(fe f, int n) noexcept {
  while (n-- > 0) f = sqr(f);
  return f;
}

inline fe add(const fe& f, const fe& g) noexcept {
  return fe{{f.v[0] + g.v[0], f.v[1] + g.v[1], f.v[2] + g.v[2], f.v[3] + g.v[3], f.v[4] + g.v[4]}};
}

// f − g + 8p: every limb of 8p exceeds 2^53, so no limb goes below zero.
inline fe sub(const fe& f, const fe& g) noexcept {
  constexpr std::uint64_t low = 8 * ((std::uint64_t{1} << 51) - 19);
  constexpr std::uint64_t high = 8 * mask51;
  return fe{{f.v[0] + low - g.v[0], f.v[1] + high - g.v[1], f.v[2] + high - g.v[2],
             f.v[3] + high - g.v[3], f.v[4] + high - g.v[4]}};
}

/// One carry pass: limbs below 2^52 again (the value unchanged modulo p).
inline fe weak_reduce(const fe& f) noexcept {
  fe h = f;
  for (int i = 0; i < 4; ++i) {
    h.v[i + 1] += h.v[i] >> 51;
    h.v[i] &= mask51;
  }
  h.v[0] += 19 * (h.v[4] >> 51);
  h.v[4] &= mask51;
  return h;
}

/// −f, loose (for f below 2^53).
inline fe neg(const fe& f) noexcept {
  return weak_reduce(sub(zero, f));
}

/// The canonical 32-byte little-endian encoding (fully reduced below p).
inline std::array<std::uint8_t, 32> to_bytes(const fe& f) noexcept {
  // Three carry passes bring every limb below 2^51 (the top one's carry re-entering at the
  // bottom: after the second, only the bottom limb may still exceed 2^51, by less than 19), so
  // the value lies in [0, 2^255); then subtract p once if it is at least p.
  std::uint64_t h[5] = {f.v[0], f.v[1], f.v[2], f.v[3], f.v[4]};
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < 4; ++i) {
      h[i + 1] += h[i] >> 51;
      h[i] &= mask51;
    }
    h[0] += 19 * (h[4] >> 51);
    h[4] &= mask51;
  }
  std::uint64_t q = (h[0] + 19) >> 51;  // 1 when value + 19 ≥ 2^255, i.e. value ≥ p
  for (int i = 1; i < 5; ++i) q = (h[i] + q) >> 51;
  h[0] += 19 * q;
  for (int i = 0; i < 4; ++i) {
    h[i + 1] += h[i] >> 51;
    h[i] &= mask51;
  }
  h[4] &= mask51;
  const std::uint64_t w[4] = {h[0] | h[1] << 51, h[1] >> 13 | h[2] << 38, h[2] >> 26 | h[3] << 25,
                              h[3] >> 39 | h[4] << 12};
  std::array<std::uint8_t, 32> out;
  std::memcpy(out.data(), w, sizeof w);
  return out;
}

/// The low 255 bits of `bytes` as an element (bit 255 ignored; not reduced: may be ≥ p).
inline fe from_bytes(const std::uint8_t* bytes) noexcept {
  std::uint64_t w[4];
  std::memcpy(w, bytes, sizeof w);
  return fe{{w[0] & mask51, (w[0] >> 51 | w[1] << 13) & mask51, (w[1] >> 38 | w[2] << 26) & mask51,
             (w[2] >> 25 | w[3] << 39) & mask51, (w[3] >> 12) & mask51}};
}

inline bool is_negative(const fe& f) noexcept {
  return (to_bytes(f)[0] & 1) != 0;
}

inline bool is_zero(const fe& f) noexcept {
  const auto b = to_bytes(f);
  std::uint8_t any = 0;
  for (std::uint8_t x : b) any |= x;
  return any == 0;
}

inline bool equal(const fe& f, const fe& g) noexcept {
  return to_bytes(f) == to_bytes(g);
}

/// |f|: f or −f, whichever is non-negative (even).
inline fe abs(const fe& f) noexcept {
  return is_negative(f) ? neg(f) : f;
}

/// z^(2^250 − 1), and z^11 in `z11`: the common stem of inversion and the square-root power.
inline fe pow_2_250_minus_1(const fe& z, fe& z11) noexcept {
  const fe z2 = sqr(z);
  const fe z9 = mul(sqr_times(z2, 2), z);
  z11 = mul(z9, z2);
  const fe e5 = mul(sqr(z11), z9);                  // 2^5 − 1
  const fe e10 = mul(sqr_times(e5, 5), e5);         // 2^10 − 1
  const fe e20 = mul(sqr_times(e10, 10), e10);      // 2^20 − 1
  const fe e40 = mul(sqr_times(e20, 20), e20);      // 2^40 − 1
  const fe e50 = mul(sqr_times(e40, 10), e10);      // 2^50 − 1
  const fe e100 = mul(sqr_times(e50, 50), e50);     // 2^100 − 1
  const fe e200 = mul(sqr_times(e100, 100), e100);  // 2^200 − 1
  return mul(sqr_times(e200, 50), e50);             // 2^250 − 1
}

/// 1/z (z^(p − 2)); 0 for 0.
inline fe invert(const fe& z) noexcept {
  fe z11;
  const fe e250 = pow_2_250_minus_1(z, z11);
  return mul(sqr_times(e250, 5), z11);  // 2^255 − 32 + 11 = p − 2
}

/// z^((p − 5)/8) = z^(2^252 − 3).
inline fe pow_p58(const fe& z) noexcept {
  fe z11;
  const fe e250 = pow_2_250_minus_1(z, z11);
  return mul(sqr_times(e250, 2), z);
}

}  // namespace bt::sr25519::internal::field
