// Fuzz target: a whole HTTP request through the axon's request handling (session.cpp's head
// parser, request_parser.hpp feeding the header codec, every stage of pipeline.cpp, response.cpp).
//
// Transport: in memory. One bt::axon (one worker thread), never started, is driven by
// axon/memory/memory_session.hpp: each input is one connection over a byte_stream in memory whose
// reads and writes complete at once, run on this thread: the axon reads the bytes, then EOF (so
// no read waits on a deadline), answers and closes; exchange() returns once the session has
// ended (one connection object serves every input, returned to the state of a new one in
// between: connection_mode::reused). No socket, no I/O thread, no wall-clock wait: many times the
// inputs per second of a loopback harness (docs/reliability.md). The loopback path itself
// stays covered by the end-to-end tests (tests/axon, tests/hostile).
//
// Input: the raw request bytes, after replacing these tokens (so that committed seeds stay valid
// although a request must be fresh and signed to pass verification). Tokens are resolved per
// request, each kind in one pass from left to right: "@NEXT@" separates the requests sent one after
// another on the connection (it is removed; "the body" below is the rest of its own request only):
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
// Routes: the built-in Synapse ping, Dummy (echo), Hashed (a dynamic type with a hash field)
// and the plain Epistula route POST /echo (no token signs Epistula: its head checks are reached).
// The nonce store accepts every verified nonce (a replay store would make inputs depend on the
// ones before them; tests/axon/nonce_store_test.cpp covers it); error answers are not signed
// (sign_error_responses = false: the signing cost would halve the rate and parses nothing).
// Invariant: whatever arrives, the axon answers with nothing or with a sequence of complete,
// well-formed HTTP/1.1 responses (status line, field lines whose names are tokens and whose
// values hold no control character, at most one Content-Length, and a body framed by it or by
// chunked coding, none truncated; interim 100 Continue included), and the connection ends (no
// hang: libFuzzer's -timeout catches one). The oracle parses only that (response_length), not
// with Beast's parser: a general parser cost a sixth of an input. The harness's own functions
// carry no coverage (BT_FUZZ_NO_COVERAGE), and body hashes are cached like signatures. When a
// request line starts with HEAD, only the first status line is checked (a response to HEAD has no
// body, and the answers cannot be matched to requests here).
#include <bt/axon.hpp>
#include <bt/body_hash.hpp>
#include <bt/detail/text.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/examples/echo_route.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>

#include "fuzz_support.hpp"

#include "memory_session.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

/// Strings the harness reuses from one input to the next (one fuzzing thread): once they have
/// grown, resolving an input's tokens allocates nothing (the axon's own allocations are what
/// the input should cost).
struct scratch_strings {
  std::string request;      // the request being resolved (prepare_one)
  std::string substituted;  // substitute()'s output, swapped with its input
  std::string body;         // the body being cut into chunks
  std::string message;      // the message @SIG@ signs
  std::string key;          // a body hash's cache key
  std::string hash;         // the last body hash
  std::string signature;    // the last signature
  std::string prepared;     // the whole resolved input
};

scratch_strings& scratch() {
  static scratch_strings* s = new scratch_strings();  // never destroyed, as the fixture
  return *s;
}

/// Values computed from a key text (signatures, body hashes), kept in storage allocated once:
/// a lookup allocates nothing that outlives the input, so an input's allocations and frees stay
/// balanced. (libFuzzer runs an input a second time, looking for a leak, whenever it allocated
/// more than it freed: a growing map did that for every new entry, a visible share of a run.)
/// Direct-mapped on two independent 64-bit hashes of the key; a value longer than Capacity is
/// computed each time.
template <std::size_t Capacity>
class text_cache {
 public:
  text_cache() : slots_(4096) {}

  /// The value for `key`, in `out` (a scratch string: no allocation once it has grown).
  template <class Make>
  BT_FUZZ_NO_COVERAGE const std::string& get(std::string_view key, Make make, std::string& out) {
    const std::uint64_t h1 = std::hash<std::string_view>{}(key);
    std::uint64_t h2 = 0xcbf29ce484222325u;  // FNV-1a
    for (char c : key) h2 = (h2 ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
    slot& s = slots_[h1 % slots_.size()];
    if (s.used && s.h1 == h1 && s.h2 == h2) return out.assign(s.text, s.size);
    out = make();
    if (out.size() <= Capacity) {
      s.used = true;
      s.h1 = h1;
      s.h2 = h2;
      s.size = out.size();
      std::memcpy(s.text, out.data(), out.size());
    }
    return out;
  }

 private:
  struct slot {
    std::uint64_t h1 = 0, h2 = 0;
    std::size_t size = 0;
    bool used = false;
    char text[Capacity];
  };
  std::vector<slot> slots_;
};

struct fixture {
  bt::keypair caller = bt::keypair::from_seed(std::array<std::uint8_t, 32>{1, 2, 3});
  std::shared_ptr<const bt::synapse_descriptor> hashed = make_hashed_type();
  std::unique_ptr<bt::axon> ax;
  std::unique_ptr<bt::detail::memory_axon> mem;
  // Signatures by message (an sr25519 signing per input would cost more than the rest of the
  // input; a message holds its nonce, so it repeats within its second only).
  text_cache<2 + 2 * 64> signatures;
  // Body hashes by route kind + body (they do not depend on time).
  text_cache<64> hashes;
  std::string caller_ss58, axon_ss58;  // encoded once

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
    // A plain Epistula route (json_pipeline.cpp, epistula.cpp), bt-axon's POST /echo.
    bt::examples::attach_echo_route(*ax);
    // BT_FUZZ_FRESH_CONNECTIONS=1: a new connection object per input (to measure the reuse).
    mem = std::make_unique<bt::detail::memory_axon>(*ax, std::getenv("BT_FUZZ_FRESH_CONNECTIONS")
                                                             ? bt::detail::connection_mode::fresh
                                                             : bt::detail::connection_mode::reused);
    caller_ss58 = caller.ss58_address();
    axon_ss58 = ax->hotkey().ss58_address();
  }

  BT_FUZZ_NO_COVERAGE std::int64_t next_nonce() {
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    const std::int64_t second = now - now % 1'000'000'000;
    return second;
  }

  /// "0x" + the caller's signature of `message`.
  BT_FUZZ_NO_COVERAGE std::string_view signature_of(std::string_view message) {
    return signatures.get(
        message, [&] { return "0x" + bt::to_hex(caller.sign(std::string_view(message))); },
        scratch().signature);
  }
};

fixture& fx() {
  // Never destroyed: the worker thread must not be joined from an atexit handler while
  // libFuzzer exits.
  static fixture* f = new fixture();
  return *f;
}

/// Replaces, in one pass from left to right, each occurrence of a token of `subs` in `s`.
BT_FUZZ_NO_COVERAGE void substitute(
    std::string& s, std::initializer_list<std::pair<std::string_view, std::string_view>> subs) {
  std::size_t at = s.find('@');
  if (at == std::string::npos) return;
  std::string& out = scratch().substituted;
  out.clear();
  out.reserve(s.size() + 128);
  std::size_t copied = 0;
  while (at != std::string::npos) {
    const std::string_view rest = std::string_view(s).substr(at);
    std::size_t skip = 1;
    for (const auto& [token, value] : subs) {
      if (!rest.starts_with(token)) continue;
      out.append(s, copied, at - copied).append(value);
      copied = at + token.size();
      skip = token.size();
      break;
    }
    at = s.find('@', at + skip);
  }
  if (copied == 0) return;
  out.append(s, copied, std::string::npos);
  s.swap(out);  // both keep their capacity for the next input
}

BT_FUZZ_NO_COVERAGE std::size_t head_end(std::string_view s) {
  const auto p = s.find("\r\n\r\n");
  return p == std::string_view::npos ? s.size() : p + 4;
}

/// The first values (trimmed) of the header lines named `names` (lower case) in `head`, in one
/// pass over its lines; "" for a name that does not occur.
template <std::size_t N>
BT_FUZZ_NO_COVERAGE std::array<std::string_view, N> header_values(
    std::string_view head, const std::array<std::string_view, N>& names) {
  std::array<std::string_view, N> values{};
  std::array<bool, N> found{};
  std::size_t pos = 0;
  while (pos < head.size()) {
    std::size_t eol = head.find("\r\n", pos);
    if (eol == std::string_view::npos) eol = head.size();
    const std::string_view line = head.substr(pos, eol - pos);
    pos = eol + 2;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    for (std::size_t i = 0; i < N; ++i) {
      if (found[i] || !bt::detail::iequals(name, names[i])) continue;
      found[i] = true;
      values[i] = bt::detail::trim_ows(line.substr(colon + 1));
      break;
    }
  }
  return values;
}

/// The body hash of `body` as the type the request line's route names ("" if it does not parse
/// as that type). Cached: a mutation of the head leaves the body, and so its hash, unchanged.
BT_FUZZ_NO_COVERAGE std::string_view body_hash_for(fixture& f, std::string_view request_line,
                                                   std::string_view body) {
  const auto sp1 = request_line.find(' ');
  std::string_view path;
  if (sp1 != std::string_view::npos) {
    const auto sp2 = request_line.find(' ', sp1 + 1);
    path = request_line.substr(
        sp1 + 1, sp2 == std::string_view::npos ? std::string_view::npos : sp2 - sp1 - 1);
  }
  const char kind = sp1 == std::string_view::npos ? 'x'
                    : path == "/Dummy"            ? 'd'
                    : path == "/Hashed"           ? 'h'
                                                  : 's';
  std::string& key = scratch().key;
  key.assign(1, kind);
  key.append(body);
  return f.hashes.get(
      key,
      [&]() -> std::string {
        if (kind == 'd') {
          bt::examples::dummy s;
          if (!bt::from_json_body(body, s)) return bt::body_hash(s);
        } else if (kind == 'h') {
          bt::dynamic_synapse s(f.hashed);
          if (!bt::read_json_body(*f.hashed, body, s)) return bt::body_hash(s);
        } else if (kind == 's') {
          bt::synapse s;
          if (!bt::read_json_body(bt::descriptor_of<bt::synapse>(), body, s))
            return bt::body_hash(bt::descriptor_of<bt::synapse>(), s);
        }
        return {};
      },
      scratch().hash);
}

/// Resolves the tokens of one request (`part`, no "@NEXT@" inside) and appends it to `out`.
BT_FUZZ_NO_COVERAGE void prepare_one(fixture& f, std::string_view part, std::string& out) {
  std::string& req = scratch().request;
  req.assign(part);
  char nonce_buf[bt::detail::number_buffer_size];
  substitute(req, {{"@NONCE@", bt::detail::format_int(f.next_nonce(), nonce_buf)},
                   {"@HOTKEY@", f.caller_ss58},
                   {"@AXON@", f.axon_ss58}});
  constexpr std::string_view chunked = "@CHUNKED@";
  const bool chunk = std::string_view(req).substr(head_end(req)).starts_with(chunked);
  if (chunk) req.erase(head_end(req), chunked.size());
  if (req.find("@HASH@") != std::string::npos) {
    const std::string_view whole(req);
    const std::string_view hash =
        body_hash_for(f, whole.substr(0, whole.find("\r\n")), whole.substr(head_end(req)));
    substitute(req, {{"@HASH@", hash}});
  }
  if (req.find("@SIG@") != std::string::npos) {
    static constexpr std::array<std::string_view, 4> names{
        "bt_header_dendrite_nonce", "bt_header_dendrite_hotkey", "bt_header_dendrite_uuid",
        "computed_body_hash"};
    const auto v = header_values(std::string_view(req).substr(0, head_end(req)), names);
    std::string& message = scratch().message;
    message.clear();
    message.reserve(v[0].size() + v[1].size() + f.axon_ss58.size() + v[2].size() + v[3].size() + 4);
    message.append(v[0]).append(".").append(v[1]).append(".").append(f.axon_ss58);
    message.append(".").append(v[2]).append(".").append(v[3]);
    const std::string_view signature = f.signature_of(message);
    substitute(req, {{"@SIG@", signature}});
  }
  if (req.find("@CL@") != std::string::npos) {
    char cl_buf[bt::detail::number_buffer_size];
    substitute(req, {{"@CL@", bt::detail::format_int(req.size() - head_end(req), cl_buf)}});
  }
  if (chunk) {
    const std::size_t he = head_end(req);
    std::string& body = scratch().body;
    body.assign(req, he);
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
  out.append(req);
}

/// The input with its tokens resolved: the input itself when it has none, else a scratch string.
BT_FUZZ_NO_COVERAGE std::string_view prepare(fixture& f, std::string_view input) {
  if (input.find('@') == std::string_view::npos) return input;
  constexpr std::string_view next = "@NEXT@";
  std::string& out = scratch().prepared;
  out.clear();
  for (;;) {
    const auto sep = input.find(next);
    prepare_one(f, input.substr(0, sep), out);
    if (sep == std::string_view::npos) return out;
    input.remove_prefix(sep + next.size());
  }
}

BT_FUZZ_NO_COVERAGE bool well_formed_status_line(std::string_view r) {
  if (!r.starts_with("HTTP/1.1 ") || r.size() < 13) return false;
  for (int i = 9; i < 12; ++i)
    if (r[i] < '0' || r[i] > '9') return false;
  return r[12] == ' ';
}

/// RFC 9110 5.6.2 token character (a field name is a token).
BT_FUZZ_NO_COVERAGE bool tchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// Checks the field lines `fields` (each ending in CRLF): `name ":" OWS value OWS`, the name a
/// token, the value free of control characters but HTAB. Sets `content_length` (at most one, only
/// digits) and `chunked` (Transfer-Encoding: chunked) when the header says so.
BT_FUZZ_NO_COVERAGE bool well_formed_fields(std::string_view fields,
                                            std::optional<std::size_t>* content_length,
                                            bool* chunked) {
  while (!fields.empty()) {
    const std::size_t eol = fields.find("\r\n");
    if (eol == std::string_view::npos) return false;
    const std::string_view line = fields.substr(0, eol);
    fields.remove_prefix(eol + 2);
    const std::size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) return false;
    const std::string_view name = line.substr(0, colon);
    for (char c : name)
      if (!tchar(c)) return false;
    const std::string_view value = bt::detail::trim_ows(line.substr(colon + 1));
    for (char c : value)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return false;
    if (content_length && bt::detail::iequals(name, "content-length")) {
      if (content_length->has_value() || value.empty()) return false;
      std::size_t n = 0;
      for (char c : value) {
        if (c < '0' || c > '9' || n > (std::size_t{1} << 40)) return false;
        n = n * 10 + static_cast<std::size_t>(c - '0');
      }
      *content_length = n;
    } else if (chunked && bt::detail::iequals(name, "transfer-encoding")) {
      if (*chunked || !bt::detail::iequals(value, "chunked")) return false;
      *chunked = true;
    }
  }
  return true;
}

/// The length of the complete, well-formed HTTP/1.1 response at the start of `r`, or 0. Parses
/// only what the invariant needs: the status line, the field lines, and the body's framing
/// (none for 1xx, 204 and 304; Content-Length; or chunked coding with its trailer section). A
/// response framed by the end of the connection is not complete: the axon never sends one.
BT_FUZZ_NO_COVERAGE std::size_t response_length(std::string_view r) {
  if (!well_formed_status_line(r)) return 0;
  const std::size_t status_end = r.find("\r\n");
  const std::size_t fields_end = r.find("\r\n\r\n");
  if (status_end == std::string_view::npos || fields_end == std::string_view::npos) return 0;
  for (char c : r.substr(0, status_end))
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return 0;
  std::optional<std::size_t> content_length;
  bool chunked = false;
  if (fields_end > status_end &&
      !well_formed_fields(r.substr(status_end + 2, fields_end - status_end), &content_length,
                          &chunked))
    return 0;
  std::size_t pos = fields_end + 4;
  const int status = (r[9] - '0') * 100 + (r[10] - '0') * 10 + (r[11] - '0');
  if (status < 200 || status == 204 || status == 304) return pos;
  if (chunked == content_length.has_value()) return 0;  // neither (framed by EOF) or both
  if (content_length) return r.size() - pos >= *content_length ? pos + *content_length : 0;
  for (;;) {  // chunk = size CRLF data CRLF, until the chunk of size 0
    std::size_t size = 0, digits = 0;
    for (; pos < r.size() && bt::detail::hex_value(r[pos]) >= 0; ++pos, ++digits) {
      if (size > (std::size_t{1} << 40)) return 0;
      size = size * 16 + static_cast<std::size_t>(bt::detail::hex_value(r[pos]));
    }
    if (digits == 0 || r.substr(pos, 2) != "\r\n") return 0;
    pos += 2;
    if (size == 0) break;
    if (r.size() - pos < size + 2 || r.substr(pos + size, 2) != "\r\n") return 0;
    pos += size + 2;
  }
  const std::size_t trailer_end = r.find("\r\n", pos);  // trailer fields, then an empty line
  if (trailer_end == pos) return pos + 2;
  const std::size_t section_end = r.find("\r\n\r\n", pos);
  if (section_end == std::string_view::npos ||
      !well_formed_fields(r.substr(pos, section_end + 2 - pos), nullptr, nullptr))
    return 0;
  return section_end + 4;
}

/// True if `r` is a sequence of complete HTTP/1.1 responses with nothing left over.
BT_FUZZ_NO_COVERAGE bool complete_responses(std::string_view r) {
  while (!r.empty()) {
    const std::size_t n = response_length(r);
    if (n == 0) return false;
    r.remove_prefix(n);
  }
  return true;
}

BT_FUZZ_NO_COVERAGE bool has_head_request(std::string_view req) {
  if (req.starts_with("HEAD")) return true;
  return req.find("\nHEAD") != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  fixture& f = fx();
  const std::string_view req = prepare(f, bt::fuzz::as_text(data, size));
  // One string for every answer: once grown, an input allocates nothing for it.
  static std::string answer;
  f.mem->exchange_into(req, answer);
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
