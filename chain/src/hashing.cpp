// Hashers: blake2b through libsodium's crypto_generichash, xxHash64 through libxxhash.
#include <bt/chain/hashing.hpp>
#include <bt/keypair.hpp>  // bt::init_crypto

#include <algorithm>

#include <sodium.h>
#include <xxhash.h>

namespace bt {
namespace {

template <std::size_t N>
std::array<std::uint8_t, N> blake2b(std::span<const std::uint8_t> data) {
  static_assert(N >= crypto_generichash_BYTES_MIN && N <= crypto_generichash_BYTES_MAX);
  init_crypto();
  std::array<std::uint8_t, N> out{};
  // Unkeyed; crypto_generichash fails only on out-of-range lengths, excluded above.
  crypto_generichash(out.data(), N, data.data(), data.size(), nullptr, 0);
  return out;
}

void put_le64(std::uint64_t v, std::uint8_t* out) noexcept {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

hash256 blake2b_256(std::span<const std::uint8_t> data) {
  return blake2b<32>(data);
}
hash128 blake2b_128(std::span<const std::uint8_t> data) {
  return blake2b<16>(data);
}

std::uint64_t xxhash64(std::span<const std::uint8_t> data, std::uint64_t seed) noexcept {
  return XXH64(data.data(), data.size(), seed);
}

hash128 twox128(std::span<const std::uint8_t> data) noexcept {
  hash128 out{};
  put_le64(xxhash64(data, 0), out.data());
  put_le64(xxhash64(data, 1), out.data() + 8);
  return out;
}

hash128 twox128(std::string_view text) noexcept {
  return twox128(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

std::vector<std::uint8_t> blake2_128_concat(std::span<const std::uint8_t> data) {
  const hash128 h = blake2b_128(data);
  std::vector<std::uint8_t> out(h.size() + data.size());  // sized once
  std::copy(h.begin(), h.end(), out.begin());
  std::copy(data.begin(), data.end(), out.begin() + static_cast<std::ptrdiff_t>(h.size()));
  return out;
}

std::array<std::uint8_t, 32> storage_prefix(std::string_view pallet,
                                            std::string_view item) noexcept {
  std::array<std::uint8_t, 32> out{};
  const hash128 a = twox128(pallet);
  const hash128 b = twox128(item);
  std::copy(a.begin(), a.end(), out.begin());
  std::copy(b.begin(), b.end(), out.begin() + 16);
  return out;
}

std::vector<std::uint8_t> axons_storage_key(std::uint16_t netuid,
                                            const std::array<std::uint8_t, 32>& hotkey) {
  const auto prefix = storage_prefix("SubtensorModule", "Axons");
  std::vector<std::uint8_t> key(prefix.begin(), prefix.end());
  key.push_back(static_cast<std::uint8_t>(netuid));
  key.push_back(static_cast<std::uint8_t>(netuid >> 8));
  const auto hk = blake2_128_concat(hotkey);
  key.insert(key.end(), hk.begin(), hk.end());
  return key;
}

}  // namespace bt
