// Keccak-f[1600] (FIPS 202, section 3), a straightforward lane-oriented implementation.
// The loops are fully unrolled (pragmas) and the rounds work on a local copy of the state, so the
// compiler may keep the lanes in registers across rounds (writes through the caller's pointer
// would have to reach memory every round): the permutation is the cost of every body hash over a
// large field and of the STROBE/Merlin transcripts (one sr25519 signature runs six of them).
#include "keccak.hpp"

namespace bt::detail {
namespace {

constexpr std::uint64_t round_constants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

// rho offsets and pi destinations in the order the combined rho-pi step visits lanes.
constexpr int rho_offsets[24] = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                                 27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
constexpr int pi_lanes[24] = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                              15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

constexpr std::uint64_t rotl(std::uint64_t x, int n) noexcept {
  return (x << n) | (x >> (64 - n));
}

}  // namespace

void keccak_f1600(std::uint64_t state[25]) noexcept {
  std::uint64_t a[25];
#pragma GCC unroll 25
  for (int i = 0; i < 25; ++i) a[i] = state[i];
  for (std::uint64_t rc : round_constants) {
    // theta
    std::uint64_t c[5];
#pragma GCC unroll 5
    for (int x = 0; x < 5; ++x) c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
#pragma GCC unroll 5
    for (int x = 0; x < 5; ++x) {
      const std::uint64_t d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1);
#pragma GCC unroll 5
      for (int y = 0; y < 25; y += 5) a[y + x] ^= d;
    }
    // rho and pi
    std::uint64_t carry = a[1];
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) {
      const int j = pi_lanes[i];
      const std::uint64_t next = a[j];
      a[j] = rotl(carry, rho_offsets[i]);
      carry = next;
    }
    // chi
#pragma GCC unroll 5
    for (int y = 0; y < 25; y += 5) {
      std::uint64_t row[5];
#pragma GCC unroll 5
      for (int x = 0; x < 5; ++x) row[x] = a[y + x];
#pragma GCC unroll 5
      for (int x = 0; x < 5; ++x) a[y + x] = row[x] ^ (~row[(x + 1) % 5] & row[(x + 2) % 5]);
    }
    // iota
    a[0] ^= rc;
  }
#pragma GCC unroll 25
  for (int i = 0; i < 25; ++i) state[i] = a[i];
}

}  // namespace bt::detail
