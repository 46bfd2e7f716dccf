// Reading what an axon run in memory (axon/memory/memory_session.hpp) wrote back: the complete
// HTTP/1.1 answers in its output bytes, checked by Beast's response parser.
#pragma once

#include <catch2/catch.hpp>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string_view>
#include <vector>

namespace bt::test {

using memory_answer = boost::beast::http::response<boost::beast::http::string_body>;

/// The answers in `bytes`, in order; fails the test if one is incomplete or malformed.
inline std::vector<memory_answer> parse_responses(std::string_view bytes) {
  std::vector<memory_answer> out;
  while (!bytes.empty()) {
    boost::beast::http::response_parser<boost::beast::http::string_body> p;
    p.eager(true);
    boost::beast::error_code ec;
    const std::size_t used = p.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    INFO("answer bytes: " << bytes);
    REQUIRE_FALSE(ec);
    REQUIRE(p.is_done());
    out.push_back(p.release());
    bytes.remove_prefix(used);
  }
  return out;
}

/// The one answer in `bytes`; fails the test unless there is exactly one, complete.
inline memory_answer only_response(std::string_view bytes) {
  auto all = parse_responses(bytes);
  REQUIRE(all.size() == 1);
  return std::move(all.front());
}

}  // namespace bt::test
