// Expected digests were computed independently with @polkadot/util-crypto 14.0.3 (xxhashAsHex,
// blake2AsHex), the library the Node peers of tests/node use; the xxHash64 values are the
// reference implementation's published test values.
#include <bt/chain/hashing.hpp>
#include <bt/hex.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

namespace {

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

TEST_CASE("hashing: xxHash64 matches the reference test values", "[hashing]") {
  CHECK(bt::xxhash64({}, 0) == 0xef46db3751d8e999ull);
  CHECK(bt::xxhash64(bytes_of("abc"), 0) == 0x44bc2cf5ad770999ull);
}

TEST_CASE("hashing: twox128 of pallet and item names equals polkadot-js", "[hashing]") {
  CHECK(bt::to_hex(bt::twox128("SubtensorModule")) == "658faa385070e074c85bf6b568cf0555");
  CHECK(bt::to_hex(bt::twox128("Axons")) == "b4e0c7b1d5f74994fcd58c28ab601fec");
  CHECK(bt::to_hex(bt::twox128(std::string_view{})) == "99e9d85137db46ef4bbea33613baafd5");
}

TEST_CASE("hashing: blake2b-256 and blake2b-128 equal polkadot-js", "[hashing]") {
  CHECK(bt::to_hex(bt::blake2b_256(bytes_of("abc"))) ==
        "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
  CHECK(bt::to_hex(bt::blake2b_256({})) ==
        "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
  CHECK(bt::to_hex(bt::blake2b_128(bytes_of("abc"))) == "cf4ab791c62b8d2b2109c90275287816");
}

TEST_CASE("hashing: Blake2_128Concat and the Axons storage key", "[hashing]") {
  std::array<std::uint8_t, 32> hotkey{};
  for (std::size_t i = 0; i < hotkey.size(); ++i) hotkey[i] = static_cast<std::uint8_t>(i);
  const std::string hk_hex = bt::to_hex(hotkey);
  CHECK(bt::to_hex(bt::blake2_128_concat(hotkey)) == "f39a2cad58411cd49f577e5086b8031f" + hk_hex);
  CHECK(bt::to_hex(bt::storage_prefix("SubtensorModule", "Axons")) ==
        "658faa385070e074c85bf6b568cf0555b4e0c7b1d5f74994fcd58c28ab601fec");
  // netuid 1 as Identity(u16 LE) = 0100, then Blake2_128Concat(hotkey).
  CHECK(bt::to_hex(bt::axons_storage_key(1, hotkey)) ==
        "658faa385070e074c85bf6b568cf0555b4e0c7b1d5f74994fcd58c28ab601fec0100"
        "f39a2cad58411cd49f577e5086b8031f" +
            hk_hex);
}
