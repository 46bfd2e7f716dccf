// btauth/1 on a plain JSON route (PROTOCOL 14; schemes/btauth_scheme.cpp): the whole pipeline
// driven in memory (memory_session.hpp), requests signed by libsynapse's bt::btauth::sign_request.
// Every refusal is checked for its status, for a message that starts with the SDK's failure class,
// and for never reaching the handler; an accepted request for the context its handler sees and
// for the answer's signature, which names the sender and the X-Bittensor-Nonce text.
#include "errors/axon_errc.hpp"
#include "memory_session.hpp"

#include <bt/axon.hpp>
#include <bt/btauth.hpp>
#include <bt/epistula.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/response_signature.hpp>
#include <bt/sha256.hpp>
#include <bt/ss58.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"
#include "support/memory_answers.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using bt::detail::axon_errc;
using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;
using bt::test::memory_answer;
using bt::test::only_response;
namespace btauth = bt::btauth;

const bt::keypair& btauth_dave_ed25519() {
  static const bt::keypair k = bt::keypair::from_uri("//Dave", bt::crypto_type::ed25519);
  return k;
}

constexpr std::int64_t btauth_second_ns = 1'000'000'000;

/// One btauth/1 request: its header fields in the order sent, its method, target and body.
struct btauth_request {
  std::string method = "POST";
  std::string target = "/echo";
  std::string body;
  std::vector<std::pair<std::string, std::string>> fields;

  /// Signed by `key` over (`method`, `target`, `body`) for `receiver` (empty: unbound).
  static btauth_request make(const bt::keypair& key, std::string body,
                             std::string receiver = bob().ss58_address(),
                             std::int64_t nonce_ns = btauth::now_ns(), std::string method = "POST",
                             std::string target = "/echo") {
    const btauth::request_headers h =
        btauth::sign_request(key, method, target, body, receiver, nonce_ns);
    btauth_request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    r.fields = {{"X-Bittensor-Version", "1"},
                {"X-Bittensor-Hotkey", h.hotkey},
                {"X-Bittensor-Nonce", h.nonce},
                {"X-Bittensor-Signature", h.signature}};
    if (!h.crypto.empty()) r.fields.emplace_back("X-Bittensor-Crypto", h.crypto);
    if (!h.receiver.empty()) r.fields.emplace_back("X-Bittensor-Receiver", h.receiver);
    return r;
  }

  btauth_request& set(std::string_view name, std::string value) {
    for (auto& [n, v] : fields)
      if (n == name) {
        v = std::move(value);
        return *this;
      }
    fields.emplace_back(std::string(name), std::move(value));
    return *this;
  }
  btauth_request& add(std::string name, std::string value) {
    fields.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  std::string value(std::string_view name) const {
    for (const auto& [n, v] : fields)
      if (n == name) return v;
    return {};
  }

  /// The bytes on the wire, sent as `method` to `target` (the signed ones unless given).
  std::string wire(std::string_view send_method = {}, std::string_view send_target = {}) const {
    std::string w = std::string(send_method.empty() ? method : send_method) + " " +
                    std::string(send_target.empty() ? target : send_target) +
                    " HTTP/1.1\r\nHost: x\r\n";
    for (const auto& [n, v] : fields) w += n + ": " + v + "\r\n";
    w += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
    return w;
  }
};

/// What the handler saw, copied out of the request_context.
struct btauth_seen_context {
  std::string hotkey, scheme;
  std::int64_t nonce = 0;
  bool verified = false;
};

/// Bob's axon serving POST /echo under `policy` (btauth/1 alone by default), in memory; counts
/// the handler's calls.
struct btauth_axon {
  std::atomic<int> calls{0};
  btauth_seen_context seen;
  bt::axon ax;
  std::optional<bt::detail::memory_axon> mem;

  explicit btauth_axon(bt::json_route_options policy = {.auth = bt::auth_mode::btauth},
                       bt::axon_options o = bt::axon_options::loopback())
      : ax(bob(), std::move(o)) {
    ax.route(
        "POST", "/echo",
        [this](std::string_view raw, const bt::json&, const bt::request_context& caller) {
          ++calls;
          seen = {std::string(caller.hotkey), std::string(caller.scheme), caller.nonce,
                  caller.verified};
          return bt::json_reply{.status = 200, .body = {{"raw", std::string(raw)}}};
        },
        std::move(policy));
    mem.emplace(ax);
  }

  memory_answer send(const btauth_request& r, std::string_view method = {},
                     std::string_view target = {}) {
    return only_response(mem->exchange(r.wire(method, target)));
  }
};

std::string btauth_message_of(const memory_answer& r) {
  const auto j = bt::json::parse(r.body(), nullptr, false);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("message"));
  return j.at("message").get<std::string>();
}

/// Refused with `status`, a message starting with `start` and holding `fragment`, the connection
/// closed when the refusal came before the body, and the handler never called.
void check_btauth_refused(btauth_axon& f, const memory_answer& r, unsigned status,
                          std::string_view start, std::string_view fragment = {}) {
  const std::string message = btauth_message_of(r);
  INFO("message: " << message);
  CHECK(r.result_int() == status);
  CHECK(message.starts_with(start));
  CHECK(message.find(fragment) != std::string::npos);
  CHECK(r[boost::beast::http::field::content_type] == "application/json");
  CHECK(f.calls == 0);
}

/// Whether the answer's one bt-response-signature verifies as Bob's over (`caller`, `id`).
bool answer_names(const memory_answer& r, std::string_view caller, std::string_view id) {
  const auto [first, last] = r.equal_range(bt::response_signature::header);
  REQUIRE(first != last);
  REQUIRE(std::next(first) == last);
  return bt::response_signature::verify(first->value(), bob().ss58_address(), caller, id,
                                        static_cast<int>(r.result_int()), r.body())
      .empty();
}

/// A replay store that cannot answer (a Redis store past its timeout, say).
class btauth_unavailable_store final : public bt::nonce_store {
 public:
  bt::nonce_verdict record(std::string_view, std::string_view, std::int64_t, std::int64_t,
                           std::int64_t) noexcept override {
    return bt::nonce_verdict::unavailable;
  }
};

}  // namespace

TEST_CASE("btauth route: an sr25519 request is served once, with the verified sender",
          "[axon][btauth]") {
  btauth_axon f;
  const auto req = btauth_request::make(alice(), R"({"x":1})");
  const auto r = f.send(req);
  INFO(r.body());
  REQUIRE(r.result_int() == 200);
  CHECK(f.calls == 1);
  CHECK(bt::json::parse(r.body()).at("raw") == R"({"x":1})");
  CHECK(f.seen.hotkey == alice().ss58_address());
  CHECK(f.seen.scheme == "btauth");
  CHECK(f.seen.verified);
  CHECK(std::to_string(f.seen.nonce) == req.value("X-Bittensor-Nonce"));
  // The answer names the verified sender and, as the request id, the nonce text as received.
  CHECK(answer_names(r, alice().ss58_address(), req.value("X-Bittensor-Nonce")));
  CHECK_FALSE(answer_names(r, alice().ss58_address(), "0"));
}

TEST_CASE("btauth route: an ed25519 key's request is served", "[axon][btauth]") {
  btauth_axon f;
  const auto req = btauth_request::make(btauth_dave_ed25519(), "{}");
  REQUIRE(req.value("X-Bittensor-Crypto") == "ed25519");
  const auto r = f.send(req);
  INFO(r.body());
  REQUIRE(r.result_int() == 200);
  CHECK(f.seen.hotkey == btauth_dave_ed25519().ss58_address());
  CHECK(answer_names(r, btauth_dave_ed25519().ss58_address(), req.value("X-Bittensor-Nonce")));
  // Declared as sr25519 (no Crypto header), the same signature does not verify.
  btauth_axon g;
  auto as_sr = btauth_request::make(btauth_dave_ed25519(), "{}");
  std::erase_if(as_sr.fields, [](const auto& p) { return p.first == "X-Bittensor-Crypto"; });
  check_btauth_refused(g, g.send(as_sr), 401, "BadSignature: ");
}

TEST_CASE("btauth route: the signed target is the one sent, query string included",
          "[axon][btauth]") {
  btauth_axon f;
  const auto req = btauth_request::make(alice(), "{}", bob().ss58_address(), btauth::now_ns(),
                                        "POST", "/echo?a=1&b=%20");
  const auto r = f.send(req);
  INFO(r.body());
  CHECK(r.result_int() == 200);
  // Signed without the query, sent with one (and the reverse): another target.
  btauth_axon g;
  check_btauth_refused(g, g.send(btauth_request::make(alice(), "{}"), "POST", "/echo?a=1"), 401,
                       "BadSignature: ");
  check_btauth_refused(g, g.send(req, "POST", "/echo"), 401, "BadSignature: ");
}

TEST_CASE("btauth route: a replayed request is refused 401 ReplayedRequest", "[axon][btauth]") {
  btauth_axon f;
  const auto req = btauth_request::make(alice(), "{}");
  REQUIRE(f.send(req).result_int() == 200);
  const auto again = f.send(req);
  CHECK(again.result_int() == 401);
  CHECK(btauth_message_of(again).starts_with("ReplayedRequest: "));
  CHECK(f.calls == 1);
  // Verified, so the refusal names the sender; another sender's same nonce is its own record.
  CHECK(answer_names(again, alice().ss58_address(), req.value("X-Bittensor-Nonce")));
  const auto other = btauth_request::make(charlie(), "{}", bob().ss58_address(),
                                          std::stoll(req.value("X-Bittensor-Nonce")));
  CHECK(f.send(other).result_int() == 200);
}

TEST_CASE("btauth route: nonces outside the window are refused 401 StaleRequest",
          "[axon][btauth]") {
  const std::int64_t now = btauth::now_ns();
  for (const auto& [what, nonce] : {std::pair{"11 s old", now - 11 * btauth_second_ns},
                                    std::pair{"3 s ahead", now + 3 * btauth_second_ns},
                                    std::pair{"in milliseconds", now / 1'000'000}}) {
    INFO(what);
    btauth_axon f;
    check_btauth_refused(f,
                         f.send(btauth_request::make(alice(), "{}", bob().ss58_address(), nonce)),
                         401, "StaleRequest: ", "X-Bittensor-Nonce");
  }
  // A route's own window: 30 s of age accepted there.
  btauth_axon wide({.auth = bt::auth_mode::btauth, .btauth_max_age = std::chrono::seconds(30)});
  CHECK(wide.send(btauth_request::make(alice(), "{}", bob().ss58_address(),
                                       now - 11 * btauth_second_ns))
            .result_int() == 200);
}

TEST_CASE("btauth route: the receiver must be this axon, and is required unless allowed",
          "[axon][btauth]") {
  {
    btauth_axon f;
    check_btauth_refused(f, f.send(btauth_request::make(alice(), "{}", charlie().ss58_address())),
                         401, "WrongReceiver: ", charlie().ss58_address());
  }
  {
    btauth_axon f;
    check_btauth_refused(f, f.send(btauth_request::make(alice(), "{}", "")), 401,
                         "WrongReceiver: ", "not bound to a receiver");
  }
  {
    btauth_axon f({.auth = bt::auth_mode::btauth, .btauth_require_receiver = false});
    CHECK(f.send(btauth_request::make(alice(), "{}", "")).result_int() == 200);
    // Allowed to be absent, never another's.
    btauth_axon g({.auth = bt::auth_mode::btauth, .btauth_require_receiver = false});
    check_btauth_refused(g, g.send(btauth_request::make(alice(), "{}", charlie().ss58_address())),
                         401, "WrongReceiver: ");
  }
  {
    bt::axon_options o = bt::axon_options::loopback();
    o.btauth_require_receiver = false;
    btauth_axon f({.auth = bt::auth_mode::btauth}, o);
    CHECK(f.send(btauth_request::make(alice(), "{}", "")).result_int() == 200);
  }
}

TEST_CASE("btauth route: a signature over anything else than the request is refused 401",
          "[axon][btauth]") {
  SECTION("the body changed after signing") {
    btauth_axon f;
    auto req = btauth_request::make(alice(), R"({"x":1})");
    req.body = R"({"x":2})";
    check_btauth_refused(f, f.send(req), 401, "BadSignature: ");
  }
  SECTION("another key's signature under the sender's hotkey") {
    btauth_axon f;
    auto req = btauth_request::make(alice(), "{}");
    const auto charlies = btauth_request::make(charlie(), "{}", bob().ss58_address(),
                                               std::stoll(req.value("X-Bittensor-Nonce")));
    req.set("X-Bittensor-Signature", charlies.value("X-Bittensor-Signature"));
    const auto r = f.send(req);
    check_btauth_refused(f, r, 401, "BadSignature: ");
    // Nobody verified: the answer names no caller.
    CHECK_FALSE(answer_names(r, alice().ss58_address(), req.value("X-Bittensor-Nonce")));
    CHECK(answer_names(r, "", ""));
  }
  SECTION("signed for another method") {
    btauth_axon f;
    const auto req =
        btauth_request::make(alice(), "{}", bob().ss58_address(), btauth::now_ns(), "PUT");
    check_btauth_refused(f, f.send(req, "POST"), 401, "BadSignature: ");
  }
  SECTION("signed for another path") {
    btauth_axon f;
    const auto req = btauth_request::make(alice(), "{}", bob().ss58_address(), btauth::now_ns(),
                                          "POST", "/other");
    check_btauth_refused(f, f.send(req, "POST", "/echo"), 401, "BadSignature: ");
  }
}

TEST_CASE("btauth route: malformed headers are refused 400 MalformedAuth", "[axon][btauth]") {
  const auto base = [] { return btauth_request::make(alice(), "{}"); };
  const std::string long_text(2'000, '7');
  struct bad_case {
    const char* what;
    btauth_request req;
    const char* fragment;
  };
  std::vector<bad_case> cases{
      {"signature not hex", base().set("X-Bittensor-Signature", "0x" + std::string(128, 'z')),
       "X-Bittensor-Signature must be"},
      {"signature short", base().set("X-Bittensor-Signature", "0xabcd"),
       "X-Bittensor-Signature must be"},
      {"version 2", base().set("X-Bittensor-Version", "2"), "X-Bittensor-Version must be 1"},
      {"nonce signed", base().set("X-Bittensor-Nonce", "+1"), "X-Bittensor-Nonce must be"},
      {"nonce leading zero",
       base().set("X-Bittensor-Nonce", "0" + base().value("X-Bittensor-Nonce")),
       "X-Bittensor-Nonce must be"},
      {"nonce over-long", base().set("X-Bittensor-Nonce", long_text), "X-Bittensor-Nonce must be"},
      {"hotkey non-ASCII", base().set("X-Bittensor-Hotkey", "5Grw\xc3\xa9vaEF"),
       "is not an SS58 address"},
      {"hotkey over-long", base().set("X-Bittensor-Hotkey", long_text), "is not an SS58 address"},
      {"hotkey of another network",
       base().set("X-Bittensor-Hotkey", bt::ss58::encode(alice().public_key(), 0)),
       "not Bittensor's 42"},
      {"crypto unknown", base().set("X-Bittensor-Crypto", "ecdsa"), "X-Bittensor-Crypto must be"},
      {"nonce twice", base().add("X-Bittensor-Nonce", base().value("X-Bittensor-Nonce")),
       "more than one X-Bittensor-Nonce"},
      {"hotkey twice", base().add("x-bittensor-hotkey", alice().ss58_address()),
       "more than one X-Bittensor-Hotkey"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    btauth_axon f;
    const auto r = f.send(c.req);
    check_btauth_refused(f, r, 400, "Malformed btauth/1 headers: MalformedAuth: ", c.fragment);
    CHECK(r[boost::beast::http::field::connection] == "close");
  }
}

TEST_CASE("btauth route: header names are matched in any case", "[axon][btauth]") {
  btauth_axon f;
  auto req = btauth_request::make(alice(), "{}");
  for (auto& [n, v] : req.fields) {
    if (n == "X-Bittensor-Nonce") n = "x-bittensor-nonce";
    if (n == "X-Bittensor-Hotkey") n = "X-BITTENSOR-HOTKEY";
    if (n == "X-Bittensor-Signature") n = "x-BiTtEnSoR-sIgNaTuRe";
  }
  const auto r = f.send(req);
  INFO(r.body());
  CHECK(r.result_int() == 200);
  CHECK(f.calls == 1);
}

TEST_CASE("plain route: which scheme answers is chosen by the headers the request carries",
          "[axon][btauth][auth_mode]") {
  SECTION("a btauth route without any signature names btauth's first missing header") {
    btauth_axon f;
    btauth_request none;
    none.body = "{}";
    check_btauth_refused(
        f, f.send(none), 400,
        "Malformed btauth/1 headers: MalformedAuth: missing X-Bittensor-Version header");
  }
  SECTION("both kinds of headers are ambiguous, whatever the route accepts") {
    for (const auto set : {bt::auth_mode::btauth, bt::auth_mode::epistula,
                           bt::auth_mode::epistula | bt::auth_mode::btauth}) {
      btauth_axon f({.auth = set});
      auto req = btauth_request::make(alice(), "{}");
      req.add("Epistula-Version", "2");
      check_btauth_refused(f, f.send(req), 400, "Ambiguous authentication: ", "X-Bittensor-*");
    }
  }
  SECTION("an Epistula-only route does not take btauth/1") {
    btauth_axon f({.auth = bt::auth_mode::epistula});
    check_btauth_refused(f, f.send(btauth_request::make(alice(), "{}")), 400,
                         "Malformed Epistula headers: ", "missing Epistula-Version");
  }
  SECTION("a route of both takes btauth/1, and Epistula as before") {
    btauth_axon f({.auth = bt::auth_mode::epistula | bt::auth_mode::btauth});
    REQUIRE(f.send(btauth_request::make(alice(), "{}")).result_int() == 200);
    CHECK(f.seen.scheme == "btauth");
    const std::string body = "{}";
    const std::string ts = std::to_string(bt::epistula::now_ms());
    const std::string uuid = "0f1e2d3c-4b5a-4978-a6b5-c4d3e2f1a0b9";
    const auto sig = charlie().sign(
        bt::epistula::signed_message(bt::sha256_hex(body), uuid, ts, bob().ss58_address()));
    btauth_request ep;
    ep.body = body;
    ep.fields = {{"Epistula-Version", "2"},
                 {"Epistula-Timestamp", ts},
                 {"Epistula-Uuid", uuid},
                 {"Epistula-Signed-By", charlie().ss58_address()},
                 {"Epistula-Signed-For", bob().ss58_address()},
                 {"Epistula-Request-Signature", "0x" + bt::to_hex(sig)}};
    const auto r = f.send(ep);
    INFO(r.body());
    REQUIRE(r.result_int() == 200);
    CHECK(f.seen.scheme == "epistula");
    CHECK(f.seen.hotkey == charlie().ss58_address());
    // Without any signature the route's first scheme, Epistula, names what is missing.
    btauth_request none;
    none.body = "{}";
    const auto unsigned_answer = f.send(none);
    CHECK(unsigned_answer.result_int() == 400);
    CHECK(btauth_message_of(unsigned_answer).starts_with("Malformed Epistula headers: "));
    CHECK(f.calls == 2);
  }
}

TEST_CASE("btauth route: blacklist sees the verified sender, after the signature",
          "[axon][btauth]") {
  std::vector<std::string> asked;
  btauth_axon f(
      {.auth = bt::auth_mode::btauth, .blacklist = [&asked](const bt::request_context& c) {
         asked.emplace_back(c.hotkey);
         return bt::verdict::deny("not today");
       }});
  auto bad = btauth_request::make(alice(), "{}");
  bad.body = "{ }";
  check_btauth_refused(f, f.send(bad), 401, "BadSignature: ");
  CHECK(asked.empty());
  check_btauth_refused(f, f.send(btauth_request::make(alice(), "{}")), 403,
                       "Forbidden. Key is blacklisted: not today");
  CHECK(asked == std::vector<std::string>{alice().ss58_address()});
}

TEST_CASE("btauth route: an unavailable replay store refuses 503, never serves unrecorded",
          "[axon][btauth]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.nonces = std::make_shared<btauth_unavailable_store>();
  btauth_axon f({.auth = bt::auth_mode::btauth}, o);
  const auto r = f.send(btauth_request::make(alice(), "{}"));
  check_btauth_refused(f, r, 503, "Service unavailable: the replay store is not answering");
  CHECK(r[boost::beast::http::field::retry_after] == "1");
}

TEST_CASE("btauth route: a body over the limit is refused 413 before the signature",
          "[axon][btauth]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.max_body_bytes = 16;
  btauth_axon f({.auth = bt::auth_mode::btauth}, o);
  check_btauth_refused(f, f.send(btauth_request::make(alice(), std::string(64, ' '))), 413,
                       "Request body too large");
}

TEST_CASE("axon::route takes a non-empty set of epistula and btauth", "[axon][btauth][auth_mode]") {
  bt::axon ax(bob(), bt::axon_options::loopback());
  const auto handler = [](std::string_view, const bt::json&, const bt::request_context&) {
    return bt::json_reply{};
  };
  const auto refused = [&](bt::json_route_options o) {
    try {
      ax.route("POST", "/refused", handler, std::move(o));
    } catch (const std::invalid_argument&) {
      return true;
    }
    return false;
  };
  CHECK(refused({.auth = bt::auth_mode{}}));
  CHECK(refused({.auth = bt::auth_mode::bittensor}));
  CHECK(refused({.auth = bt::auth_mode::bittensor | bt::auth_mode::btauth}));
  CHECK(refused({.auth = bt::auth_mode::btauth, .btauth_max_age = std::chrono::hours(25)}));
  CHECK(refused({.auth = bt::auth_mode::btauth, .btauth_allowed_skew = std::chrono::seconds(-1)}));
  CHECK_NOTHROW(ax.route("POST", "/a", handler, {.auth = bt::auth_mode::btauth}));
  CHECK_NOTHROW(
      ax.route("POST", "/b", handler, {.auth = bt::auth_mode::btauth | bt::auth_mode::epistula}));
  // Synapse routes keep the synapse protocol: btauth is not one of their schemes.
  bt::route_options synapse_policy;
  synapse_policy.auth = bt::auth_mode::btauth;
  CHECK_THROWS_AS(ax.set_route_options("Synapse", synapse_policy), std::invalid_argument);
}

TEST_CASE("axon start refuses a btauth window outside 0 to 24 hours", "[axon][btauth]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.btauth_max_age = std::chrono::hours(25);
  bt::axon ax(bob(), o);
  std::error_code ec;
  ax.start(ec);
  CHECK(ec == std::errc::invalid_argument);
}
