// Epistula v2 on a plain JSON route (axon::route; PROTOCOL 12): the head checks of
// axon/src/auth/epistula.cpp one by one, and the whole pipeline (json_pipeline.cpp, the session)
// driven in memory (memory_session.hpp). Every refusal is checked for its status and text from the
// one table (axon_errc.hpp) and for never reaching the handler.
#include "auth/epistula.hpp"
#include "errors/axon_errc.hpp"
#include "memory_session.hpp"

#include <bt/axon.hpp>
#include <bt/dendrite.hpp>
#include <bt/detail/uuid.hpp>
#include <bt/epistula.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/sha256.hpp>
#include <bt/ss58.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"
#include "support/memory_answers.hpp"
#include "support/python_client.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace http = boost::beast::http;
using bt::detail::axon_errc;
using bt::detail::epistula_headers;
using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;
using bt::test::only_response;

constexpr std::string_view fixed_uuid = "0f1e2d3c-4b5a-4978-a6b5-c4d3e2f1a0b9";

/// One Epistula request's fields, signed by `key` over `body` for `signed_for`.
struct signed_request {
  std::string body;
  std::vector<std::pair<std::string, std::string>> fields;

  static signed_request make(const bt::keypair& key, std::string body, std::string signed_for,
                             std::int64_t timestamp_ms = bt::epistula::now_ms(),
                             std::string uuid = std::string(fixed_uuid),
                             const bt::keypair* signer = nullptr) {
    const std::string ts = std::to_string(timestamp_ms);
    const auto sig =
        (signer ? *signer : key)
            .sign(bt::epistula::signed_message(bt::sha256_hex(body), uuid, ts, signed_for));
    signed_request r;
    r.body = std::move(body);
    r.fields = {{"Epistula-Version", "2"},
                {"Epistula-Timestamp", ts},
                {"Epistula-Uuid", uuid},
                {"Epistula-Signed-By", key.ss58_address()},
                {"Epistula-Request-Signature", "0x" + bt::to_hex(sig)}};
    if (!signed_for.empty()) r.fields.emplace_back("Epistula-Signed-For", signed_for);
    return r;
  }

  signed_request& set(std::string_view name, std::string value) {
    for (auto& [n, v] : fields)
      if (n == name) {
        v = std::move(value);
        return *this;
      }
    fields.emplace_back(std::string(name), std::move(value));
    return *this;
  }
  signed_request& drop(std::string_view name) {
    std::erase_if(fields, [&](const auto& f) { return f.first == name; });
    return *this;
  }
  signed_request& add(std::string name, std::string value) {
    fields.emplace_back(std::move(name), std::move(value));
    return *this;
  }

  std::string wire(std::string_view method = "POST", std::string_view path = "/echo") const {
    std::string w = std::string(method) + " " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n";
    for (const auto& [n, v] : fields) w += n + ": " + v + "\r\n";
    w += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
    return w;
  }

  /// The fields as the parser would capture them.
  epistula_headers headers() const {
    epistula_headers h;
    for (const auto& [n, v] : fields) h.feed(n, v);
    return h;
  }
};

bt::json json_of(const http::response<http::string_body>& r) {
  auto j = bt::json::parse(r.body(), nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

struct echo_fixture {
  std::atomic<int> calls{0};
  bt::axon ax;
  std::optional<bt::detail::memory_axon> mem;

  explicit echo_fixture(bt::axon_options o = bt::axon_options::loopback(),
                        bt::json_route_options policy = {})
      : ax(bob(), std::move(o)) {
    ax.route(
        "POST", "/echo",
        [this](std::string_view raw, const bt::json& body, const bt::request_context& caller) {
          ++calls;
          bt::json_reply reply;
          reply.body = {{"raw", std::string(raw)},
                        {"body", body},
                        {"hotkey", std::string(caller.hotkey)},
                        {"uuid", std::string(caller.uuid)},
                        {"verified", caller.verified}};
          return reply;
        },
        std::move(policy));
    mem.emplace(ax);
  }

  http::response<http::string_body> send(const signed_request& r, std::string_view method = "POST",
                                         std::string_view path = "/echo") {
    return only_response(mem->exchange(r.wire(method, path)));
  }
};

/// The table's status and text for `e` with `details`, and the handler not called.
void check_refused(echo_fixture& f, const http::response<http::string_body>& r, axon_errc e,
                   std::string_view fragment) {
  const auto& row = bt::detail::entry_of(e);
  CHECK(r.result_int() == static_cast<unsigned>(row.status));
  const auto j = json_of(r);
  REQUIRE(j.contains("message"));
  const std::string message = j.at("message").get<std::string>();
  INFO("message: " << message);
  CHECK(message.find(fragment) != std::string::npos);
  CHECK(r[http::field::content_type] == "application/json");
  CHECK(r["bt_header_axon_status_code"].empty());  // a plain route's answer has no bt headers
  CHECK(f.calls == 0);
}

bt::detail::epistula_policy default_policy() {
  static const std::string mine = bob().ss58_address();
  return {8'000, 2'000, true, mine};
}

}  // namespace

TEST_CASE("epistula head: a well-formed head passes and is decoded", "[axon][epistula]") {
  const std::int64_t now = 1'700'000'000'000;
  const auto req = signed_request::make(alice(), "{}", bob().ss58_address(), now - 1'000);
  bt::detail::epistula_claim claim;
  const auto failed = check_epistula_head(req.headers(), now, default_policy(), claim);
  REQUIRE_FALSE(failed);
  CHECK(claim.timestamp_ms == now - 1'000);
  CHECK(bt::to_hex(claim.public_key) == bt::to_hex(alice().public_key()));
  std::string scratch;
  CHECK_FALSE(check_epistula_signature(req.headers(), claim, "{}", scratch));
  CHECK(scratch == bt::sha256_hex("{}") + "." + std::string(fixed_uuid) + "." +
                       std::to_string(now - 1'000) + "." + bob().ss58_address());
  // Another body under the same head: the signature no longer verifies (401).
  const auto tampered = check_epistula_signature(req.headers(), claim, "{ }", scratch);
  REQUIRE(tampered);
  CHECK_FALSE(tampered->malformed);
}

TEST_CASE("epistula head: every field's bad input is refused with its reason", "[axon][epistula]") {
  const std::int64_t now = 1'700'000'000'000;
  const std::string me = bob().ss58_address();
  struct bad_case {
    const char* what;
    signed_request req;
    bool malformed;
    const char* fragment;
  };
  const auto base = [&] { return signed_request::make(alice(), "{}", me, now); };
  std::vector<bad_case> cases{
      {"version missing", base().drop("Epistula-Version"), true, "missing Epistula-Version"},
      {"version 1", base().set("Epistula-Version", "1"), true, "Epistula-Version must be 2"},
      {"version twice", base().add("Epistula-Version", "2"), true,
       "more than one Epistula-Version"},
      {"timestamp missing", base().drop("Epistula-Timestamp"), true, "missing Epistula-Timestamp"},
      {"timestamp signed", base().set("Epistula-Timestamp", "+1700000000000"), true,
       "Epistula-Timestamp must be"},
      {"timestamp fractional", base().set("Epistula-Timestamp", "1700000000000.0"), true,
       "Epistula-Timestamp must be"},
      {"timestamp too long", base().set("Epistula-Timestamp", std::string(16, '9')), true,
       "Epistula-Timestamp must be"},
      {"timestamp empty", base().set("Epistula-Timestamp", ""), true, "Epistula-Timestamp must be"},
      // One spelling per instant: a leading zero would be a second signed text for it.
      {"timestamp leading zero", base().set("Epistula-Timestamp", "0" + std::to_string(now)), true,
       "Epistula-Timestamp must be"},
      {"timestamp negative", base().set("Epistula-Timestamp", "-" + std::to_string(now)), true,
       "Epistula-Timestamp must be"},
      {"timestamp inner space", base().set("Epistula-Timestamp", "1700000 000000"), true,
       "Epistula-Timestamp must be"},
      {"timestamp 0: well formed, outside the window", base().set("Epistula-Timestamp", "0"), false,
       "seconds old"},
      {"timestamp 8.001 s old", base().set("Epistula-Timestamp", std::to_string(now - 8'001)),
       false, "seconds old"},
      {"timestamp 2.001 s ahead", base().set("Epistula-Timestamp", std::to_string(now + 2'001)),
       false, "in the future"},
      {"signed-by missing", base().drop("Epistula-Signed-By"), true, "missing Epistula-Signed-By"},
      {"signed-by not SS58", base().set("Epistula-Signed-By", "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHp"),
       true, "is not an SS58 address"},
      {"signed-by hex key", base().set("Epistula-Signed-By", "0x" + std::string(64, 'a')), true,
       "is not an SS58 address"},
      {"signed-by format 0",
       base().set("Epistula-Signed-By", bt::ss58::encode(alice().public_key(), 0)), true,
       "not Bittensor's 42"},
      {"signed-by twice", base().add("Epistula-Signed-By", alice().ss58_address()), true,
       "more than one Epistula-Signed-By"},
      {"signed-for absent", base().drop("Epistula-Signed-For"), true,
       "missing Epistula-Signed-For"},
      {"signed-for another axon", base().set("Epistula-Signed-For", charlie().ss58_address()),
       false, "this axon's hotkey is"},
      {"signed-for twice", base().add("Epistula-Signed-For", me), true,
       "more than one Epistula-Signed-For"},
      {"uuid missing", base().drop("Epistula-Uuid"), true, "missing Epistula-Uuid"},
      {"uuid upper case", base().set("Epistula-Uuid", "0F1E2D3C-4B5A-4978-A6B5-C4D3E2F1A0B9"), true,
       "Epistula-Uuid must be a uuid4"},
      {"uuid version 1", base().set("Epistula-Uuid", "0f1e2d3c-4b5a-1978-a6b5-c4d3e2f1a0b9"), true,
       "Epistula-Uuid must be a uuid4"},
      {"uuid no dashes", base().set("Epistula-Uuid", "0f1e2d3c4b5a4978a6b5c4d3e2f1a0b9"), true,
       "Epistula-Uuid must be a uuid4"},
      {"uuid twice", base().add("Epistula-Uuid", std::string(fixed_uuid)), true,
       "more than one Epistula-Uuid"},
      {"signature missing", base().drop("Epistula-Request-Signature"), true,
       "missing Epistula-Request-Signature"},
      {"signature without 0x", base().set("Epistula-Request-Signature", std::string(130, 'a')),
       true, "Epistula-Request-Signature must be 0x"},
      {"signature not hex",
       base().set("Epistula-Request-Signature", "0x" + std::string(127, 'a') + "g"), true,
       "Epistula-Request-Signature must be 0x"},
      {"signature short", base().set("Epistula-Request-Signature", "0x" + std::string(126, 'a')),
       true, "Epistula-Request-Signature must be 0x"},
      {"signature long", base().set("Epistula-Request-Signature", "0x" + std::string(4000, 'a')),
       true, "Epistula-Request-Signature must be 0x"},
      {"signature twice", base().add("Epistula-Request-Signature", "0x" + std::string(128, 'a')),
       true, "more than one Epistula-Request-Signature"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    bt::detail::epistula_claim claim;
    const auto failed = check_epistula_head(c.req.headers(), now, default_policy(), claim);
    REQUIRE(failed);
    INFO("why: " << failed->why);
    CHECK(failed->malformed == c.malformed);
    CHECK(failed->why.find(c.fragment) != std::string::npos);
    CHECK(failed->why.size() < 400);  // a 4000-byte value is quoted in part only
  }
}

TEST_CASE("epistula head: the window's edges and an absent Signed-For when allowed",
          "[axon][epistula]") {
  const std::int64_t now = 1'700'000'000'000;
  bt::detail::epistula_claim claim;
  const std::string me = bob().ss58_address();
  CHECK_FALSE(check_epistula_head(signed_request::make(alice(), "", me, now - 8'000).headers(), now,
                                  default_policy(), claim));
  CHECK_FALSE(check_epistula_head(signed_request::make(alice(), "", me, now + 2'000).headers(), now,
                                  default_policy(), claim));
  auto lenient = default_policy();
  lenient.require_signed_for = false;
  CHECK_FALSE(check_epistula_head(signed_request::make(alice(), "", "", now).headers(), now,
                                  lenient, claim));
  // A present Signed-For must still be ours.
  const auto other = check_epistula_head(
      signed_request::make(alice(), "", charlie().ss58_address(), now).headers(), now, lenient,
      claim);
  REQUIRE(other);
  CHECK_FALSE(other->malformed);
}

TEST_CASE("epistula headers: names in any case, secret signatures and others ignored",
          "[axon][epistula]") {
  epistula_headers h;
  CHECK(epistula_headers::is_epistula("epistula-uuid"));
  CHECK(epistula_headers::is_epistula("EPISTULA-Secret-Signature-0"));
  CHECK_FALSE(epistula_headers::is_epistula("Epistula-"));
  CHECK_FALSE(epistula_headers::is_epistula("X-Epistula-Uuid"));
  h.feed("EPISTULA-UUID", "a");
  h.feed("Epistula-Secret-Signature-0", "x");
  h.feed("Epistula-Secret-Signature-1", "y");
  h.feed("Epistula-Secret-Signature-2", "z");
  CHECK(h.any());
  CHECK(h.count(epistula_headers::uuid) == 1);
  CHECK(h.value(epistula_headers::uuid) == "a");
  CHECK(h.count(epistula_headers::signature) == 0);
}

TEST_CASE("epistula route in memory: accepted once, with the verified caller",
          "[axon][epistula][memory]") {
  echo_fixture f;
  const auto req = signed_request::make(alice(), R"({"x":[1,2]})", bob().ss58_address());
  auto r = f.send(req);
  REQUIRE(r.result_int() == 200);
  CHECK(r[http::field::content_type] == "application/json");
  const auto j = json_of(r);
  CHECK(j.at("raw") == R"({"x":[1,2]})");
  CHECK(j.at("body") == bt::json::parse(R"({"x":[1,2]})"));
  CHECK(j.at("hotkey") == alice().ss58_address());
  CHECK(j.at("uuid") == fixed_uuid);
  CHECK(j.at("verified") == true);
  CHECK(f.calls == 1);

  // The same request again: the replay store refuses the uuid.
  f.calls = 0;
  check_refused(f, f.send(req), axon_errc::epistula_replayed, "Epistula-Uuid was already used");
  // The uuid with a new timestamp and signature: still used.
  check_refused(
      f,
      f.send(signed_request::make(alice(), "{}", bob().ss58_address(), bt::epistula::now_ms() + 1)),
      axon_errc::epistula_replayed, "already used");
  // Another signer's uuid space is its own.
  r = f.send(signed_request::make(charlie(), "{}", bob().ss58_address()));
  CHECK(r.result_int() == 200);
}

TEST_CASE("epistula route in memory: refusals never reach the handler",
          "[axon][epistula][memory]") {
  echo_fixture f;
  const std::string me = bob().ss58_address();
  const auto fresh = [&](std::string body = "{}") {
    return signed_request::make(alice(), std::move(body), me, bt::epistula::now_ms(),
                                bt::detail::make_uuid4());
  };
  SECTION("malformed head: 400") {
    check_refused(f, f.send(fresh().set("Epistula-Version", "3")), axon_errc::epistula_malformed,
                  "Epistula-Version must be 2");
  }
  SECTION("stale timestamp: 401") {
    auto req = signed_request::make(alice(), "{}", me, bt::epistula::now_ms() - 60'000);
    check_refused(f, f.send(req), axon_errc::not_verified, "seconds old");
  }
  SECTION("signed for another axon: 401") {
    auto req = signed_request::make(alice(), "{}", charlie().ss58_address());
    check_refused(f, f.send(req), axon_errc::not_verified, "Epistula-Signed-For");
  }
  SECTION("tampered body: 401") {
    auto req = fresh();
    req.body = "{ }";
    check_refused(f, f.send(req), axon_errc::not_verified, "does not verify");
  }
  SECTION("another key's signature: 401") {
    auto req = signed_request::make(alice(), "{}", me, bt::epistula::now_ms(),
                                    bt::detail::make_uuid4(), &charlie());
    check_refused(f, f.send(req), axon_errc::not_verified, "does not verify");
  }
  SECTION("invalid UTF-8 in a header: 400, the answer still valid JSON") {
    check_refused(f, f.send(fresh().set("Epistula-Uuid", "\xff\xfe-not-a-uuid")),
                  axon_errc::epistula_malformed, "Epistula-Uuid must be a uuid4");
  }
  SECTION("a 20,000-byte header value: 400, quoted in part") {
    const auto r = f.send(fresh().set("Epistula-Signed-By", std::string(20'000, '5')));
    check_refused(f, r, axon_errc::epistula_malformed, "is not an SS58 address");
    CHECK(r.body().size() < 1'000);
  }
  SECTION("a head over max_header_bytes: 431") {
    const auto r = f.send(fresh().set("Epistula-Signed-By", std::string(40'000, '5')));
    CHECK(r.result_int() == 431);
    CHECK(f.calls == 0);
  }
  SECTION("not JSON: 400") {
    check_refused(f, f.send(fresh("{\"a\":")), axon_errc::malformed_body, "Malformed body");
  }
  SECTION("duplicate key: 400") {
    check_refused(f, f.send(fresh(R"({"a":1,"a":2})")), axon_errc::malformed_body,
                  "Malformed body");
  }
  SECTION("wrong method: 405") {
    check_refused(f, f.send(fresh(), "GET"), axon_errc::method_not_allowed, "Method Not Allowed");
  }
  SECTION("synapse headers only: 400 (no Epistula headers)") {
    signed_request none;
    none.body = "{}";
    check_refused(f, f.send(none), axon_errc::epistula_malformed, "missing Epistula-Version");
  }
}

TEST_CASE("epistula route in memory: body limit, blacklist, priority failure and options",
          "[axon][epistula][memory]") {
  const std::string me = bob().ss58_address();
  SECTION("Content-Length over the limit: 413 before the body is read") {
    auto o = bt::axon_options::loopback();
    o.max_body_bytes = 16;
    echo_fixture f(o);
    check_refused(f, f.send(signed_request::make(alice(), std::string(17, ' '), me)),
                  axon_errc::body_too_large_declared, "Request body too large");
  }
  SECTION("blacklist on the verified signer: 403") {
    bt::json_route_options p;
    std::string seen;
    p.blacklist = [&seen](const bt::request_context& caller) {
      seen = std::string(caller.hotkey);
      return bt::verdict::deny("not you");
    };
    echo_fixture f(bt::axon_options::loopback(), p);
    check_refused(f, f.send(signed_request::make(alice(), "{}", me)), axon_errc::blacklisted,
                  "Forbidden. Key is blacklisted: not you.");
    CHECK(seen == alice().ss58_address());
    // A bad signature never reaches the blacklist.
    seen.clear();
    auto forged = signed_request::make(alice(), "{}", me, bt::epistula::now_ms(),
                                       bt::detail::make_uuid4(), &charlie());
    check_refused(f, f.send(forged), axon_errc::not_verified, "does not verify");
    CHECK(seen.empty());
  }
  SECTION("a throwing priority function: 500 with an id") {
    bt::json_route_options p;
    p.priority = [](const bt::request_context&) -> double { throw std::runtime_error("boom"); };
    echo_fixture f(bt::axon_options::loopback(), p);
    check_refused(f, f.send(signed_request::make(alice(), "{}", me)), axon_errc::internal_error,
                  "Internal Server Error #");
  }
  SECTION("Signed-For optional when configured; the window configurable") {
    auto o = bt::axon_options::loopback();
    o.epistula_require_signed_for = false;
    o.epistula_past_window = std::chrono::milliseconds(100'000);
    echo_fixture f(o);
    auto r = f.send(signed_request::make(alice(), "{}", "", bt::epistula::now_ms() - 50'000));
    CHECK(r.result_int() == 200);
    CHECK(f.calls == 1);
  }
}

TEST_CASE("epistula route: the handler's status, forward_error and registration rules",
          "[axon][epistula][memory]") {
  const std::string me = bob().ss58_address();
  bt::axon ax(bob(), bt::axon_options::loopback());
  ax.route("POST", "/teapot", [](std::string_view, const bt::json&, const bt::request_context&) {
    return bt::json_reply{418, {{"short", "and stout"}}};
  });
  ax.route("POST", "/refuse",
           [](std::string_view, const bt::json&, const bt::request_context&) -> bt::json_reply {
             throw bt::forward_error(422, "no thanks");
           });
  CHECK_THROWS_AS(ax.route("PUT", "/x", {}), std::invalid_argument);
  CHECK_THROWS_AS(
      ax.route("POST", "x", [](auto, const auto&, const auto&) { return bt::json_reply{}; }),
      std::invalid_argument);
  CHECK_THROWS_AS(
      ax.route("POST", "/teapot", [](auto, const auto&, const auto&) { return bt::json_reply{}; }),
      std::logic_error);
  CHECK_THROWS_AS(
      ax.route("POST", "/Synapse", [](auto, const auto&, const auto&) { return bt::json_reply{}; }),
      std::logic_error);
  CHECK_THROWS_AS(
      ax.route("POST", "/b", [](auto, const auto&, const auto&) { return bt::json_reply{}; },
               {.auth = bt::auth_mode::either}),
      std::invalid_argument);
  // Plain routes are not synapses.
  CHECK(ax.synapse_names() == std::vector<std::string>{"Synapse"});
  bt::detail::memory_axon mem(ax);
  auto r =
      only_response(mem.exchange(signed_request::make(alice(), "{}", me).wire("POST", "/teapot")));
  CHECK(r.result_int() == 418);
  CHECK(json_of(r) == bt::json{{"short", "and stout"}});
  r = only_response(mem.exchange(
      signed_request::make(alice(), "{}", me, bt::epistula::now_ms(), bt::detail::make_uuid4())
          .wire("POST", "/refuse")));
  CHECK(r.result_int() == 422);
  CHECK(json_of(r).at("message") == "no thanks");
}

TEST_CASE("epistula windows outside 0 to 24 h are refused at start", "[axon][epistula]") {
  for (const auto past : {std::chrono::milliseconds(-1), std::chrono::milliseconds(86'400'001)}) {
    auto o = bt::axon_options::loopback();
    o.epistula_past_window = past;
    bt::axon ax(bob(), o);
    std::error_code ec;
    ax.start(ec);
    CHECK(ec == std::errc::invalid_argument);
  }
  auto o = bt::axon_options::loopback();
  o.epistula_future_window = std::chrono::hours(25);
  bt::axon ax(bob(), o);
  std::error_code ec;
  ax.start(ec);
  CHECK(ec == std::errc::invalid_argument);
  auto ok = bt::axon_options::loopback();
  ok.epistula_past_window = std::chrono::hours(24);
  bt::axon fine(bob(), ok);
  fine.start(ec);
  CHECK_FALSE(ec);
  fine.stop();
}

// ---- auth_mode on a synapse route (PROTOCOL 12.4) ----

namespace {

using bt::examples::dummy;

/// //Bob's axon in memory serving Dummy under `mode`; the handler records the caller it saw.
struct dummy_fixture {
  std::atomic<int> calls{0};
  std::string seen_hotkey;  // written by the handler (one request at a time in memory)
  bool seen_verified = false;
  bt::axon ax;
  std::optional<bt::detail::memory_axon> mem;

  explicit dummy_fixture(bt::auth_mode mode) : ax(bob(), bt::axon_options::loopback()) {
    bt::route_options policy;
    policy.auth = mode;
    ax.attach<dummy>(
        [this](dummy& d, const bt::request_context& c) {
          ++calls;
          seen_hotkey = std::string(c.hotkey);
          seen_verified = c.verified;
          d.dummy_output = 2 * d.dummy_input;
        },
        std::move(policy));
    mem.emplace(ax);
  }

  http::response<http::string_body> send(std::string_view wire) {
    return only_response(mem->exchange(wire));
  }
  /// A bittensor (Python-shaped) request from `caller`.
  bt::test::request_parts bittensor(const bt::keypair& caller, std::int64_t input,
                                    std::string uuid) {
    dummy d;
    d.dummy_input = input;
    bt::test::python_request_options o;
    o.uuid = std::move(uuid);
    return bt::test::python_request(d, caller, bob().ss58_address(), o);
  }
};

/// Refused with `e`'s status and a message containing `fragment`; the handler not called.
void check_dummy_refused(const dummy_fixture& f, const http::response<http::string_body>& r,
                         axon_errc e, std::string_view fragment) {
  CHECK(r.result_int() == static_cast<unsigned>(bt::detail::entry_of(e).status));
  const auto j = json_of(r);
  REQUIRE(j.contains("message"));
  const std::string message = j.at("message").get<std::string>();
  INFO("message: " << message);
  CHECK(message.find(fragment) != std::string::npos);
  CHECK(f.calls == 0);
}

}  // namespace

TEST_CASE("auth either: a synapse route serves bittensor and Epistula requests",
          "[axon][epistula][auth_mode]") {
  dummy_fixture f(bt::auth_mode::either);
  const std::string me = bob().ss58_address();

  // No Epistula-* field: bittensor's path, as a bittensor-only route would serve it.
  const auto bt_req = f.bittensor(alice(), 21, bt::test::test_uuid("either-bt"));
  auto r = f.send(bt_req.wire(8091));
  REQUIRE(r.result_int() == 200);
  CHECK(json_of(r).at("dummy_output") == 42);
  CHECK(f.seen_hotkey == alice().ss58_address());
  CHECK(f.seen_verified);
  // Its signature is still checked: a tampered body is refused.
  auto tampered = bt_req;
  tampered.set("bt_header_dendrite_nonce", std::to_string(bt::test::now_ns()));
  f.calls = 0;
  check_dummy_refused(f, f.send(tampered.wire(8091)), axon_errc::not_verified,
                      "Signature mismatch");

  // Epistula fields: Epistula's path. The synapse JSON is the body; the caller is Signed-By; the
  // answer is the synapse's, with its bt headers.
  const auto epi = signed_request::make(charlie(), R"({"dummy_input": 5})", me);
  r = f.send(epi.wire("POST", "/Dummy"));
  REQUIRE(r.result_int() == 200);
  const auto j = json_of(r);
  CHECK(j.at("dummy_output") == 10);
  CHECK(j.at("dendrite").at("hotkey") == charlie().ss58_address());
  CHECK(r["bt_header_axon_status_code"] == "200");
  CHECK(f.calls == 1);
  CHECK(f.seen_hotkey == charlie().ss58_address());
  CHECK(f.seen_verified);
  // The same request again: the replay store refuses its uuid, as on a plain route.
  f.calls = 0;
  check_dummy_refused(f, f.send(epi.wire("POST", "/Dummy")), axon_errc::epistula_replayed,
                      "Epistula-Uuid was already used");
  // Epistula's checks apply in full: another body under the signature, a signature by another
  // key, a timestamp outside the window.
  auto body_swapped = signed_request::make(charlie(), R"({"dummy_input": 6})", me,
                                           bt::epistula::now_ms(), bt::detail::make_uuid4());
  body_swapped.body = R"({"dummy_input": 7})";
  check_dummy_refused(f, f.send(body_swapped.wire("POST", "/Dummy")), axon_errc::not_verified,
                      "does not verify");
  check_dummy_refused(f,
                      f.send(signed_request::make(charlie(), "{}", me, bt::epistula::now_ms(),
                                                  bt::detail::make_uuid4(), &alice())
                                 .wire("POST", "/Dummy")),
                      axon_errc::not_verified, "does not verify");
  check_dummy_refused(
      f,
      f.send(signed_request::make(charlie(), "{}", me, bt::epistula::now_ms() - 60'000,
                                  bt::detail::make_uuid4())
                 .wire("POST", "/Dummy")),
      axon_errc::not_verified, "Epistula-Timestamp");
  // A body that names another caller than the signer never reaches the handler.
  check_dummy_refused(
      f,
      f.send(signed_request::make(charlie(),
                                  R"({"dummy_input": 1, "dendrite": {"hotkey": ")" +
                                      alice().ss58_address() + R"("}})",
                                  me, bt::epistula::now_ms(), bt::detail::make_uuid4())
                 .wire("POST", "/Dummy")),
      axon_errc::malformed_body, "Epistula-Signed-By");
}

TEST_CASE("auth either: a request carrying both kinds of signature is refused 400",
          "[axon][epistula][auth_mode]") {
  const std::string me = bob().ss58_address();
  for (const auto mode : {bt::auth_mode::either, bt::auth_mode::epistula}) {
    dummy_fixture f(mode);
    // A valid bittensor request with valid Epistula fields added: each signature alone would
    // pass, together they are ambiguous.
    auto req = f.bittensor(alice(), 3, bt::test::test_uuid("both"));
    const auto epi = signed_request::make(alice(), req.body, me);
    for (const auto& [n, v] : epi.fields) req.set(n, v);
    check_dummy_refused(f, f.send(req.wire(8091)), axon_errc::epistula_malformed, "ambiguous");
    // Neither signature was spent: each alone is still accepted afterwards.
    auto alone = signed_request::make(alice(), req.body, me);
    CHECK(f.send(alone.wire("POST", "/Dummy")).result_int() == 200);
  }
  // A bittensor-only route ignores Epistula-* fields, as before.
  dummy_fixture f(bt::auth_mode::bittensor);
  auto req = f.bittensor(alice(), 3, bt::test::test_uuid("both-bittensor"));
  for (const auto& [n, v] : signed_request::make(charlie(), req.body, me).fields) req.set(n, v);
  const auto r = f.send(req.wire(8091));
  CHECK(r.result_int() == 200);
  CHECK(f.seen_hotkey == alice().ss58_address());
}

TEST_CASE("auth epistula on a synapse route refuses bittensor requests, plain routes refuse either",
          "[axon][epistula][auth_mode]") {
  dummy_fixture f(bt::auth_mode::epistula);
  check_dummy_refused(f,
                      f.send(f.bittensor(alice(), 2, bt::test::test_uuid("epi-only")).wire(8091)),
                      axon_errc::epistula_malformed, "missing Epistula-Version");
  CHECK(f.send(signed_request::make(alice(), R"({"dummy_input": 2})", bob().ss58_address())
                   .wire("POST", "/Dummy"))
            .result_int() == 200);

  bt::axon ax(bob(), bt::axon_options::loopback());
  const auto handler = [](std::string_view, const bt::json&, const bt::request_context&) {
    return bt::json_reply{};
  };
  for (const auto mode : {bt::auth_mode::either, bt::auth_mode::bittensor}) {
    bt::json_route_options o;
    o.auth = mode;
    CHECK_THROWS_AS(ax.route("POST", "/p", handler, o), std::invalid_argument);
  }
  // Refused for its auth set (not for anything else of the route).
  const auto refused_set = [&ax](bt::auth_mode set) {
    bt::route_options o;
    o.auth = set;
    try {
      ax.attach<dummy>([](dummy&) {}, o);
    } catch (const std::invalid_argument& e) {
      return std::string_view(e.what()).find("unknown auth_mode") != std::string_view::npos;
    }
    return false;
  };
  CHECK(refused_set(static_cast<bt::auth_mode>(7)));
  // A route's auth is a set of schemes: the empty set admits nobody and is refused too.
  CHECK(refused_set(bt::auth_mode{}));
}

TEST_CASE("auth sets: either is the union of the two schemes and serves both",
          "[axon][epistula][auth_mode]") {
  CHECK((bt::auth_mode::bittensor | bt::auth_mode::epistula) == bt::auth_mode::either);
  CHECK(bt::accepts(bt::auth_mode::either, bt::auth_mode::epistula));
  CHECK(bt::accepts(bt::auth_mode::either, bt::auth_mode::bittensor));
  CHECK_FALSE(bt::accepts(bt::auth_mode::bittensor, bt::auth_mode::epistula));
  CHECK_FALSE(bt::accepts(bt::auth_mode::epistula, bt::auth_mode::bittensor));

  dummy_fixture f(bt::auth_mode::bittensor | bt::auth_mode::epistula);
  auto r = f.send(f.bittensor(alice(), 4, bt::test::test_uuid("union-bt")).wire(8091));
  REQUIRE(r.result_int() == 200);
  CHECK(json_of(r).at("dummy_output") == 8);
  CHECK(f.seen_hotkey == alice().ss58_address());
  r = f.send(signed_request::make(charlie(), R"({"dummy_input": 5})", bob().ss58_address())
                 .wire("POST", "/Dummy"));
  REQUIRE(r.result_int() == 200);
  CHECK(json_of(r).at("dummy_output") == 10);
  CHECK(f.seen_hotkey == charlie().ss58_address());
}

TEST_CASE("auth either over loopback: our dendrite's call and epistula_call on one route",
          "[axon][epistula][auth_mode]") {
  bt::axon ax(bob(), bt::axon_options::loopback());
  bt::route_options policy;
  policy.auth = bt::auth_mode::either;
  ax.attach<dummy>([](dummy& d) { d.dummy_output = 2 * d.dummy_input; }, std::move(policy));
  ax.start();
  auto target = ax.info();
  target.ip = "127.0.0.1";
  bt::dendrite_options o;
  o.verify_responses = bt::response_verification::required;
  bt::dendrite d(alice(), o);
  dummy q;
  q.dummy_input = 4;
  const auto call = d.call(target, q, 5.0);
  INFO(call.dendrite.status_message.value_or(""));
  CHECK(call.dendrite.status_code == 200);
  CHECK(call.dummy_output == 8);
  const auto epi = d.epistula_call(target, "POST", "/Dummy", R"({"dummy_input": 9})", 5.0);
  INFO(epi.status_message);
  CHECK(epi.status == 200);
  CHECK(epi.response_verified);  // the answer is signed for the Epistula request's uuid
  const auto j = bt::json::parse(epi.body, nullptr, false);
  REQUIRE(j.is_object());
  CHECK(j.at("dummy_output") == 18);
  ax.stop();
}
