// sr25519 batch verification: many (public key, message, signature) items under one signing
// context decided together by one randomised equation, with the same verdicts as
// bt::sr25519::verify (sr25519.hpp) item by item. docs/protocol.md section 9.2 (signatures);
// docs/performance.md "Batch verification" (what it costs).
//
// The check (schnorrkel's verify_batch, on ristretto255): with independent random 128-bit weights
// z_i from libsodium's randombytes,
//     Σ z_i·R_i + Σ_A (Σ_{i: A_i = A} z_i·k_i)·A − (Σ z_i·s_i)·B == identity,
// one variable-time multi-scalar multiplication, where k_i is item i's challenge. Ristretto255 is
// a prime-order group (no cofactor to clear), so the equation holds for every choice of weights
// exactly when each item's R_i = s_i·B − k_i·A_i holds, which is what verify() checks; when some
// item is invalid, the equation holds with probability at most 2^-128 over the weights, which are
// fresh for every call and never derived from the inputs. Items sharing a public key share one
// term (validators are few, so most batches repeat keys).
//
// All functions expect libsodium to be initialised (bt::init_crypto(), keypair.hpp). None throws.
// Thread safety: reentrant; randomness comes from libsodium. Variable time: every input is public.
#pragma once

#include <bt/sr25519.hpp>

#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>

namespace bt::sr25519 {

/// One signature to verify. Views only: the bytes must outlive the call.
struct batch_item {
  std::span<const std::uint8_t, 32> public_key;
  std::span<const std::uint8_t> message;
  std::span<const std::uint8_t> signature;
};

/// Returns {} when every item verifies (an empty batch included), as verify() would report for
/// each. Otherwise an error, without saying which item:
/// - the error verify() reports for the first malformed item (by index) when any item is
///   malformed: key_errc::invalid_signature (length, marker, s >= l, R not a canonical encoding)
///   or key_errc::invalid_public_key (A not a canonical encoding). Malformed items are found
///   before any group arithmetic, and the equation is then not evaluated;
/// - key_errc::signature_mismatch when every item is well formed but the batch equation fails.
/// A batch of one well-formed item is decided by verify() itself (the same verdict, cheaper).
/// Use verify_each_with_batch to learn which items failed.
std::error_code verify_batch(std::span<const batch_item> items,
                             std::string_view context = substrate_context) noexcept;

/// Per-item verdicts at batch cost when all are valid: results[i] == verify(items[i]...) for
/// every i (with probability at least 1 − 2^-128 per call). Malformed items get verify()'s
/// parsing error and are left out of the batch; the well-formed rest is checked by one batch
/// equation, and only when that fails is each of them verified alone with verify(), so a forged
/// or corrupted signature costs the batch its speed but never makes an honest item fail.
/// `results` must have items.size() elements; otherwise every element it has is set to
/// std::errc::invalid_argument and nothing is verified.
void verify_each_with_batch(std::span<const batch_item> items, std::span<std::error_code> results,
                            std::string_view context = substrate_context) noexcept;

}  // namespace bt::sr25519
