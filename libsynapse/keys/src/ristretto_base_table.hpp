// s·B for ristretto255's base point B without doublings: a fixed-base table of d·2^(6j)·B
// (d = 1..32, j = 0..42, 344 KiB, built once per process on first use) and a scalar recoded into
// 43 signed base-64 digits, so one product is at most 43 point additions (about 5 µs, against
// about 11 µs for libdecaf's constant-time comb). Variable time: for public scalars only (sr25519
// verification). Not a public API.
#pragma once

#include <decaf/point_255.h>

namespace bt::sr25519::internal {

/// out = scalar·B, in variable time.
void base_multiply_public(decaf_255_point_t out, const decaf_255_scalar_t scalar) noexcept;

}  // namespace bt::sr25519::internal
