// Fuzz target: a whole HTTP request through the axon's request handling (session.cpp's head
// parser, request_parser.hpp feeding the header codec, every stage of pipeline.cpp, response.cpp).
//
// Transport: in memory. One bt::axon (one worker thread), never started, is driven by
// axon/src/memory_session.hpp: each input is one connection over a byte_stream in memory whose
// reads and writes complete at once, run on this thread: the axon reads the bytes, then EOF (so
// no read waits on a deadline), answers and closes; exchange() returns once the session has
// ended. No socket, no I/O thread, no wall-clock wait: thousands of inputs per second where
// loopback gave 150-500 (docs/reliability.md). The loopback path itself stays covered by the
// end-to-end tests (tests/axon, tests/hostile).
//
// Input: the raw request bytes, after replacing these tokens (so that committed seeds stay valid
// although a request must be fresh and signed to pass verification). Tokens are resolved per
// request: "@NEXT@" separates the requests sent one after another on the connection (it is
// removed; "the body" below is the rest of its own request only):
//   @NONCE@   a fresh nonce: wall-clock ns rounded down to the second (fresh: the axon accepts
//             4 s and more), so that within a second a repeated message is signed only once
//   @HOTKEY@  the caller's SS58 address (a fixed sr25519 key), @AXON@ the axon's
//   @HASH@    the body hash of the body (the part after the first blank line) for the route named
//             in the request line, when it parses as that type ("" otherwise)
//   @SIG@     "0x" + the caller's signature of "{nonce}.{hotkey}.{axon}.{uuid}.{hash}" taken from
//             the request's bt_header_dendrite_nonce/_hotkey/_uuid and computed_body_hash headers
//   @CL@      the body's length in bytes
//   @CHUNKED@ at the very start of the body: removed, and the body (tokens resolved, hashed as
//             is) is sent in chunked transfer coding, split in two chunks (the head should say
//             Transfer-Encoding: chunked; chunk sizes could not be written before the tokens are)
// Routes: the built-in Synapse ping, Dummy (echo) and Hashed (a dynamic type with a hash field).
// The nonce store accepts every verified nonce (a replay store would make inputs depend on the
// ones before them; tests/axon/nonce_store_test.cpp covers it); error answers are not signed
// (sign_error_responses = false: the signing cost would halve the rate and parses nothing).
// Invariant: whatever arrives, the axon answers with nothing or with a sequence of complete,
// well-formed HTTP/1.1 responses (each parses with Beast's response parser, body included, none
// truncated; interim 100 Continue included), and the connection ends (no hang: libFuzzer's
// -timeout catches one). When a request line starts with HEAD, only the first status line is
// checked (a response to HEAD has no body, and the answers cannot be matched to requests here).
#include <bt/axon.hpp>
#include <bt/body_hash.hpp>
#include <bt/detail/text.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>

#include "fuzz_support.hpp"

#include "memory_session.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace {

struct accept_all_nonces final : bt::nonce_store {
  bt::nonce_verdict record(std::string_view, std::string_view, std::int64_t, std::int64_t,
                           std::int64_t) noexcept override {
    return bt::nonce_verdict::accepted;
  }
};

std::shared_ptr<const bt::synapse_descriptor> make_hashed_type() {
  bt::error err;
  auto d = bt::make_dynamic_descriptor(
      "Hashed", {{"a", bt::required}, {"b", bt::field_kind::optional}}, {"a"}, err);
  if (!d) bt::fuzz::invariant_failed("Hashed descriptor", __FILE__, __LINE__);
  return d;
}

struct fixture {
  bt::keypair caller = bt::keypair::from_seed(std::array<std::uint8_t, 32>{1, 2, 3});
  std::shared_ptr<const bt::synapse_descriptor> hashed = make_hashed_type();
  std::unique_ptr<bt::axon> ax;
  std::unique_ptr<bt::detail::memory_axon> mem;
  std::int64_t nonce_second = 0;
  // Signatures of this second's messages (an sr25519 signing per input would cost more than the
  // rest of the input); cleared with each new nonce, and bounded.
  std::unordered_map<std::string, std::string> signatures;

  fixture() {
    bt::axon_options o = bt::axon_options::loopback();
    o.max_workers = 1;
    o.sign_error_responses = false;
    o.nonces = std::make_shared<accept_all_nonces>();
    o.max_body_bytes = 1 << 20;
    ax = std::make_unique<bt::axon>(bt::keypair::from_seed(std::array<std::uint8_t, 32>{9, 8, 7}),
                                    o);
    ax->attach<bt::examples::dummy>([](bt::examples::dummy& s) { s.dummy_output = s.dummy_input; });
    ax->attach(hashed, [](bt::dynamic_synapse& s) {
      if (auto* b = s.get("b")) *b = *s.get("a");
    });
    mem = std::make_unique<bt::detail::memory_axon>(*ax);
  }

  std::int64_t next_nonce() {
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    const std::int64_t second = now - now % 1'000'000'000;
    if (second != nonce_second || signatures.size() > 4096) {
      nonce_second = second;
      signatures.clear();
    }
    return second;
  }

  /// "0x" + the caller's signature of `message`.
  const std::string& signature_of(const std::string& message) {
    auto [it, fresh] = signatures.try_emplace(message);
    if (fresh) it->second = "0x" + bt::to_hex(caller.sign(std::string_view(message)));
    return it->second;
  }
};

fixture& fx() {
  // Never destroyed: the worker thread must not be joined from an atexit handler while
  // libFuzzer exits.
  static fixture* f = new fixture();
  return *f;
}

void replace_all(std::string& s, std::string_view token, std::string_view value) {
  for (std::size_t pos = s.find(token); pos != std::string::npos;
       pos = s.find(token, pos + value.size()))
    s.replace(pos, token.size(), value);
}

std::size_t head_end(const std::string& s) {
  const auto p = s.find("\r\n\r\n");
  return p == std::string::npos ? s.size() : p + 4;
}

/// Value of the first header line `name: value` in the head (case-insensitive name), trimmed.
std::string header_value(std::string_view head, std::string_view name) {
  std::size_t pos = 0;
  while (pos < head.size()) {
    std::size_t eol = head.find("\r\n", pos);
    if (eol == std::string_view::npos) eol = head.size();
    const std::string_view line = head.substr(pos, eol - pos);
    pos = eol + 2;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !bt::detail::iequals(line.substr(0, colon), name))
      continue;
    return std::string(bt::detail::trim_ows(line.substr(colon + 1)));
  }
  return {};
}

std::string body_hash_for(fixture& f, std::string_view request_line, std::string_view body) {
  const auto sp1 = request_line.find(' ');
  if (sp1 == std::string_view::npos) return {};
  const auto sp2 = request_line.find(' ', sp1 + 1);
  const std::string_view path = request_line.substr(
      sp1 + 1, sp2 == std::string_view::npos ? std::string_view::npos : sp2 - sp1 - 1);
  if (path == "/Dummy") {
    bt::examples::dummy s;
    if (bt::from_json_body(body, s)) return {};
    return bt::body_hash(s);
  }
  if (path == "/Hashed") {
    bt::dynamic_synapse s(f.hashed);
    if (bt::read_json_body(*f.hashed, body, s)) return {};
    return bt::body_hash(s);
  }
  bt::synapse s;
  if (bt::read_json_body(bt::descriptor_of<bt::synapse>(), body, s)) return {};
  return bt::body_hash(bt::descriptor_of<bt::synapse>(), s);
}

/// Resolves the tokens of one request (no "@NEXT@" inside).
std::string prepare_one(fixture& f, std::string req) {
  replace_all(req, "@NONCE@", std::to_string(f.next_nonce()));
  replace_all(req, "@HOTKEY@", f.caller.ss58_address());
  replace_all(req, "@AXON@", f.ax->hotkey().ss58_address());
  constexpr std::string_view chunked = "@CHUNKED@";
  const bool chunk = std::string_view(req).substr(head_end(req)).starts_with(chunked);
  if (chunk) req.erase(head_end(req), chunked.size());
  if (req.find("@HASH@") != std::string::npos) {
    const std::size_t he = head_end(req);
    const std::string_view whole(req);
    const std::string hash =
        body_hash_for(f, whole.substr(0, whole.find("\r\n")), whole.substr(he));
    replace_all(req, "@HASH@", hash);
  }
  if (req.find("@SIG@") != std::string::npos) {
    const std::string_view head(req.data(), head_end(req));
    const std::string message = header_value(head, "bt_header_dendrite_nonce") + "." +
                                header_value(head, "bt_header_dendrite_hotkey") + "." +
                                f.ax->hotkey().ss58_address() + "." +
                                header_value(head, "bt_header_dendrite_uuid") + "." +
                                header_value(head, "computed_body_hash");
    replace_all(req, "@SIG@", f.signature_of(message));
  }
  if (req.find("@CL@") != std::string::npos) {
    const std::size_t he = head_end(req);
    replace_all(req, "@CL@", std::to_string(req.size() - he));
  }
  if (chunk) {
    const std::size_t he = head_end(req);
    const std::string body = req.substr(he);
    req.resize(he);
    const std::size_t mid = body.size() / 2;
    for (const std::string_view part :
         {std::string_view(body).substr(0, mid), std::string_view(body).substr(mid)}) {
      if (part.empty()) continue;
      char size_line[24];
      std::snprintf(size_line, sizeof size_line, "%zx\r\n", part.size());
      req.append(size_line).append(part).append("\r\n");
    }
    req.append("0\r\n\r\n");
  }
  return req;
}

std::string prepare(fixture& f, std::string_view input) {
  if (input.find('@') == std::string_view::npos) return std::string(input);
  constexpr std::string_view next = "@NEXT@";
  std::string out;
  for (;;) {
    const auto sep = input.find(next);
    out += prepare_one(f, std::string(input.substr(0, sep)));
    if (sep == std::string_view::npos) return out;
    input.remove_prefix(sep + next.size());
  }
}

bool well_formed_status_line(std::string_view r) {
  if (!r.starts_with("HTTP/1.1 ") || r.size() < 13) return false;
  for (int i = 9; i < 12; ++i)
    if (r[i] < '0' || r[i] > '9') return false;
  return r[12] == ' ';
}

/// True if `r` is a sequence of complete HTTP/1.1 responses with nothing left over.
bool complete_responses(std::string_view r) {
  namespace http = boost::beast::http;
  while (!r.empty()) {
    if (!well_formed_status_line(r)) return false;
    http::response_parser<http::string_body> p;
    p.eager(true);
    p.header_limit(1 << 20);
    p.body_limit(boost::none);
    boost::beast::error_code ec;
    const std::size_t used = p.put(boost::asio::buffer(r.data(), r.size()), ec);
    if (ec || !p.is_done()) return false;
    r.remove_prefix(used);
  }
  return true;
}

bool has_head_request(std::string_view req) {
  if (req.starts_with("HEAD")) return true;
  return req.find("\nHEAD") != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  fixture& f = fx();
  const std::string req = prepare(f, bt::fuzz::as_text(data, size));
  const std::string answer = f.mem->exchange(req);
  // BT_FUZZ_VERBOSE=1: print each answer (to check which stages the seeds reach).
  static const bool verbose = std::getenv("BT_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "answer (%zu bytes):\n%s\n", answer.size(), answer.c_str());
  if (answer.empty()) return 0;
  if (has_head_request(req))
    BT_FUZZ_CHECK(well_formed_status_line(answer));
  else
    BT_FUZZ_CHECK(complete_responses(answer));
  return 0;
}
