// SHA3-256: sponge over Keccak-f[1600] with rate 136 bytes and domain padding 0x06.
#include <bt/sha3.hpp>

#include <bt/hex.hpp>
#include "keccak.hpp"

#include <openssl/evp.h>

#include <bit>
#include <cstring>

namespace bt {
namespace {
constexpr std::size_t rate = 136;

void xor_byte(std::uint64_t state[25], std::size_t pos, std::uint8_t b) noexcept {
  state[pos / 8] ^= static_cast<std::uint64_t>(b) << (8 * (pos % 8));
}

/// From this size on a one-shot hash goes to OpenSSL's SHA3-256, whose Keccak (assembly on
/// x86-64) is faster than ours on large inputs; below it the two cost the same and ours needs no
/// library call (docs/performance.md, "Crypto").
constexpr std::size_t openssl_from_bytes = 1024;

/// OpenSSL's SHA3-256, fetched once (a fetch per call costs more than a small hash); null when
/// the library has no provider for it, and then our own Keccak hashes everything.
const EVP_MD* openssl_sha3_256() noexcept {
  static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA3-256", nullptr);
  return md;
}

/// SHA3-256 of `data` through OpenSSL; false when OpenSSL is unavailable or fails (the caller
/// then hashes with our own Keccak: the digest is the same function either way).
bool openssl_hash(std::span<const std::uint8_t> data, sha3_256_digest& out) noexcept {
  const EVP_MD* md = openssl_sha3_256();
  unsigned int size = 0;
  return md != nullptr &&
         EVP_Digest(data.data(), data.size(), out.data(), &size, md, nullptr) == 1 &&
         size == out.size();
}
}  // namespace

sha3_256_hasher::sha3_256_hasher() noexcept {
  std::memset(state_, 0, sizeof state_);
}

void sha3_256_hasher::update(std::span<const std::uint8_t> data) noexcept {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  // Up to a block boundary byte by byte, then whole blocks a 64-bit lane at a time (the lanes
  // are little-endian, as on every target we build for), then the tail byte by byte. Lane-wise
  // absorption is the faster of the two on large inputs (docs/performance.md, "Crypto").
  while (n > 0 && pos_ != 0) {
    xor_byte(state_, pos_, *p++);
    --n;
    if (++pos_ == rate) {
      detail::keccak_f1600(state_);
      pos_ = 0;
    }
  }
  static_assert(std::endian::native == std::endian::little, "lanes are absorbed as little-endian");
  for (; n >= rate; n -= rate, p += rate) {
    for (std::size_t i = 0; i < rate / 8; ++i) {
      std::uint64_t lane;
      std::memcpy(&lane, p + 8 * i, 8);
      state_[i] ^= lane;
    }
    detail::keccak_f1600(state_);
  }
  for (; n > 0; --n) xor_byte(state_, pos_++, *p++);
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
  if (sha3_256_digest out; data.size() >= openssl_from_bytes && openssl_hash(data, out)) return out;
  sha3_256_hasher h;
  h.update(data);
  return h.finish();
}

sha3_256_digest sha3_256(std::string_view data) noexcept {
  return sha3_256(std::span(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}

std::string sha3_256_hex(std::string_view data) {
  return to_hex(sha3_256(data));
}

}  // namespace bt
