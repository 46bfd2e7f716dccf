// SHA3-256: sponge over Keccak-f[1600] with rate 136 bytes and domain padding 0x06.
#include <bt/sha3.hpp>

#include <bt/hex.hpp>
#include "keccak.hpp"

#include <cstring>

namespace bt {
namespace {
constexpr std::size_t rate = 136;

void xor_byte(std::uint64_t state[25], std::size_t pos, std::uint8_t b) noexcept {
  state[pos / 8] ^= static_cast<std::uint64_t>(b) << (8 * (pos % 8));
}
}  // namespace

sha3_256_hasher::sha3_256_hasher() noexcept {
  std::memset(state_, 0, sizeof state_);
}

void sha3_256_hasher::update(std::span<const std::uint8_t> data) noexcept {
  for (std::uint8_t b : data) {
    xor_byte(state_, pos_, b);
    if (++pos_ == rate) {
      detail::keccak_f1600(state_);
      pos_ = 0;
    }
  }
}

void sha3_256_hasher::update(std::string_view data) noexcept {
  update(std::span(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}

sha3_256_digest sha3_256_hasher::finish() noexcept {
  xor_byte(state_, pos_, 0x06);
  xor_byte(state_, rate - 1, 0x80);
  detail::keccak_f1600(state_);
  sha3_256_digest out;
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(state_[i / 8] >> (8 * (i % 8)));
  return out;
}

sha3_256_digest sha3_256(std::span<const std::uint8_t> data) noexcept {
  sha3_256_hasher h;
  h.update(data);
  return h.finish();
}

sha3_256_digest sha3_256(std::string_view data) noexcept {
  sha3_256_hasher h;
  h.update(data);
  return h.finish();
}

std::string sha3_256_hex(std::string_view data) {
  return to_hex(sha3_256(data));
}

}  // namespace bt
