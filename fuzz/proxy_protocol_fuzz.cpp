// Fuzz target: the PROXY protocol parser (bt::proxy_protocol::parse) and CIDR blocks.
//
// Invariants:
//  - a complete header lies within the input: v1 at most 107 bytes, v2 at least 16 and at most
//    the cap; the same header parses from exactly its own bytes, and any strict prefix of it asks
//    for more bytes (the axon reads until the parser decides);
//  - an invalid input stays invalid whatever follows (the axon may close as soon as it knows);
//  - a v1 TCP4/TCP6 header is rendered back from its fields and parses to the same addresses;
//  - the first line, read as a CIDR block, either throws std::invalid_argument or round-trips
//    through to_string() and contains its own network address.
#include <bt/proxy_protocol.hpp>

#include "fuzz_support.hpp"

#include <stdexcept>
#include <string>

namespace pp = bt::proxy_protocol;

namespace {

bool same_endpoint(const pp::endpoint& a, const pp::endpoint& b) {
  return a.ip == b.ip && a.port == b.port;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = bt::fuzz::as_text(data, size);
  // The cap varies with the first byte so that both sides of it are reached.
  const std::size_t cap = size > 0 ? 16 + static_cast<std::size_t>(data[0]) * 17 : 4096;

  const pp::parse_result r = pp::parse(in, cap);
  if (r.status == pp::parse_status::complete) {
    const pp::header& h = r.hdr;
    BT_FUZZ_CHECK(h.size <= in.size());
    BT_FUZZ_CHECK(h.version == 1 || h.version == 2);
    if (h.version == 1) BT_FUZZ_CHECK(h.size <= pp::v1_max_bytes);
    if (h.version == 2) BT_FUZZ_CHECK(h.size >= pp::v2_fixed_bytes && h.size <= cap);
    const pp::parse_result own = pp::parse(in.substr(0, h.size), cap);
    BT_FUZZ_CHECK(own.status == pp::parse_status::complete && own.hdr.size == h.size);
    BT_FUZZ_CHECK(own.hdr.local == h.local);
    if (!h.local) BT_FUZZ_CHECK(same_endpoint(own.hdr.source, h.source));
    BT_FUZZ_CHECK(pp::parse(in.substr(0, h.size - 1), cap).status == pp::parse_status::need_more);
    BT_FUZZ_CHECK(pp::parse(in.substr(0, h.size / 2), cap).status == pp::parse_status::need_more);
    if (h.version == 1 && !h.local) {
      const std::string line = std::string("PROXY ") + (h.source.ip.v6 ? "TCP6 " : "TCP4 ") +
                               h.source.ip.to_string() + " " + h.destination.ip.to_string() + " " +
                               std::to_string(h.source.port) + " " +
                               std::to_string(h.destination.port) + "\r\n";
      const pp::parse_result again = pp::parse(line, cap);
      BT_FUZZ_CHECK(again.status == pp::parse_status::complete);
      BT_FUZZ_CHECK(same_endpoint(again.hdr.source, h.source));
      BT_FUZZ_CHECK(same_endpoint(again.hdr.destination, h.destination));
    }
  } else if (r.status == pp::parse_status::invalid) {
    BT_FUZZ_CHECK(!r.error.empty());
    const std::string longer = std::string(in) + "\r\n\r\nPROXY ";
    BT_FUZZ_CHECK(pp::parse(longer, cap).status == pp::parse_status::invalid);
  }

  const std::string_view first = in.substr(0, std::min(in.find('\n'), std::size_t{64}));
  try {
    const pp::cidr c = pp::cidr::parse(first);
    const pp::cidr again = pp::cidr::parse(c.to_string());
    BT_FUZZ_CHECK(again.network == c.network && again.prefix == c.prefix);
    BT_FUZZ_CHECK(c.contains(c.network));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
