// Substrate's hashers: blake2b (256 and 128 bit, unkeyed), twox (xxHash64 concatenated over
// seeds 0, 1, ...) and the storage-map key hashers built on them, plus storage keys.
//
// Contract: pure functions of their input; never throw (libsodium is initialised on first use
// through bt::init_crypto, which throws only if libsodium itself cannot start).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace bt {

using hash256 = std::array<std::uint8_t, 32>;
using hash128 = std::array<std::uint8_t, 16>;

/// BLAKE2b with a 32-byte digest (Substrate's Blake2_256, the extrinsic payload hash).
hash256 blake2b_256(std::span<const std::uint8_t> data);
/// BLAKE2b with a 16-byte digest (Substrate's Blake2_128; the digest length is a BLAKE2
/// parameter, so this is not a truncation of blake2b_256).
hash128 blake2b_128(std::span<const std::uint8_t> data);
/// xxHash64 with the given seed.
std::uint64_t xxhash64(std::span<const std::uint8_t> data, std::uint64_t seed) noexcept;
/// Twox128: xxHash64(seed 0) ++ xxHash64(seed 1), each little-endian.
hash128 twox128(std::span<const std::uint8_t> data) noexcept;
hash128 twox128(std::string_view text) noexcept;
/// Blake2_128Concat: blake2b_128(data) ++ data (a map hasher that keeps the key readable).
std::vector<std::uint8_t> blake2_128_concat(std::span<const std::uint8_t> data);
/// twox128(pallet) ++ twox128(item): the key of a storage value, the prefix of a storage map.
std::array<std::uint8_t, 32> storage_prefix(std::string_view pallet,
                                            std::string_view item) noexcept;
/// The key of SubtensorModule.Axons(netuid, hotkey): the prefix, Identity(netuid as u16 LE),
/// Blake2_128Concat(hotkey).
std::vector<std::uint8_t> axons_storage_key(std::uint16_t netuid,
                                            const std::array<std::uint8_t, 32>& hotkey);

}  // namespace bt
