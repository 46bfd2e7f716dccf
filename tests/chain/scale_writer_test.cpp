#include <bt/chain/scale_reader.hpp>
#include <bt/chain/scale_writer.hpp>
#include <bt/hex.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace {

template <typename F>
std::string encoded(F&& f) {
  bt::scale_writer w;
  f(w);
  return bt::to_hex(w.view());
}

}  // namespace

TEST_CASE("scale_writer: compact integers match the SCALE specification's examples",
          "[scale_writer]") {
  // The examples of the SCALE codec's documentation (docs.substrate.io, "SCALE encoding").
  const auto c = [](std::uint64_t v) {
    return encoded([&](bt::scale_writer& w) { w.compact(v); });
  };
  CHECK(c(0) == "00");
  CHECK(c(1) == "04");
  CHECK(c(42) == "a8");
  CHECK(c(63) == "fc");
  CHECK(c(64) == "0101");
  CHECK(c(69) == "1501");
  CHECK(c(16383) == "fdff");
  CHECK(c(16384) == "02000100");
  CHECK(c(65535) == "feff0300");
  CHECK(c((1u << 30) - 1) == "feffffff");
  CHECK(c(1u << 30) == "0300000040");
  CHECK(c(100000000000000ull) == "0b00407a10f35a");
  CHECK(c(std::numeric_limits<std::uint64_t>::max()) == "13ffffffffffffffff");
  CHECK(encoded([](bt::scale_writer& w) { w.compact_u128(~static_cast<bt::uint128_t>(0)); }) ==
        "33" + std::string(32, 'f'));
}

TEST_CASE("scale_writer: fixed integers, bool, option, bytes and text", "[scale_writer]") {
  CHECK(encoded([](bt::scale_writer& w) { w.u8(69); }) == "45");
  CHECK(encoded([](bt::scale_writer& w) { w.u16(42); }) == "2a00");
  CHECK(encoded([](bt::scale_writer& w) { w.u32(16777215); }) == "ffffff00");
  CHECK(encoded([](bt::scale_writer& w) { w.u64(1); }) == "0100000000000000");
  CHECK(encoded([](bt::scale_writer& w) {
          w.u128((static_cast<bt::uint128_t>(0x0102030405060708ull) << 64) | 0x090a0b0c0d0e0f10ull);
        }) == "100f0e0d0c0b0a090807060504030201");
  CHECK(encoded([](bt::scale_writer& w) { w.boolean(true), w.boolean(false); }) == "0100");
  // Option<u32>: None, then Some(7).
  CHECK(encoded([](bt::scale_writer& w) {
          w.option(false);
          w.option(true);
          w.u32(7);
        }) == "000107000000");
  // Vec<u16> [4, 8, 15, 16, 23, 42]: the specification's example.
  CHECK(encoded([](bt::scale_writer& w) {
          w.length(6);
          for (std::uint16_t v : {4, 8, 15, 16, 23, 42}) w.u16(v);
        }) == "18040008000f00100017002a00");
  CHECK(encoded([](bt::scale_writer& w) { w.text("SubtensorModule"); }) ==
        "3c" + bt::to_hex(std::span(reinterpret_cast<const std::uint8_t*>("SubtensorModule"), 15)));
  const std::uint8_t raw[] = {1, 2, 3};
  CHECK(encoded([&](bt::scale_writer& w) { w.byte_vec(raw); }) == "0c010203");
  CHECK(encoded([&](bt::scale_writer& w) { w.bytes(raw); }) == "010203");
}

TEST_CASE("scale_writer: every compact mode boundary round-trips through scale_reader",
          "[scale_writer]") {
  std::vector<bt::uint128_t> values;
  for (int bit = 0; bit < 128; ++bit) {
    const bt::uint128_t p = static_cast<bt::uint128_t>(1) << bit;
    values.push_back(p - 1);
    values.push_back(p);
    values.push_back(p + 1);
  }
  values.push_back(~static_cast<bt::uint128_t>(0));
  for (const auto v : values) {
    bt::scale_writer w;
    w.compact_u128(v);
    bt::scale_reader r(w.view());
    // The reader refuses non-canonical encodings, so this also proves the writer picks the
    // shortest mode.
    CHECK(r.compact_u128("v") == v);
    CHECK(r.at_end());
    if (v <= std::numeric_limits<std::uint64_t>::max()) {
      bt::scale_reader r64(w.view());
      CHECK(r64.compact("v") == static_cast<std::uint64_t>(v));
    }
  }
}

TEST_CASE("scale_writer: a record of every kind round-trips through scale_reader",
          "[scale_writer]") {
  bt::scale_writer w;
  w.u8(0xab);
  w.u16(0xbeef);
  w.u32(0xdeadbeef);
  w.u64(0x0123456789abcdefull);
  w.u128(static_cast<bt::uint128_t>(0xffeeddccbbaa9988ull) << 64 | 7);
  w.boolean(true);
  w.option(true);
  w.compact(300);
  w.text("Axons");
  std::array<std::uint8_t, 32> account{};
  for (std::size_t i = 0; i < account.size(); ++i) account[i] = static_cast<std::uint8_t>(i * 7);
  w.bytes(account);
  const auto bytes = w.take();
  CHECK(w.size() == 0);

  bt::scale_reader r(bytes);
  CHECK(r.u8("a") == 0xab);
  CHECK(r.u16("b") == 0xbeef);
  CHECK(r.u32("c") == 0xdeadbeef);
  CHECK(r.u64("d") == 0x0123456789abcdefull);
  CHECK(r.u128("e") == (static_cast<bt::uint128_t>(0xffeeddccbbaa9988ull) << 64 | 7));
  CHECK(r.boolean("f"));
  CHECK(r.option("g"));
  CHECK(r.compact("h") == 300);
  CHECK(r.text("i") == "Axons");
  CHECK(r.account_id("j") == account);
  r.expect_end("record");
}
