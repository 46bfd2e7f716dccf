// The axon's HTTP request parser: Beast's basic_parser with the synapse header codec plugged
// into on_field_impl, so that every header is looked at once, in place, with no per-field
// allocation (a request_parser<string_body> would copy ~20 fields into a Beast fields container
// first). One is constructed per request (a parser is not reusable) with the header limit; the
// body limit is set by the pipeline once the request has been admitted.
#pragma once

#include "auth/epistula.hpp"

#include <bt/btauth.hpp>

#include <bt/header_codec.hpp>
#include <bt/synapse.hpp>

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace bt::detail {

class request_parser final : public boost::beast::http::basic_parser<true> {
 public:
  using verb = boost::beast::http::verb;

  /// `view` receives the base-synapse fields of the headers (it should be freshly reset);
  /// `target` the request-target; `body` the body once read (appended, so clear it first).
  /// The references must outlive the parser.
  request_parser(synapse& view, std::string& target, std::string& body, std::uint32_t header_bytes)
      : reader_(view), target_(target), body_(body), field_budget_(header_bytes) {
    header_limit(header_bytes);
    body_limit(boost::none);  // judged by the pipeline from Content-Length, then set
  }

  verb method() const noexcept { return method_; }
  /// HTTP version times ten (11 for HTTP/1.1).
  int version() const noexcept { return version_; }
  /// The first header that failed to parse (empty when none).
  const error& header_error() const noexcept { return reader_.result(); }
  bool saw_body_hash() const noexcept { return reader_.saw_body_hash(); }
  bool expect_continue() const noexcept { return expect_continue_; }
  /// How many `Host` fields the head carried (RFC 9112 3.2: exactly one in HTTP/1.1).
  unsigned host_fields() const noexcept { return host_fields_; }
  /// The head's Epistula-* fields (PROTOCOL 12), which the header codec never sees.
  const epistula_headers& epistula() const noexcept { return epistula_; }
  /// The head's X-Bittensor-* fields (btauth/1, PROTOCOL 14), which the header codec never sees.
  const btauth::header_fields& btauth() const noexcept { return btauth_; }
  /// The head's session fields (PROTOCOL 13): bt-session-offer and bt-session, the first of
  /// each, and how many of each the head carried (more than one is refused by the pipeline).
  struct session_fields {
    std::string offer, mac;
    unsigned offers = 0, macs = 0;
  };
  const session_fields& session() const noexcept { return session_; }
  /// Bound enforced while the body arrives (besides the parser's own body_limit).
  void max_body(std::uint64_t n) noexcept { max_body_ = n; }

  /// Parses what `buf` already holds, without I/O: on keep-alive the whole request usually
  /// arrives in the first read, and Beast's async_read would still post a completion. Returns
  /// true once the header (`header_only`) or the whole message is complete; false with `ec`
  /// clear when more bytes are needed, false with `ec` set on a parse error.
  template <class DynamicBuffer>
  bool parse_buffered(DynamicBuffer& buf, bool header_only, boost::beast::error_code& ec) {
    ec = {};
    const auto complete = [&] { return header_only ? is_header_done() : is_done(); };
    while (!complete() && buf.size() > 0) {
      const std::size_t used = put(buf.data(), ec);
      buf.consume(used);
      if (ec == boost::beast::http::error::need_more) {
        ec = {};
        return false;
      }
      if (ec || used == 0) return false;
    }
    return complete();
  }

 private:
  void on_request_impl(verb method, boost::beast::string_view, boost::beast::string_view target,
                       int version, boost::beast::error_code&) override {
    method_ = method;
    version_ = version;
    target_.assign(target.data(), target.size());
  }
  void on_response_impl(int, boost::beast::string_view, int, boost::beast::error_code&) override {}
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code&) override;
  void on_header_impl(boost::beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         boost::beast::error_code&) override {
    // Reserve only what a small body needs: memory should follow the bytes that actually arrive,
    // not what a client announces.
    if (content_length)
      body_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*content_length, 64 * 1024)));
  }
  std::size_t on_body_impl(boost::beast::string_view data, boost::beast::error_code& ec) override {
    return append(data, ec);
  }
  /// Chunk extensions and trailer fields are head-like bytes that arrive with the body: they
  /// are counted, with the head, against the header limit (http::error::header_limit past it),
  /// so a body of many tiny chunks with long extensions cannot cost more than the head may.
  void on_chunk_header_impl(std::uint64_t, boost::beast::string_view extensions,
                            boost::beast::error_code& ec) override {
    spend(extensions.size() + 8, ec);  // + the chunk-size line's framing
  }
  std::size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view data,
                                 boost::beast::error_code& ec) override {
    return append(data, ec);
  }
  void on_finish_impl(boost::beast::error_code&) override {}

  std::size_t append(boost::beast::string_view data, boost::beast::error_code& ec);
  void spend(std::size_t bytes, boost::beast::error_code& ec) noexcept {
    if (bytes > field_budget_) {
      ec = boost::beast::http::error::header_limit;
      return;
    }
    field_budget_ -= bytes;
  }

  header_reader reader_;
  epistula_headers epistula_;
  btauth::header_fields btauth_;
  session_fields session_;
  std::string& target_;
  std::string& body_;
  verb method_ = verb::unknown;
  int version_ = 11;
  bool expect_continue_ = false;
  unsigned host_fields_ = 0;
  std::uint64_t max_body_ = 0;
  std::uint64_t field_budget_;  // header bytes left for chunk extensions and trailers
};

}  // namespace bt::detail
