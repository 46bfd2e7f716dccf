// SS58 addresses (PROTOCOL 9.1): base58(prefix || public key || checksum), checksum =
// BLAKE2b-512("SS58PRE" || prefix || public key)[0..2]; formats 0..63 take one prefix byte,
// 64..16383 two. Bittensor uses format 42 (addresses starting with '5').
//
// Only 32-byte account ids are handled (sr25519 and ed25519 public keys). Never throws except
// the throwing overloads. Expects libsodium to be initialised (bt::init_crypto()).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace bt::ss58 {

inline constexpr int default_format = 42;  ///< Substrate's generic format, Bittensor's
inline constexpr int max_format = 16383;

/// A decoded address.
struct decoded {
  std::array<std::uint8_t, 32> public_key{};
  std::uint16_t format = 0;
};

/// Encodes; ss58_bad_prefix for a format outside 0..16383, ss58_reserved_prefix for 46 and 47.
std::optional<std::string> encode(std::span<const std::uint8_t, 32> public_key, int format,
                                  std::error_code& ec);
/// Throws std::system_error with the same codes.
std::string encode(std::span<const std::uint8_t, 32> public_key, int format = default_format);

/// Decodes like sp-core's from_ss58check_with_version for a 32-byte key, checking in this order:
/// ss58_bad_character (outside the base58 alphabet), ss58_bad_length (fewer than 2 bytes),
/// ss58_bad_prefix (first byte >= 128), ss58_bad_length (not prefix + 32 + 2 bytes),
/// ss58_reserved_prefix (46, 47), ss58_bad_checksum. Any other format is accepted (unlike
/// sp-core's registry check; see docs/protocol.md, defect D25); callers that require 42 compare
/// `format` themselves.
std::optional<decoded> decode(std::string_view address, std::error_code& ec) noexcept;
/// Throws std::system_error with the same codes.
decoded decode(std::string_view address);

}  // namespace bt::ss58
