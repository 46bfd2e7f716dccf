// uuid texts for the axon's and the dendrite's instance ids and the axon's error ids.
#include <bt/detail/uuid.hpp>

#include <bt/detail/text.hpp>
#include <bt/keypair.hpp>  // init_crypto

#include <sodium.h>

#include <array>
#include <chrono>
#include <cstdint>

namespace bt::detail {
namespace {

/// Writes 16 bytes as 8-4-4-4-12 lower-case hex groups (36 characters).
std::string uuid_text(const std::array<std::uint8_t, 16>& b) {
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(hex_digit(b[i] >> 4));
    out.push_back(hex_digit(b[i]));
  }
  return out;
}

}  // namespace

std::string make_uuid1() {
  init_crypto();  // randombytes_buf wants sodium_init() first
  // RFC 4122 version 1: a 60-bit count of 100 ns intervals since 1582-10-15, then the clock
  // sequence (variant bits 10) and the node, both random here.
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::uint64_t t =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() /
                                 100) +
      0x01B21DD213814000ULL;
  std::array<std::uint8_t, 8> rnd{};
  randombytes_buf(rnd.data(), rnd.size());
  const auto time_low = static_cast<std::uint32_t>(t & 0xFFFFFFFFu);
  const auto time_mid = static_cast<std::uint16_t>((t >> 32) & 0xFFFFu);
  const auto time_hi = static_cast<std::uint16_t>(((t >> 48) & 0x0FFFu) | 0x1000u);
  const auto clock_seq = static_cast<std::uint16_t>(((rnd[0] << 8 | rnd[1]) & 0x3FFFu) | 0x8000u);
  const std::array<std::uint8_t, 16> b{static_cast<std::uint8_t>(time_low >> 24),
                                       static_cast<std::uint8_t>(time_low >> 16),
                                       static_cast<std::uint8_t>(time_low >> 8),
                                       static_cast<std::uint8_t>(time_low),
                                       static_cast<std::uint8_t>(time_mid >> 8),
                                       static_cast<std::uint8_t>(time_mid),
                                       static_cast<std::uint8_t>(time_hi >> 8),
                                       static_cast<std::uint8_t>(time_hi),
                                       static_cast<std::uint8_t>(clock_seq >> 8),
                                       static_cast<std::uint8_t>(clock_seq),
                                       static_cast<std::uint8_t>(rnd[2] | 0x01),  // multicast bit
                                       rnd[3],
                                       rnd[4],
                                       rnd[5],
                                       rnd[6],
                                       rnd[7]};
  return uuid_text(b);
}

std::string make_uuid4() {
  init_crypto();
  std::array<std::uint8_t, 16> b{};
  randombytes_buf(b.data(), b.size());
  b[6] = static_cast<std::uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<std::uint8_t>((b[8] & 0x3f) | 0x80);  // variant 10
  return uuid_text(b);
}

}  // namespace bt::detail
