// Fuzz target: the header codec (bt::header_reader, to_headers, parse_python_int/float).
//
// Input: header lines "name: value" separated by '\n'. Only lines Beast could deliver reach the
// reader (a token name; a value without control characters other than HTAB, trimmed of spaces
// and tabs), as in the axon (request_parser.hpp) and the dendrite.
// Invariants:
//  - every header set the reader accepts re-encodes (to_headers) to values without CR/LF that the
//    reader accepts again, and encode(parse(encode(parse(x)))) == encode(parse(x));
//  - parse_python_int of a value that parses re-parses from its decimal form to the same number;
//    parse_python_float never crashes on any value.
#include <bt/detail/text.hpp>
#include <bt/header_codec.hpp>

#include "fuzz_support.hpp"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

namespace {

bool is_tchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool beast_value_ok(std::string_view v) {
  for (unsigned char c : v)
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  return true;
}

std::vector<std::pair<std::string_view, std::string_view>> split_headers(std::string_view text) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = bt::detail::trim_ows(line.substr(colon + 1));
    bool name_ok = true;
    for (unsigned char c : name) name_ok = name_ok && is_tchar(c);
    if (!name_ok || !beast_value_ok(value)) continue;
    out.emplace_back(name, value);
  }
  return out;
}

bt::header_list encode(const bt::synapse& s) {
  bt::header_list h;
  bt::to_headers(bt::descriptor_of<bt::synapse>(), s, h);
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  const std::string_view text = bt::fuzz::as_text(data, size);
  const auto headers = split_headers(text);

  for (const auto& [name, value] : headers) {
    std::int64_t i = 0;
    if (bt::parse_python_int(value, i)) {
      std::int64_t again = 0;
      BT_FUZZ_CHECK(bt::parse_python_int(std::to_string(i), again));
      BT_FUZZ_CHECK(again == i);
    }
    double f = 0;
    (void)bt::parse_python_float(value, f);
  }

  bt::synapse s1;
  bt::header_reader r1(s1);
  for (const auto& [name, value] : headers) r1.feed(name, value);
  if (r1.result()) {
    BT_FUZZ_CHECK(!r1.result().what.empty());  // an error names its header
    return 0;
  }

  const bt::header_list h1 = encode(s1);
  for (const auto& [name, value] : h1.items)
    BT_FUZZ_CHECK(value.find_first_of("\r\n") == std::string::npos);

  bt::synapse s2;
  const bt::error e2 = bt::from_headers(h1.items, s2);
  if (e2) {
    std::fprintf(stderr, "re-parse failed: %s\n", e2.message().c_str());
    BT_FUZZ_CHECK(!"to_headers output is rejected by header_reader");
  }
  const bt::header_list h2 = encode(s2);
  BT_FUZZ_CHECK(h1.items == h2.items);
  return 0;
}
