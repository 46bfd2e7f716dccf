// The BIP39 English word list, generated at configure time by libsynapse/keys/cmake/wordlist.cmake
// from the Debian package python3-mnemonic (checked against the list's published SHA-256).
#pragma once

#include <array>
#include <string_view>

namespace bt::detail {

/// The 2048 words in BIP39 order (which is also ascending byte order, so binary search works).
extern const std::array<std::string_view, 2048> bip39_english;

}  // namespace bt::detail
