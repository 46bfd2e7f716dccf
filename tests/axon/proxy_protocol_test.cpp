// bt::proxy_protocol: the PROXY protocol v1/v2 parser and CIDR blocks, on valid headers, every
// prefix of them, and headers broken in each field.
#include <bt/proxy_protocol.hpp>

#include <catch2/catch.hpp>

#include "support/proxy_bytes.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp = bt::proxy_protocol;
using bt::test::be16;
using bt::test::proxy_v2_signature;

namespace {

/// A version 2 header: `ver_cmd`, `family`, then `payload` (addresses + TLVs); `length` overrides
/// the length field (default: the payload's size).
std::string v2(unsigned char ver_cmd, unsigned char family, const std::string& payload,
               long length = -1) {
  return proxy_v2_signature + std::string{static_cast<char>(ver_cmd), static_cast<char>(family)} +
         be16(length < 0 ? payload.size() : static_cast<std::size_t>(length)) + payload;
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::string v4_block() {  // 203.0.113.7:51234 -> 192.0.2.1:8091
  return bytes({203, 0, 113, 7, 192, 0, 2, 1}) + be16(51234) + be16(8091);
}

std::string v6_block() {  // [2001:db8::42]:40000 -> [2001:db8::1]:8091
  std::string src(16, '\0'), dst(16, '\0');
  src[0] = 0x20, src[1] = 0x01, src[2] = 0x0d, src[3] = static_cast<char>(0xb8), src[15] = 0x42;
  dst[0] = 0x20, dst[1] = 0x01, dst[2] = 0x0d, dst[3] = static_cast<char>(0xb8), dst[15] = 0x01;
  return src + dst + be16(40000) + be16(8091);
}

std::string tlv(unsigned char type, const std::string& value) {
  return std::string(1, static_cast<char>(type)) + be16(value.size()) + value;
}

pp::parse_result parse(const std::string& s, std::size_t cap = pp::default_max_v2_bytes) {
  return pp::parse(s, cap);
}

/// Every strict prefix of `header` asks for more bytes.
void check_prefixes_need_more(const std::string& header) {
  for (std::size_t n = 0; n < header.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    CHECK(parse(header.substr(0, n)).status == pp::parse_status::need_more);
  }
}

void check_invalid(const std::string& s, std::size_t cap = pp::default_max_v2_bytes) {
  INFO("input: " << s);
  const auto r = parse(s, cap);
  CHECK(r.status == pp::parse_status::invalid);
  CHECK_FALSE(r.error.empty());
  CHECK_FALSE(r.not_a_header);
}

}  // namespace

TEST_CASE("proxy protocol v1: TCP4, TCP6 and UNKNOWN headers parse, the request after stays",
          "[proxy]") {
  const std::string h4 = "PROXY TCP4 203.0.113.7 192.0.2.1 51234 8091\r\n";
  auto r = parse(h4 + "POST /Dummy HTTP/1.1\r\n");
  REQUIRE(r.status == pp::parse_status::complete);
  CHECK(r.hdr.version == 1);
  CHECK_FALSE(r.hdr.local);
  CHECK(r.hdr.size == h4.size());
  CHECK(r.hdr.source.ip.to_string() == "203.0.113.7");
  CHECK(r.hdr.source.port == 51234);
  CHECK(r.hdr.destination.ip.to_string() == "192.0.2.1");
  CHECK(r.hdr.destination.port == 8091);
  check_prefixes_need_more(h4);

  const std::string h6 = "PROXY TCP6 2001:db8::42 ::1 0 65535\r\n";
  r = parse(h6);
  REQUIRE(r.status == pp::parse_status::complete);
  CHECK(r.hdr.source.ip.v6);
  CHECK(r.hdr.source.ip.to_string() == "2001:db8::42");
  CHECK(r.hdr.source.port == 0);
  CHECK(r.hdr.destination.port == 65535);
  CHECK(r.hdr.size == h6.size());

  for (const std::string u : {"PROXY UNKNOWN\r\n", "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"}) {
    r = parse(u + "GET");
    REQUIRE(r.status == pp::parse_status::complete);
    CHECK(r.hdr.local);
    CHECK(r.hdr.size == u.size());
  }

  // The longest TCP6 line, and an UNKNOWN line of exactly 107 bytes, are within the bound.
  const std::string f = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
  CHECK(parse("PROXY TCP6 " + f + " " + f + " 65535 65535\r\n").status ==
        pp::parse_status::complete);
  const std::string u107 = "PROXY UNKNOWN " + std::string(107 - 16, 'x') + "\r\n";
  REQUIRE(u107.size() == 107);
  CHECK(parse(u107).status == pp::parse_status::complete);
}

TEST_CASE("proxy protocol v1: every malformed field is refused", "[proxy]") {
  const auto line = [](const std::string& body) { return "PROXY " + body + "\r\n"; };
  // protocol
  check_invalid(line("TCP5 1.2.3.4 5.6.7.8 1 2"));
  check_invalid(line("tcp4 1.2.3.4 5.6.7.8 1 2"));
  check_invalid(line("UDP4 1.2.3.4 5.6.7.8 1 2"));
  check_invalid(line("UNKNOWNX"));
  // source address
  check_invalid(line("TCP4 1.2.3 5.6.7.8 1 2"));
  check_invalid(line("TCP4 01.2.3.4 5.6.7.8 1 2"));
  check_invalid(line("TCP4 256.2.3.4 5.6.7.8 1 2"));
  check_invalid(line("TCP4 ::1 5.6.7.8 1 2"));  // IPv6 under TCP4
  check_invalid(line("TCP6 1.2.3.4 ::1 1 2"));  // IPv4 under TCP6
  check_invalid(line("TCP6 fe80::1%eth0 ::1 1 2"));
  check_invalid(line("TCP4 localhost 5.6.7.8 1 2"));
  // destination address
  check_invalid(line("TCP4 1.2.3.4 5.6.7 1 2"));
  check_invalid(line("TCP6 ::1 [::2] 1 2"));
  // ports
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 65536 2"));
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 080 2"));
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 -1 2"));
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 +1 2"));
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 1 99999"));
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 1 0x50"));
  // field count and separators
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 1"));
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 1 2 3"));
  check_invalid(line("TCP4  1.2.3.4 5.6.7.8 1 2"));
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 1 2 "));
  check_invalid(line("TCP4\t1.2.3.4 5.6.7.8 1 2"));
  check_invalid(line(""));
  // line ending and bytes
  check_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n");
  check_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX");
  check_invalid(line("TCP4 1.2.3.4 5.6.7.8 1 2\xc3\xa9"));
  check_invalid(line(std::string("TCP4 1.2.3.4\0 5.6.7.8 1 2", 25)));
  // too long: 107 bytes without CRLF, and a CRLF that would end at byte 108
  check_invalid("PROXY UNKNOWN " + std::string(93, 'x'));
  check_invalid("PROXY UNKNOWN " + std::string(92, 'x') + "\r\n");
  // a valid prefix that stops short is not malformed yet
  CHECK(parse("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r").status == pp::parse_status::need_more);
  CHECK(parse("PROXY UNKNOWN " + std::string(92, 'x')).status == pp::parse_status::need_more);
}

TEST_CASE("proxy protocol: input that starts with neither signature is not a header", "[proxy]") {
  for (const std::string& s :
       {std::string("POST /Dummy HTTP/1.1\r\n"), std::string("PROXX TCP4"), std::string("proxy "),
        std::string("\r\n\r\nX"), proxy_v2_signature.substr(0, 11) + "X"}) {
    INFO("input: " << s);
    const auto r = parse(s);
    CHECK(r.status == pp::parse_status::invalid);
    CHECK(r.not_a_header);
  }
  CHECK(parse("").status == pp::parse_status::need_more);
  CHECK(parse("P").status == pp::parse_status::need_more);
  CHECK(parse("\r\n\r\n").status == pp::parse_status::need_more);
}

TEST_CASE("proxy protocol v2: TCP over IPv4 and IPv6, LOCAL, TLVs skipped", "[proxy]") {
  // PROXY, TCP/IPv4, and the request that follows.
  const std::string h4 = v2(0x21, 0x11, v4_block());
  auto r = parse(h4 + "POST /");
  REQUIRE(r.status == pp::parse_status::complete);
  CHECK(r.hdr.version == 2);
  CHECK_FALSE(r.hdr.local);
  CHECK(r.hdr.size == 28);
  CHECK(r.hdr.source.ip.to_string() == "203.0.113.7");
  CHECK(r.hdr.source.port == 51234);
  CHECK(r.hdr.destination.ip.to_string() == "192.0.2.1");
  CHECK(r.hdr.destination.port == 8091);
  check_prefixes_need_more(h4);

  // PROXY, TCP/IPv6, with TLVs (ALPN, authority, an empty NOOP) that are skipped.
  const std::string h6 =
      v2(0x21, 0x21, v6_block() + tlv(0x01, "h2") + tlv(0x02, "example.org") + tlv(0x04, ""));
  r = parse(h6 + "GET");
  REQUIRE(r.status == pp::parse_status::complete);
  CHECK(r.hdr.size == h6.size());
  CHECK(r.hdr.source.ip.to_string() == "2001:db8::42");
  CHECK(r.hdr.source.port == 40000);
  CHECK(r.hdr.destination.ip.to_string() == "2001:db8::1");
  check_prefixes_need_more(h6);

  // LOCAL (a health check): no address, whatever the family and payload.
  for (const std::string& h :
       {v2(0x20, 0x00, ""), v2(0x20, 0x11, v4_block()), v2(0x20, 0x31, std::string(216, 'u'))}) {
    r = parse(h);
    REQUIRE(r.status == pp::parse_status::complete);
    CHECK(r.hdr.local);
    CHECK(r.hdr.size == h.size());
  }

  // An IPv4-mapped source reads as IPv4 once unmapped.
  std::string mapped = v6_block();
  for (int i = 0; i < 16; ++i) mapped[i] = 0;
  mapped[10] = mapped[11] = static_cast<char>(0xff);
  mapped[12] = 10, mapped[13] = 1, mapped[14] = 2, mapped[15] = 3;
  r = parse(v2(0x21, 0x21, mapped));
  REQUIRE(r.status == pp::parse_status::complete);
  CHECK(r.hdr.source.ip.to_string() == "::ffff:10.1.2.3");
  CHECK(r.hdr.source.ip.unmapped().to_string() == "10.1.2.3");
}

TEST_CASE("proxy protocol v2: every malformed field is refused", "[proxy]") {
  // version nibble
  check_invalid(v2(0x11, 0x11, v4_block()));
  check_invalid(v2(0x31, 0x11, v4_block()));
  // command nibble
  check_invalid(v2(0x22, 0x11, v4_block()));
  check_invalid(v2(0x2f, 0x11, v4_block()));
  // family: UNSPEC, UDP, UNIX and unknown values with PROXY
  for (unsigned char fam : {0x00, 0x12, 0x22, 0x31, 0x32, 0x13, 0xff}) {
    INFO("family " << int(fam));
    check_invalid(v2(0x21, fam, v6_block() + std::string(180, '\0')));
  }
  // address blocks shorter than the family needs (with the length field telling the truth)
  check_invalid(v2(0x21, 0x11, v4_block().substr(0, 11)));
  check_invalid(v2(0x21, 0x21, v6_block().substr(0, 35)));
  check_invalid(v2(0x21, 0x21, v4_block()));
  // TLVs: too short for a TLV head, and a value running past the header
  check_invalid(v2(0x21, 0x11, v4_block() + std::string("\x01\x00", 2)));
  check_invalid(v2(0x21, 0x11, v4_block() + "\x01"));
  check_invalid(v2(0x21, 0x11, v4_block() + std::string("\x01\x00\x05", 3) + "abcd"));
  check_invalid(v2(0x21, 0x11, v4_block() + tlv(0x01, "ok") + std::string("\x02\xff\xff", 3)));
  // the cap: refused as soon as the length field is known, without waiting for the bytes
  const std::string huge = v2(0x21, 0x11, "", 0xffff);
  REQUIRE(huge.size() == 16);
  check_invalid(huge);
  const std::string h6 = v2(0x21, 0x21, v6_block());
  CHECK(parse(h6, 52).status == pp::parse_status::complete);
  check_invalid(v2(0x21, 0x21, v6_block() + tlv(0x04, "")), 52);
  check_invalid(v2(0x21, 0x11, v4_block()), 27);
}

TEST_CASE("CIDR blocks: parsing, membership, and clear errors", "[proxy]") {
  const auto a = [](const char* s) { return *pp::ip_address::parse(s); };
  const auto c8 = pp::cidr::parse("10.0.0.0/8");
  CHECK(c8.to_string() == "10.0.0.0/8");
  CHECK(c8.contains(a("10.255.1.2")));
  CHECK_FALSE(c8.contains(a("11.0.0.0")));
  CHECK(c8.contains(a("::ffff:10.0.0.1")));  // IPv4-mapped caller of a dual-stack socket
  CHECK_FALSE(c8.contains(a("::1")));
  const auto host = pp::cidr::parse("127.0.0.1");
  CHECK(host.prefix == 32);
  CHECK(host.contains(a("127.0.0.1")));
  CHECK_FALSE(host.contains(a("127.0.0.2")));
  const auto c20 = pp::cidr::parse("172.16.0.0/12");
  CHECK(c20.contains(a("172.31.255.255")));
  CHECK_FALSE(c20.contains(a("172.32.0.0")));
  const auto v6 = pp::cidr::parse("2001:db8::/33");
  CHECK(v6.contains(a("2001:db8:7fff::1")));
  CHECK_FALSE(v6.contains(a("2001:db8:8000::1")));
  CHECK_FALSE(v6.contains(a("10.0.0.1")));
  CHECK(pp::cidr::parse("0.0.0.0/0").contains(a("198.51.100.1")));
  CHECK(pp::cidr::parse("::/0").contains(a("2001:db8::1")));
  CHECK(pp::cidr::parse("::ffff:0:0/96").contains(a("192.0.2.1")));

  const auto error_of = [](const char* s) {
    try {
      (void)pp::cidr::parse(s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("10.0.0.1/8") ==
        "'10.0.0.1/8' is not a CIDR block: host bits are set below /8 (did you mean "
        "10.0.0.0/8?)");
  CHECK(error_of("10.0.0.0/33") ==
        "'10.0.0.0/33' is not a CIDR block: prefix length 33 is above 32");
  CHECK(error_of("::/129") == "'::/129' is not a CIDR block: prefix length 129 is above 128");
  CHECK(error_of("example.org/8") ==
        "'example.org/8' is not a CIDR block: 'example.org' is not an IPv4 or IPv6 address");
  for (const char* bad : {"10.0.0.0/", "10.0.0.0/08", "10.0.0.0/-1", "10.0.0.0/8/8", "", "/8",
                          "10.0.0.0 /8", "fe80::1%eth0/128"})
    CHECK(error_of(bad) != "no error");

  const auto list = pp::parse_cidr_list("127.0.0.1/32, 10.0.0.0/8,::1");
  REQUIRE(list.size() == 3);
  CHECK(list[2].to_string() == "::1/128");
  CHECK_THROWS_AS(pp::parse_cidr_list("127.0.0.1/32,,10.0.0.0/8"), std::invalid_argument);
  CHECK_THROWS_AS(pp::parse_cidr_list(""), std::invalid_argument);
  CHECK_THROWS_WITH(pp::parse_cidr_list("127.0.0.1/32,10.0.0.0/40"),
                    Catch::Contains("'10.0.0.0/40'"));
}
