// Fuzz target: the hot verification path's own ristretto255 arithmetic
// (libsynapse/keys/src/ristretto_niels.hpp, field25519.hpp) against libdecaf's.
//
// Invariants:
//  - the first 32 bytes decode with ours exactly when they decode with libdecaf's (identity
//    allowed), and a decoded point encodes back to the same 32 bytes;
//  - with 64 bytes or more, bytes 32..63 read as a scalar (reduced modulo the group order):
//    s·B from our table of B encodes as libdecaf's s·B, and so does s·B + P for the decoded
//    point P (one table addition on top of a point that did not come from a table).
#include "field25519.hpp"
#include "ristretto_niels.hpp"

#include "fuzz_support.hpp"

#include <array>
#include <cstring>

namespace {

using bytes32 = std::array<std::uint8_t, 32>;

bytes32 decaf_encode(const decaf_255_point_t p) {
  bytes32 b;
  decaf_255_point_encode(b.data(), p);
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace in = bt::sr25519::internal;
  bt::fuzz::init_once();
  if (size < 32) return 0;
  bytes32 encoding;
  std::memcpy(encoding.data(), data, 32);

  decaf_255_point_t reference;
  const bool decaf_ok =
      decaf_255_point_decode(reference, encoding.data(), DECAF_TRUE) == DECAF_SUCCESS;
  const auto ours = in::ristretto_decode(encoding);
  BT_FUZZ_CHECK(ours.has_value() == decaf_ok);
  if (ours) BT_FUZZ_CHECK(in::ristretto_encode(*ours) == encoding);

  if (size < 64) return 0;
  decaf_255_scalar_t s;
  decaf_255_scalar_decode_long(s, data + 32, 32);
  in::edwards_point sum = ours ? *ours : in::edwards_identity();
  in::base_add_product_fast(sum, s);
  decaf_255_point_t product;
  decaf_255_precomputed_scalarmul(product, decaf_255_precomputed_base, s);
  if (decaf_ok) decaf_255_point_add(product, product, reference);
  BT_FUZZ_CHECK(in::ristretto_encode(sum) == decaf_encode(product));
  return 0;
}
