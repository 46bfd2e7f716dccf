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
/// Parses hex with an optional "0x" prefix; nullopt on odd length or a non-hex character.
std::optional<std::vector<std::uint8_t>> from_hex(std::string_view text);

}  // namespace bt
