#include <bt/ss58.hpp>

#include <bt/hex.hpp>
#include <bt/key_error.hpp>
#include <bt/keypair.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

#include <map>
#include <string>

namespace {

std::array<std::uint8_t, 32> key_of(const bt::json& j) {
  const auto v = bt::from_hex(j.get<std::string>());
  REQUIRE(v.has_value());
  REQUIRE(v->size() == 32);
  std::array<std::uint8_t, 32> a{};
  std::copy(v->begin(), v->end(), a.begin());
  return a;
}

}  // namespace

TEST_CASE("ss58 encodes and decodes every case of ss58.json", "[ss58]") {
  bt::init_crypto();
  const auto v = bt::test::load_vectors("ss58.json");
  REQUIRE(v.at("cases").size() >= 28);
  for (const auto& c : v.at("cases")) {
    const auto address = c.at("address").get<std::string>();
    INFO(address);
    const auto key = key_of(c.at("public_key_hex"));
    const int format = c.at("ss58_format").get<int>();
    CHECK(bt::ss58::encode(key, format) == address);

    std::error_code ec;
    const auto d = bt::ss58::decode(address, ec);
    REQUIRE(d.has_value());
    CHECK_FALSE(ec);
    CHECK(d->public_key == key);
    CHECK(d->format == format);
  }
}

// Why each invalid address fails. sp-core's order: base58, length >= 2, prefix, exact length,
// reserved format, checksum.
const std::map<std::string, bt::key_errc>& expected_decode_errors() {
  static const std::map<std::string, bt::key_errc> m = {
      {"bad checksum (first checksum byte xor 0x01)", bt::key_errc::ss58_bad_checksum},
      {"bad checksum (second checksum byte xor 0x80)", bt::key_errc::ss58_bad_checksum},
      {"bad checksum (public key byte changed, checksum kept)", bt::key_errc::ss58_bad_checksum},
      {"wrong length: 31-byte key with correct 2-byte checksum", bt::key_errc::ss58_bad_length},
      {"wrong length: 20-byte key with correct 2-byte checksum", bt::key_errc::ss58_bad_length},
      {"wrong length: 33-byte key with correct 2-byte checksum (not a 32-byte account id)",
       bt::key_errc::ss58_bad_length},
      {"wrong length: 32-byte key with only 1 checksum byte", bt::key_errc::ss58_bad_length},
      {"bad base58 character '0' at index 10", bt::key_errc::ss58_bad_character},
      {"bad base58 character 'O' at index 10", bt::key_errc::ss58_bad_character},
      {"trailing space", bt::key_errc::ss58_bad_character},
      {"unsupported prefix: first byte 0x80 (>= 0x80 is not a valid SS58 prefix) with correct "
       "checksum",
       bt::key_errc::ss58_bad_prefix},
      {"reserved prefix 46 with correct checksum", bt::key_errc::ss58_reserved_prefix},
      {"empty string", bt::key_errc::ss58_bad_length},
      {"truncated address", bt::key_errc::ss58_bad_length},
  };
  return m;
}

TEST_CASE("ss58 rejects every invalid address of ss58.json with its reason", "[ss58]") {
  bt::init_crypto();
  const auto v = bt::test::load_vectors("ss58.json");
  std::size_t n = 0;
  for (const auto& c : v.at("invalid")) {
    const auto why = c.at("why").get<std::string>();
    INFO(why);
    REQUIRE(expected_decode_errors().count(why) == 1);
    std::error_code ec;
    CHECK_FALSE(bt::ss58::decode(c.at("address").get<std::string>(), ec).has_value());
    CHECK(ec == expected_decode_errors().at(why));
    CHECK_THROWS_AS(bt::ss58::decode(c.at("address").get<std::string>()), std::system_error);
    ++n;
  }
  CHECK(n == expected_decode_errors().size());
}

TEST_CASE("ss58 refuses to encode every format of encode_errors", "[ss58]") {
  bt::init_crypto();
  const auto v = bt::test::load_vectors("ss58.json");
  REQUIRE(v.at("encode_errors").size() >= 3);
  for (const auto& c : v.at("encode_errors")) {
    const int format = c.at("ss58_format").get<int>();
    INFO(format);
    std::error_code ec;
    CHECK_FALSE(bt::ss58::encode(key_of(c.at("public_key_hex")), format, ec).has_value());
    CHECK(ec == (format == 46 || format == 47 ? bt::key_errc::ss58_reserved_prefix
                                              : bt::key_errc::ss58_bad_prefix));
    CHECK_THROWS_AS(bt::ss58::encode(key_of(c.at("public_key_hex")), format), std::system_error);
  }
  std::error_code ec;
  CHECK_FALSE(bt::ss58::encode(std::array<std::uint8_t, 32>{}, 47, ec).has_value());
  CHECK(ec == bt::key_errc::ss58_reserved_prefix);
}

TEST_CASE("ss58 round-trips every format and leading-zero keys", "[ss58]") {
  bt::init_crypto();
  std::array<std::uint8_t, 32> key{};
  for (int format = 0; format <= bt::ss58::max_format; format += (format < 200 ? 1 : 97)) {
    if (format == 46 || format == 47) continue;
    key[31] = static_cast<std::uint8_t>(format);
    const auto address = bt::ss58::encode(key, format);
    const auto d = bt::ss58::decode(address);
    REQUIRE(d.format == format);
    REQUIRE(d.public_key == key);
  }
  // All-zero key with format 0: the payload starts with zero bytes, written as '1's.
  const auto zero = bt::ss58::encode(std::array<std::uint8_t, 32>{}, 0);
  CHECK(zero.substr(0, 2) == "11");
  CHECK(bt::ss58::decode(zero).public_key == std::array<std::uint8_t, 32>{});
}

TEST_CASE("ss58 decode rejects overlong input without decoding it", "[ss58]") {
  std::error_code ec;
  CHECK_FALSE(bt::ss58::decode(std::string(10000, 'z'), ec).has_value());
  CHECK(ec == bt::key_errc::ss58_bad_length);
  CHECK_FALSE(
      bt::ss58::decode("5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQ\xff", ec).has_value());
  CHECK(ec == bt::key_errc::ss58_bad_character);
}

TEST_CASE("ss58 decode's per-thread memo of the last address never changes an answer", "[ss58]") {
  bt::init_crypto();
  std::array<std::uint8_t, 32> ka{}, kb{};
  ka[0] = 1;
  kb[0] = 2;
  const std::string a = bt::ss58::encode(ka, 42), b = bt::ss58::encode(kb, 0);
  std::error_code ec;
  for (int round = 0; round < 3; ++round) {
    INFO(round);
    // The same address twice (the second answered from the memo), then its near misses: one
    // character changed, one missing, one more. Each is judged on its own text.
    for (int twice = 0; twice < 2; ++twice) {
      ec = bt::key_errc::ss58_bad_checksum;
      const auto d = bt::ss58::decode(a, ec);
      REQUIRE(d.has_value());
      CHECK(!ec);
      CHECK(d->public_key == ka);
      CHECK(d->format == 42);
    }
    std::string changed = a;
    changed.back() = changed.back() == 'z' ? 'y' : 'z';
    CHECK_FALSE(bt::ss58::decode(changed, ec).has_value());
    CHECK(ec);
    CHECK_FALSE(bt::ss58::decode(std::string_view(a).substr(0, a.size() - 1), ec).has_value());
    CHECK(ec);
    CHECK_FALSE(bt::ss58::decode(a + "1", ec).has_value());
    CHECK(ec);
    CHECK_FALSE(bt::ss58::decode("", ec).has_value());
    CHECK(ec == bt::key_errc::ss58_bad_length);
    // Two addresses alternating (the memo holds one).
    const auto db = bt::ss58::decode(b, ec);
    REQUIRE(db.has_value());
    CHECK(db->public_key == kb);
    CHECK(db->format == 0);
  }
}
