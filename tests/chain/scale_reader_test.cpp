// bt::scale_reader: every compact mode at its boundaries, the canonical-encoding rule, fixed
// integers, bool/Option tags, and the errors (truncation, trailing bytes, over-long lengths) that
// must name the field and the offset.
#include <bt/chain/scale_reader.hpp>

#include <catch2/catch.hpp>

#include "decode_error_of.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using bt::test::error_of;

using bytes = std::vector<std::uint8_t>;

// An independent compact encoder (the spec's rules written out), to check the reader against.
bytes encode_compact(bt::uint128_t v) {
  if (v < 64) return {static_cast<std::uint8_t>(v << 2)};
  if (v < (1U << 14)) {
    const auto x = static_cast<std::uint16_t>((v << 2) | 1);
    return {static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(x >> 8)};
  }
  if (v < (1U << 30)) {
    const auto x = static_cast<std::uint32_t>((v << 2) | 2);
    return {static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(x >> 8),
            static_cast<std::uint8_t>(x >> 16), static_cast<std::uint8_t>(x >> 24)};
  }
  bytes le;
  for (bt::uint128_t t = v; t != 0; t >>= 8) le.push_back(static_cast<std::uint8_t>(t));
  bytes out{static_cast<std::uint8_t>(((le.size() - 4) << 2) | 3)};
  out.insert(out.end(), le.begin(), le.end());
  return out;
}

std::uint64_t read_compact(const bytes& b) {
  bt::scale_reader r(b);
  const auto v = r.compact("x");
  r.expect_end("x");
  return v;
}

}  // namespace

TEST_CASE("scale: compact integers decode at every mode boundary", "[scale]") {
  struct c {
    std::uint64_t value;
    bytes encoded;
  };
  const std::vector<c> cases = {
      {0, {0x00}},
      {1, {0x04}},
      {63, {0xfc}},
      {64, {0x01, 0x01}},
      {16383, {0xfd, 0xff}},
      {16384, {0x02, 0x00, 0x01, 0x00}},
      {(1U << 30) - 1, {0xfe, 0xff, 0xff, 0xff}},
      {1U << 30, {0x03, 0x00, 0x00, 0x00, 0x40}},
      {0xffffffffULL, {0x03, 0xff, 0xff, 0xff, 0xff}},
      {0x100000000ULL, {0x07, 0x00, 0x00, 0x00, 0x00, 0x01}},
      {(1ULL << 56) - 1, {0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
      {1ULL << 56, {0x13, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}},
      {std::numeric_limits<std::uint64_t>::max(),
       {0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
  };
  for (const auto& k : cases) {
    INFO(k.value);
    CHECK(encode_compact(k.value) == k.encoded);  // the test's encoder agrees with the spec
    CHECK(read_compact(k.encoded) == k.value);
  }
  // Every value near each boundary round-trips through the independent encoder.
  for (std::uint64_t edge :
       {64ULL, 1ULL << 14, 1ULL << 30, 1ULL << 32, 1ULL << 40, 1ULL << 48, 1ULL << 56}) {
    for (std::uint64_t v = edge - 2; v <= edge + 2; ++v)
      CHECK(read_compact(encode_compact(v)) == v);
  }
}

TEST_CASE("scale: compact_u128 reads values above u64 that compact refuses", "[scale]") {
  const bt::uint128_t big = (static_cast<bt::uint128_t>(1) << 100) + 12345;
  const auto enc = encode_compact(big);
  bt::scale_reader r(enc);
  CHECK(r.compact_u128("balance") == big);
  CHECK(r.at_end());
  const auto e = error_of([&] { read_compact(enc); });
  CHECK(e.code() == bt::chain_errc::invalid_compact);
  CHECK(e.error().detail.find("exceeds u64") != std::string::npos);

  const bt::uint128_t max = ~static_cast<bt::uint128_t>(0);
  const auto enc_max = encode_compact(max);
  bt::scale_reader r3(enc_max);
  CHECK(r3.compact_u128("balance") == max);
  // 17 bytes cannot be a u128.
  bytes wide{static_cast<std::uint8_t>(((17 - 4) << 2) | 3)};
  wide.insert(wide.end(), 17, 0xff);
  CHECK(error_of([&] {
          bt::scale_reader w(wide);
          w.compact_u128("balance");
        }).code() == bt::chain_errc::invalid_compact);
}

// parity-scale-codec's decoders refuse a value encoded in a wider mode than it needs (the
// Compact<u64>/<u128> decoders check each mode's lower bound); so do we, so that one value has
// one encoding.
TEST_CASE("scale: non-canonical compact encodings are refused", "[scale]") {
  const std::vector<bytes> non_canonical = {
      {0x01, 0x00},                          // 0 in two-byte mode
      {0xfd, 0x00},                          // 63 in two-byte mode
      {0x02, 0x00, 0x00, 0x00},              // 0 in four-byte mode
      {0xfe, 0xff, 0x00, 0x00},              // 16383 in four-byte mode
      {0x03, 0xff, 0xff, 0xff, 0x3f},        // 2^30-1 in big-integer mode
      {0x03, 0x00, 0x00, 0x00, 0x00},        // 0 in big-integer mode
      {0x07, 0xff, 0xff, 0xff, 0xff, 0x00},  // 2^32-1 with a zero top byte (5 bytes)
      {0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00},  // 2^56-1 in 8 bytes
  };
  for (const auto& b : non_canonical) {
    const auto e = error_of([&] { read_compact(b); });
    CHECK(e.code() == bt::chain_errc::invalid_compact);
    CHECK(e.offset() == 0);
    CHECK(e.error().what == "x");
    CHECK(e.error().detail.find("non-canonical") != std::string::npos);
  }
  // Nine bytes exceed u64 even with the top byte set: invalid for compact(), valid for u128.
  const bytes nine{0x17, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  CHECK(error_of([&] { read_compact(nine); }).code() == bt::chain_errc::invalid_compact);
}

TEST_CASE("scale: compact_u16 and compact_u32 check their range", "[scale]") {
  const auto b = encode_compact(65535);
  bt::scale_reader ok(b);
  CHECK(ok.compact_u16("uid") == 65535);
  const auto over = encode_compact(65536);
  bt::scale_reader r(over);
  const auto e = error_of([&] { r.compact_u16("uid"); });
  CHECK(e.code() == bt::chain_errc::invalid_compact);
  CHECK(e.error().what == "uid");
  const auto b32 = encode_compact(0xffffffffULL);
  bt::scale_reader ok32(b32);
  CHECK(ok32.compact_u32("v") == 0xffffffffU);
  const auto over32 = encode_compact(0x100000000ULL);
  bt::scale_reader r32(over32);
  CHECK(error_of([&] { r32.compact_u32("v"); }).code() == bt::chain_errc::invalid_compact);
}

TEST_CASE("scale: fixed-width integers are little-endian", "[scale]") {
  bytes b{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
  for (int i = 0; i < 16; ++i) b.push_back(static_cast<std::uint8_t>(0xf0 + i));
  bt::scale_reader r(b);
  CHECK(r.u8("a") == 0x01);
  CHECK(r.u16("b") == 0x0302);
  CHECK(r.u32("c") == 0x07060504U);
  CHECK(r.u64("d") == 0x0f0e0d0c0b0a0908ULL);
  const bt::uint128_t v = r.u128("e");
  CHECK(static_cast<std::uint64_t>(v) == 0xf7f6f5f4f3f2f1f0ULL);
  CHECK(static_cast<std::uint64_t>(v >> 64) == 0xfffefdfcfbfaf9f8ULL);
  CHECK(r.at_end());
  CHECK(r.offset() == b.size());
}

TEST_CASE("scale: bool and Option tags accept only 0 and 1", "[scale]") {
  const bytes b{0x00, 0x01, 0x00, 0x01, 0x02};
  bt::scale_reader r(b);
  CHECK_FALSE(r.boolean("a"));
  CHECK(r.boolean("b"));
  CHECK_FALSE(r.option("c"));
  CHECK(r.option("d"));
  const auto e = error_of([&] { r.boolean("active"); });
  CHECK(e.code() == bt::chain_errc::invalid_bool);
  CHECK(e.offset() == 4);
  CHECK(e.error().what == "active");
  bt::scale_reader r2(b);
  r2.bytes(4, "skip");
  CHECK(error_of([&] { r2.option("result"); }).code() == bt::chain_errc::invalid_option);
}

TEST_CASE("scale: truncation names the field and the offset", "[scale]") {
  const bytes b{0x01, 0x02, 0x03};
  bt::scale_reader r(b);
  r.u8("first");
  const auto e = error_of([&] { r.u32("axon_info.version"); });
  CHECK(e.code() == bt::chain_errc::truncated);
  CHECK(e.offset() == 1);
  CHECK(e.error().what == "axon_info.version");
  CHECK(e.error().detail.find("at offset 1") != std::string::npos);
  CHECK(std::string(e.what()).find("axon_info.version") != std::string::npos);
  CHECK(r.offset() == 1);  // a failed read does not move the reader

  // A compact cut inside its extra bytes, and an account id cut short.
  const bytes cut{0x02, 0x00};
  bt::scale_reader rc(cut);
  CHECK(error_of([&] { rc.compact("n"); }).code() == bt::chain_errc::truncated);
  const bytes cut_big{0x13, 0xff, 0xff};
  bt::scale_reader rb(cut_big);
  CHECK(error_of([&] { rb.compact("n"); }).code() == bt::chain_errc::truncated);
  const bytes short_key(31, 0xaa);
  bt::scale_reader rk(short_key);
  CHECK(error_of([&] { rk.account_id("hotkey"); }).code() == bt::chain_errc::truncated);
  bt::scale_reader empty(std::span<const std::uint8_t>{});
  CHECK(error_of([&] { empty.u8("x"); }).code() == bt::chain_errc::truncated);
}

TEST_CASE("scale: trailing bytes are an error naming the value and offset", "[scale]") {
  const bytes b{0x04, 0x00, 0x00};
  bt::scale_reader r(b);
  CHECK(r.compact("n") == 1);
  const auto e = error_of([&] { r.expect_end("Vec<NeuronInfoLite>"); });
  CHECK(e.code() == bt::chain_errc::trailing_bytes);
  CHECK(e.offset() == 1);
  CHECK(e.error().what == "Vec<NeuronInfoLite>");
  CHECK(e.error().detail.find("2 bytes left over") != std::string::npos);
}

TEST_CASE("scale: a length larger than the bytes left is refused before any allocation",
          "[scale]") {
  // 2^62-ish length in big-integer mode with 3 bytes following: refused as too_long; if the
  // reader trusted it, text() would try to allocate exabytes.
  const bytes b{0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f, 'a', 'b', 'c'};
  bt::scale_reader r(b);
  const auto e = error_of([&] { r.text("name"); });
  CHECK(e.code() == bt::chain_errc::too_long);
  CHECK(e.offset() == 0);
  CHECK(e.error().what == "name");
  // Exactly the bytes left is fine; one more is not.
  const bytes ok{0x0c, 'a', 'b', 'c'};
  bt::scale_reader r2(ok);
  CHECK(r2.text("name") == "abc");
  CHECK(r2.at_end());
  const bytes one_more{0x10, 'a', 'b', 'c'};
  bt::scale_reader r3(one_more);
  CHECK(error_of([&] { r3.length("name"); }).code() == bt::chain_errc::too_long);
}

TEST_CASE("scale: a length's domain bound, and what a claimed count may reserve", "[scale]") {
  // A count of 11 with a bound of 10 is refused at the count, naming the bound.
  const bytes eleven{0x2c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  bt::scale_reader r(eleven);
  const auto e = error_of([&] { r.length("uids", 10); });
  CHECK(e.code() == bt::chain_errc::too_long);
  CHECK(e.offset() == 0);
  CHECK(e.error().detail.find("length 11 exceeds the limit of 10") != std::string::npos);
  bt::scale_reader r2(eleven);
  CHECK(r2.length("uids", 11) == 11);
  // 11 bytes left: room for 11 one-byte elements, 2 of at least 5 bytes, none of 12.
  CHECK(r2.reservable(11, 1) == 11);
  CHECK(r2.reservable(1000, 5) == 2);
  CHECK(r2.reservable(1, 12) == 0);
  CHECK(r2.reservable(3, 0) == 3);  // a size of 0 counts as 1
}

TEST_CASE("scale: a prefixed error names the enclosing element", "[scale]") {
  const bt::chain_decode_error e(bt::chain_errc::truncated, "axon_info.port", "needs 2 bytes",
                                 5123);
  const auto p = e.with_prefix("NeuronInfoLite[17]");
  CHECK(p.error().what == "NeuronInfoLite[17].axon_info.port");
  CHECK(p.error().detail == "needs 2 bytes at offset 5123");
  CHECK(p.offset() == 5123);
  CHECK(p.code() == bt::chain_errc::truncated);
  CHECK(std::string(p.what()) ==
        "truncated SCALE input in NeuronInfoLite[17].axon_info.port: needs 2 bytes at offset 5123");
}
