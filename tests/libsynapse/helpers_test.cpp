// The helpers written once (bt/hex.hpp, bt/detail/text.hpp, bt/detail/uuid.hpp) and the strict
// base64 of the header codec: their contracts, including every way the input can be malformed.
#include <bt/detail/text.hpp>
#include <bt/detail/uuid.hpp>
#include <bt/hex.hpp>

#include <catch2/catch.hpp>

#include "codec_detail.hpp"
#include "name_index.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <string>

namespace bt::detail {
// Private to libsynapse (src/codec_detail.hpp); declared here to test its contract directly.
bool base64_decode(std::string_view text, std::string& out);
}  // namespace bt::detail

namespace {

bool canonical_uuid_text(const std::string& u) {
  if (u.size() != 36) return false;
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (u[i] != '-') return false;
    } else if (!bt::detail::is_lower_hex(u.substr(i, 1))) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("helpers: hex encodes lower case and decodes either case, strictly") {
  const std::array<std::uint8_t, 4> bytes{0x00, 0x9f, 0xa0, 0xff};
  CHECK(bt::to_hex(bytes) == "009fa0ff");
  char buf[9] = "xxxxxxxx";
  bt::write_hex(bytes, buf);
  CHECK(std::string(buf) == "009fa0ff");

  std::array<std::uint8_t, 4> out{};
  CHECK(bt::decode_hex("009FA0ff", out));
  CHECK(out == bytes);
  CHECK_FALSE(bt::decode_hex("009fa0f", out));     // short
  CHECK_FALSE(bt::decode_hex("009fa0fff0", out));  // long
  CHECK_FALSE(bt::decode_hex("009fa0fg", out));    // non-hex at an odd position
  CHECK_FALSE(bt::decode_hex("g09fa0ff", out));    // non-hex at an even position
  CHECK_FALSE(bt::decode_hex("0x9fa0ff", out));    // no prefix here
  CHECK_FALSE(bt::decode_hex(std::string("009f\0aff", 8), out));
  CHECK_FALSE(bt::decode_hex("009f a0f", out));

  CHECK(bt::from_hex("0x009fa0ff") == std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  CHECK(bt::from_hex("0X009FA0FF") == std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  CHECK(bt::from_hex("") == std::vector<std::uint8_t>{});
  CHECK(bt::from_hex("0x") == std::vector<std::uint8_t>{});
  CHECK_FALSE(bt::from_hex("0x0"));
  CHECK_FALSE(bt::from_hex("abc"));
  CHECK_FALSE(bt::from_hex("0xzz"));
  CHECK_FALSE(bt::from_hex("0x0x00"));
}

TEST_CASE("helpers: integers, case-insensitive compare, trim") {
  std::string s = "n=";
  bt::detail::append_int(std::numeric_limits<std::int64_t>::min(), s);
  bt::detail::append_int(std::uint16_t{65535}, s);
  CHECK(s == "n=-922337203685477580865535");
  CHECK(bt::detail::iequals("Application/JSON", "application/json"));
  CHECK_FALSE(bt::detail::iequals("application/jsoN ", "application/json"));
  CHECK_FALSE(bt::detail::iequals("_", "\x7f"));
  CHECK(bt::detail::istarts_with("Chunked, gzip", "chunked"));
  CHECK(bt::detail::trim_ows(" \t chunked\t ") == "chunked");
  CHECK(bt::detail::trim_ows(" \t ").empty());
  CHECK(bt::detail::trim_ows("a b") == "a b");
  CHECK(bt::detail::hex_value('F') == 15);
  CHECK(bt::detail::hex_value('g') == -1);
  CHECK(bt::detail::is_lower_hex("0123456789abcdef"));
  CHECK_FALSE(bt::detail::is_lower_hex("A"));
}

TEST_CASE("helpers: uuid1 and uuid4 texts have Python's str(uuid) form") {
  const std::string a = bt::detail::make_uuid1(), b = bt::detail::make_uuid1();
  CHECK(canonical_uuid_text(a));
  CHECK(a != b);
  CHECK(a[14] == '1');                                          // version 1
  CHECK(std::string("89ab").find(a[19]) != std::string::npos);  // RFC 4122 variant
  CHECK((bt::detail::hex_value(a[25]) & 1) == 1);               // multicast bit: not a MAC
  const std::string c = bt::detail::make_uuid4(), d = bt::detail::make_uuid4();
  CHECK(canonical_uuid_text(c));
  CHECK(c != d);
  CHECK(c[14] == '4');
  CHECK(std::string("89ab").find(c[19]) != std::string::npos);
}

TEST_CASE("helpers: base64 is strict standard padded base64, appended to the output") {
  std::string out = "x";
  CHECK(bt::detail::base64_decode("TWFu", out));
  CHECK(out == "xMan");
  out.clear();
  CHECK(bt::detail::base64_decode("TWE=", out));
  CHECK(out == "Ma");
  out.clear();
  CHECK(bt::detail::base64_decode("TQ==", out));
  CHECK(out == "M");
  out.clear();
  CHECK(bt::detail::base64_decode("", out));
  CHECK(out.empty());
  CHECK(bt::detail::base64_decode("e30=", out));
  CHECK(out == "{}");
  for (const char* bad : {"TQ=", "TQ", "TR==", "TWF=", "T===", "====", "TQ==TQ==", "TW=u", "TW-u",
                          "TW_u", "TWFu\n", " TWF", "TWFuTQ"}) {
    INFO(bad);
    std::string o;
    CHECK_FALSE(bt::detail::base64_decode(bad, o));
  }
  std::string o;
  CHECK_FALSE(bt::detail::base64_decode(std::string("TW\0u", 4), o));
}

TEST_CASE("helpers: name_index finds each name by length and first letter, and nothing else") {
  static constexpr std::array<std::string_view, 5> names{"port", "uuid", "ip", "status_code",
                                                         "status_message"};
  static constexpr bt::detail::name_index index{names};
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(index.find(names[i]) == static_cast<int>(i));
    CHECK(index.find_icase(names[i]) == static_cast<int>(i));
  }
  static_assert(index.find("uuid") == 1);  // usable in constant expressions
  // Same length and first letter as a name, but another name: the one comparison refuses it.
  CHECK(index.find("pork") == -1);
  CHECK(index.find("uuie") == -1);
  CHECK(index.find("status_codf") == -1);
  // Case: exact for JSON keys, ASCII case-insensitive for header names.
  CHECK(index.find("Port") == -1);
  CHECK(index.find_icase("Port") == 0);
  CHECK(index.find_icase("STATUS_MESSAGE") == 4);
  // Outside every bucket: empty, too long, a length no name has, a first byte no name has.
  CHECK(index.find("") == -1);
  CHECK(index.find(std::string(200, 'p')) == -1);
  CHECK(index.find("ipv") == -1);
  CHECK(index.find("\xffort") == -1);
  CHECK(index.find_icase("0ort") == -1);
}

TEST_CASE(
    "helpers: json_plain_prefix and ascii_prefix stop at the first byte they must, at every "
    "position and length") {
  // Each byte value at each position of texts of 0 to 24 bytes (the 8-byte words, their tails
  // and their boundaries), against the byte-by-byte definitions.
  const auto plain = [](unsigned char u, bool no_del) {
    return u >= 0x20 && u < 0x80 && u != '"' && u != '\\' && !(no_del && u == 0x7F);
  };
  std::size_t checked = 0;
  for (int b = 0; b < 256; ++b) {
    const auto u = static_cast<unsigned char>(b);
    for (std::size_t n = 1; n <= 24; ++n) {
      for (std::size_t k = 0; k < n; ++k) {
        std::string text(n, 'a');
        text[k] = static_cast<char>(u);
        for (const bool no_del : {false, true}) {
          INFO("byte " << b << " at " << k << " of " << n << ", no_del " << no_del);
          REQUIRE(bt::detail::json_plain_prefix(text.data(), n, no_del) ==
                  (plain(u, no_del) ? n : k));
        }
        REQUIRE(bt::detail::ascii_prefix(text.data(), n) == (u < 0x80 ? n : k));
        ++checked;
      }
    }
  }
  CHECK(checked == 256 * (24 * 25 / 2));
  CHECK(bt::detail::json_plain_prefix("", 0, true) == 0);
  CHECK(bt::detail::ascii_prefix("", 0) == 0);
}

TEST_CASE("helpers: is_ascii sees a high byte at every position of every length to 70") {
  // Lengths across the 16- and 8-byte blocks, their overlapping last block and the byte tail;
  // each text offset by 0 to 3 bytes from an aligned buffer, so unaligned loads are exercised.
  std::size_t checked = 0;
  for (const unsigned char high : {0x80, 0xC3, 0xFF}) {
    for (std::size_t offset = 0; offset < 4; ++offset) {
      for (std::size_t n = 0; n <= 70; ++n) {
        std::string buffer(offset + n, 'a');
        const std::string_view text(buffer.data() + offset, n);
        REQUIRE(bt::detail::is_ascii(text));
        REQUIRE(bt::detail::is_valid_utf8(text));
        for (std::size_t k = 0; k < n; ++k) {
          buffer[offset + k] = static_cast<char>(high);
          INFO("byte " << int(high) << " at " << k << " of " << n << ", offset " << offset);
          REQUIRE_FALSE(bt::detail::is_ascii(text));
          // A lone high byte is never valid UTF-8 (0xC3 needs a continuation byte after it).
          REQUIRE_FALSE(bt::detail::is_valid_utf8(text));
          buffer[offset + k] = 'a';
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 3 * 4 * (70 * 71 / 2));
  CHECK(bt::detail::is_valid_utf8("R\xc3\xa9sum\xc3\xa9 of forty bytes and more, to pass 16"));
}
