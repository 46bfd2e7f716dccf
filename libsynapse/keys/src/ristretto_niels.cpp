#include "ristretto_niels.hpp"

#include <algorithm>

namespace bt::sr25519::internal {

namespace {

using namespace field;

// The curve's constants (RFC 9496, section 4.1), as 51-bit limbs.
constexpr fe edwards_d2{{1859910466990425, 932731440258426, 1072319116312658, 1815898335770999,
                         633789495995903}};  // 2d, d = −121665/121666
constexpr fe edwards_d{
    {929955233495203, 466365720129213, 1662059464998953, 2033849074728123, 1442794654840575}};
constexpr fe sqrt_m1{{1718705420411056, 234908883556509, 2233514472574048, 2117202627021982,
                      765476049583133}};  // √−1
constexpr fe invsqrt_a_minus_d{{278908739862762, 821645201101625, 8113234426968, 1777959178193151,
                                2118520810568447}};  // 1/√(−1 − d)

// RFC 9496's SQRT_RATIO_M1(u, v): whether u/v is a square, and √(u/v) (or √(i·u/v) when it is
// not), non-negative.
struct sqrt_ratio {
  bool was_square;
  fe root;
};

sqrt_ratio sqrt_ratio_m1(const fe& u, const fe& v) noexcept {
  const fe v3 = mul(sqr(v), v);
  const fe v7 = mul(sqr(v3), v);
  fe r = mul(mul(u, v3), pow_p58(mul(u, v7)));
  const fe check = mul(v, sqr(r));
  const fe minus_u = neg(u);
  const bool correct = equal(check, u);
  const bool flipped = equal(check, minus_u);
  const bool flipped_i = equal(check, mul(minus_u, sqrt_m1));
  if (flipped || flipped_i) r = mul(r, sqrt_m1);
  return {correct || flipped, abs(r)};
}

// p + q, both extended (8 multiplications and one by 2d: for building tables).
edwards_point add_full(const edwards_point& p, const edwards_point& q) noexcept {
  const fe a = mul(sub(p.y, p.x), sub(q.y, q.x));
  const fe b = mul(add(p.y, p.x), add(q.y, q.x));
  const fe c = mul(mul(p.t, edwards_d2), q.t);
  const fe zz = mul(p.z, q.z);
  const fe d = add(zz, zz);
  const fe e = sub(b, a), f = sub(d, c), g = add(d, c), h = add(b, a);
  return {mul(e, f), mul(g, h), mul(f, g), mul(e, h)};
}

// 2p (for building tables).
edwards_point double_point(const edwards_point& p) noexcept {
  const fe a = sqr(p.x);
  const fe b = sqr(p.y);
  const fe zz = sqr(p.z);
  const fe c = add(zz, zz);
  const fe h = add(a, b);                   // −(a·X² + Y²) with a = −1, negated: X² + Y²
  const fe e = sub(h, sqr(add(p.x, p.y)));  // −2XY
  const fe g = sub(a, b);                   // −(Y² − X²)
  const fe f = add(c, g);                   // −(Y² − X² − 2Z²)
  // (E, F, G, H) are each the negation of the textbook formula's; the products' signs cancel.
  return {mul(e, f), mul(g, h), mul(f, g), mul(e, h)};
}

}  // namespace

edwards_point edwards_identity() noexcept {
  return {zero, one, one, zero};
}

std::optional<edwards_point> ristretto_decode(std::span<const std::uint8_t, 32> bytes) noexcept {
  const fe s = from_bytes(bytes.data());
  const auto canonical = to_bytes(s);
  if (!std::equal(canonical.begin(), canonical.end(), bytes.begin()) || (bytes[0] & 1) != 0)
    return std::nullopt;  // non-canonical (≥ p, or bit 255 set) or negative
  const fe ss = sqr(s);
  const fe u1 = sub(one, ss);
  const fe u2 = add(one, ss);
  const fe u2_sqr = sqr(u2);
  const fe v = sub(neg(mul(edwards_d, sqr(u1))), u2_sqr);
  const sqrt_ratio inv = sqrt_ratio_m1(one, mul(v, u2_sqr));
  const fe den_x = mul(inv.root, u2);
  const fe den_y = mul(mul(inv.root, den_x), v);
  const fe x = abs(mul(add(s, s), den_x));
  const fe y = mul(u1, den_y);
  const fe t = mul(x, y);
  if (!inv.was_square || is_negative(t) || is_zero(y)) return std::nullopt;
  return edwards_point{x, y, one, t};
}

std::array<std::uint8_t, 32> ristretto_encode(const edwards_point& p) noexcept {
  const fe u1 = mul(add(p.z, p.y), sub(p.z, p.y));
  const fe u2 = mul(p.x, p.y);
  const fe inv = sqrt_ratio_m1(one, mul(u1, sqr(u2))).root;
  const fe den1 = mul(inv, u1);
  const fe den2 = mul(inv, u2);
  const fe z_inv = mul(mul(den1, den2), p.t);
  const bool rotate = is_negative(mul(p.t, z_inv));
  const fe x = rotate ? mul(p.y, sqrt_m1) : p.x;
  fe y = rotate ? mul(p.x, sqrt_m1) : p.y;
  const fe den_inv = rotate ? mul(den1, invsqrt_a_minus_d) : den2;
  if (is_negative(mul(x, z_inv))) y = neg(y);
  return to_bytes(abs(mul(den_inv, sub(p.z, y))));
}

niels_table::niels_table(const edwards_point& p) noexcept {
  // Row by row: the row's multiples in extended coordinates, then all made affine with one
  // inversion (Montgomery's trick: the running products of the Z's, one inverse, and back). On
  // the stack (about 25 KiB), so that building a table allocates nothing.
  constexpr std::size_t per_row = radix::max_digit;
  std::array<edwards_point, per_row> points;
  std::array<fe, per_row> prefix;
  edwards_point power = p;  // 256^j·P
  for (auto& row : rows_) {
    points[0] = power;
    for (std::size_t d = 1; d < per_row; ++d) points[d] = add_full(points[d - 1], power);
    power = double_point(points[per_row - 1]);  // 2·128·256^j·P, the next row's unit
    fe running = one;
    for (std::size_t i = 0; i < per_row; ++i) {
      prefix[i] = running;
      running = mul(running, points[i].z);
    }
    fe inverse = invert(running);  // 1 / (Z_0 · … · Z_127)
    for (std::size_t i = per_row; i-- > 0;) {
      const fe z_inv = mul(inverse, prefix[i]);
      inverse = mul(inverse, points[i].z);
      const fe x = mul(points[i].x, z_inv);
      const fe y = mul(points[i].y, z_inv);
      row[i] = entry{add(y, x), sub(y, x), mul(mul(x, y), edwards_d2)};
    }
  }
}

void niels_table::add_product_public(edwards_point& sum,
                                     const decaf_255_scalar_t scalar) const noexcept {
  const radix::digits digits = recode_signed<8>(scalar);
  const auto at = [&](std::size_t j) -> const entry& {
    return rows_[j][radix::entry_of(digits[j])];
  };
  const auto prefetch = [&](std::size_t j) {
    if (digits[j] != 0) prefetch_bytes(&at(j), sizeof(entry));
  };
  prefetch(0);
  for (std::size_t j = 0; j < digits.size(); ++j) {
    if (j + 1 < digits.size()) prefetch(j + 1);
    const int d = digits[j];
    if (d == 0) continue;
    const entry& q = at(j);
    // Mixed addition (Z of q is 1): 7 multiplications. Subtracting q adds −q = (−x, y), whose
    // form swaps y + x with y − x and negates 2d·x·y.
    const fe a = mul(sub(sum.y, sum.x), d > 0 ? q.y_minus_x : q.y_plus_x);
    const fe b = mul(add(sum.y, sum.x), d > 0 ? q.y_plus_x : q.y_minus_x);
    const fe c = mul(sum.t, q.xy2d);
    const fe zz = add(sum.z, sum.z);
    const fe e = sub(b, a), h = add(b, a);
    const fe f = d > 0 ? sub(zz, c) : add(zz, c);
    const fe g = d > 0 ? add(zz, c) : sub(zz, c);
    sum = {mul(e, f), mul(g, h), mul(f, g), mul(e, h)};
  }
}

void base_add_product_fast(edwards_point& sum, const decaf_255_scalar_t scalar) noexcept {
  // In static storage, built on first use: nothing to allocate, so nothing can fail.
  static const niels_table base([] {
    std::array<std::uint8_t, 32> encoded;
    decaf_255_point_encode(encoded.data(), decaf_255_point_base);
    return *ristretto_decode(encoded);  // B's encoding is canonical
  }());
  base.add_product_public(sum, scalar);
}

}  // namespace bt::sr25519::internal
