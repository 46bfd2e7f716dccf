#include "strobe.hpp"

#include "keccak.hpp"

#include <sodium.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

namespace bt::detail {
namespace {

constexpr std::uint8_t strobe_r = 166;  // rate in bytes at the 128-bit security level, minus 2
constexpr std::uint8_t flag_i = 1;
constexpr std::uint8_t flag_a = 1 << 1;
constexpr std::uint8_t flag_c = 1 << 2;
constexpr std::uint8_t flag_t = 1 << 3;
constexpr std::uint8_t flag_m = 1 << 4;
constexpr std::uint8_t flag_k = 1 << 5;

// The state is addressed as bytes (STROBE is byte-oriented) but permuted as little-endian lanes.
void permute(std::uint64_t state[25]) noexcept {
  if constexpr (std::endian::native == std::endian::big) {
    for (int i = 0; i < 25; ++i) state[i] = __builtin_bswap64(state[i]);
    keccak_f1600(state);
    for (int i = 0; i < 25; ++i) state[i] = __builtin_bswap64(state[i]);
  } else {
    keccak_f1600(state);
  }
}

}  // namespace

strobe128::strobe128(std::span<const std::uint8_t> protocol_label) noexcept {
  static constexpr std::uint8_t init[18] = {1,   strobe_r + 2, 1,   0,   1,   96,  'S', 'T', 'R',
                                            'O', 'B',          'E', 'v', '1', '.', '0', '.', '2'};
  std::uint8_t* st = bytes();
  for (std::size_t i = 0; i < sizeof init; ++i) st[i] = init[i];
  permute(state_);
  meta_ad(protocol_label, false);
}

strobe128::~strobe128() {
  sodium_memzero(state_, sizeof state_);
}

void strobe128::meta_ad(std::span<const std::uint8_t> data, bool more) noexcept {
  begin_op(flag_m | flag_a, more);
  absorb(data);
}

void strobe128::ad(std::span<const std::uint8_t> data, bool more) noexcept {
  begin_op(flag_a, more);
  absorb(data);
}

void strobe128::prf(std::span<std::uint8_t> out, bool more) noexcept {
  begin_op(flag_i | flag_a | flag_c, more);
  squeeze(out);
}

void strobe128::key(std::span<const std::uint8_t> data, bool more) noexcept {
  begin_op(flag_a | flag_c, more);
  overwrite(data);
}

void strobe128::run_f() noexcept {
  std::uint8_t* st = bytes();
  st[pos_] ^= pos_begin_;
  st[pos_ + 1] ^= 0x04;
  st[strobe_r + 1] ^= 0x80;
  permute(state_);
  pos_ = 0;
  pos_begin_ = 0;
}

// The three byte operations work a block at a time: up to the end of the rate, then run_f.

void strobe128::absorb(std::span<const std::uint8_t> data) noexcept {
  std::uint8_t* st = bytes();
  while (!data.empty()) {
    const std::size_t n = std::min<std::size_t>(data.size(), strobe_r - pos_);
    for (std::size_t i = 0; i < n; ++i) st[pos_ + i] ^= data[i];
    pos_ = static_cast<std::uint8_t>(pos_ + n);
    data = data.subspan(n);
    if (pos_ == strobe_r) run_f();
  }
}

void strobe128::overwrite(std::span<const std::uint8_t> data) noexcept {
  std::uint8_t* st = bytes();
  while (!data.empty()) {
    const std::size_t n = std::min<std::size_t>(data.size(), strobe_r - pos_);
    std::memcpy(st + pos_, data.data(), n);
    pos_ = static_cast<std::uint8_t>(pos_ + n);
    data = data.subspan(n);
    if (pos_ == strobe_r) run_f();
  }
}

void strobe128::squeeze(std::span<std::uint8_t> out) noexcept {
  std::uint8_t* st = bytes();
  while (!out.empty()) {
    const std::size_t n = std::min<std::size_t>(out.size(), strobe_r - pos_);
    std::memcpy(out.data(), st + pos_, n);
    std::memset(st + pos_, 0, n);
    pos_ = static_cast<std::uint8_t>(pos_ + n);
    out = out.subspan(n);
    if (pos_ == strobe_r) run_f();
  }
}

void strobe128::begin_op(std::uint8_t flags, bool more) noexcept {
  if (more) {
    // Continuing an operation: only legal with the same flags (Merlin's length prefixes).
    assert(cur_flags_ == flags);
    return;
  }
  assert((flags & flag_t) == 0);  // no transport operations in this subset
  const std::uint8_t old_begin = pos_begin_;
  pos_begin_ = static_cast<std::uint8_t>(pos_ + 1);
  cur_flags_ = flags;
  const std::uint8_t header[2] = {old_begin, flags};
  absorb(header);
  // Operations with C or K start on a fresh block.
  if ((flags & (flag_c | flag_k)) != 0 && pos_ != 0) run_f();
}

}  // namespace bt::detail
