// Keccak-f[1600], the permutation under SHA3 (sha3.hpp) and the STROBE/Merlin transcripts of
// sr25519 (merlin.hpp).
#pragma once

#include <cstdint>

namespace bt::detail {

/// Applies the 24-round permutation to the 25-lane state (lane i = x + 5y, little-endian).
void keccak_f1600(std::uint64_t state[25]) noexcept;

}  // namespace bt::detail
