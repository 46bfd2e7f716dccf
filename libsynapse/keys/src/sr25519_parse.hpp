// What every sr25519 verifier shares before any group arithmetic (schnorrkel's verify_simple up
// to the point operations), for sr25519.cpp and sr25519_batch.cpp. Not a public API.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>

namespace bt::sr25519::internal {

using scalar32 = std::array<std::uint8_t, 32>;  ///< a scalar's 32 little-endian bytes

/// The signature's shape and challenge: length 64, the schnorrkel marker (NotMarkedSchnorrkel),
/// s < l (ScalarFormatError), then k from the signing transcript over (context, message, pub, R).
/// Returns {} and fills `s` (the marker cleared) and `k` (reduced), both canonical (< l), when the
/// signature is well formed; otherwise key_errc::invalid_signature. Neither R nor `pub` is decoded
/// here: the callers decode them with their group library.
std::error_code parse_and_challenge(std::span<const std::uint8_t, 32> pub,
                                    std::span<const std::uint8_t> message,
                                    std::span<const std::uint8_t> sig, std::string_view context,
                                    scalar32& s, scalar32& k) noexcept;

}  // namespace bt::sr25519::internal
