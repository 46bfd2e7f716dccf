// The group half of sr25519 verification once the public key is decoded, shared by
// sr25519::verify (which decodes the key itself) and sr25519::key_cache (which keeps decoded keys
// and their tables across calls). Not a public API.
#pragma once

#include <bt/sr25519_batch.hpp>

#include <decaf/point_255.h>

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>

namespace bt::sr25519::internal {

/// The scalars of verify()'s equation R' = s·B − k·A for this signature: `s` and `minus_k` (−k,
/// k the transcript's challenge), or the signature's error (key_errc::invalid_signature).
std::error_code signature_scalars(std::span<const std::uint8_t, 32> pub,
                                  std::span<const std::uint8_t> message,
                                  std::span<const std::uint8_t> sig, std::string_view context,
                                  decaf_255_scalar_t s, decaf_255_scalar_t minus_k) noexcept;

/// verify()'s verdict once R' is computed: {} when R' encodes to the signature's R,
/// key_errc::invalid_signature when R is not a valid encoding, key_errc::signature_mismatch
/// otherwise.
std::error_code compare_with_r(const decaf_255_point_t r_prime,
                               std::span<const std::uint8_t> sig) noexcept;
/// compare_with_r once R' is encoded (`encoded`: a canonical encoding).
std::error_code compare_encoding_with_r(const std::array<std::uint8_t, 32>& encoded,
                                        std::span<const std::uint8_t> sig) noexcept;

/// verify()'s verdict for a key that decodes to `a` (the caller decoded `pub` with
/// decaf_255_point_decode and it succeeded): key_errc::invalid_signature for a malformed
/// signature, key_errc::signature_mismatch or {}. With `a_table` (decaf_255_precompute of `a`)
/// R' = s·B − k·A comes from two fixed-base multiplications instead of one double-scalar
/// multiplication: about 16 against 31 µs, at the cost of building the table once per key
/// (about 38 µs and 9 KiB).
std::error_code verify_decoded(std::span<const std::uint8_t, 32> pub, const decaf_255_point_t a,
                               const decaf_255_precomputed_s* a_table,
                               std::span<const std::uint8_t> message,
                               std::span<const std::uint8_t> sig,
                               std::string_view context) noexcept;

/// Decoded public keys a caller already holds (sr25519::key_cache), for the batch verifier.
class known_points {
 public:
  /// The decoded point of `pub`, valid until the batch call returns, or null: decode it.
  virtual const decaf_255_point_s* find(std::span<const std::uint8_t, 32> pub) noexcept = 0;

 protected:
  ~known_points() = default;
};

/// sr25519::verify_each_with_batch, taking the keys `known` has (may be null) instead of
/// decoding them.
void verify_each_with_batch(std::span<const batch_item> items, std::span<std::error_code> results,
                            std::string_view context, known_points* known) noexcept;

}  // namespace bt::sr25519::internal
