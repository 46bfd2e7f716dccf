// Hex helpers shared by keys, signatures and tools.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bt {

/// Lowercase hex, no prefix.
std::string to_hex(std::span<const std::uint8_t> bytes);
/// Writes 2 * bytes.size() lowercase hex digits at `out`: no prefix, no terminator, no
/// allocation (for signatures and digests on the hot path).
void write_hex(std::span<const std::uint8_t> bytes, char* out) noexcept;
/// Parses hex with an optional "0x" prefix; nullopt on odd length or a non-hex character.
std::optional<std::vector<std::uint8_t>> from_hex(std::string_view text);
/// Decodes exactly 2 * out.size() hex digits (either case, no prefix) into `out`; false, with
/// `out` unspecified, when `hex` has another length or a non-hex character.
bool decode_hex(std::string_view hex, std::span<std::uint8_t> out) noexcept;

}  // namespace bt
