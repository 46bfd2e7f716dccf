// bt::axon end to end on loopback sockets: the success path, then every status with its exact
// message, with requests built as a Python dendrite builds them (support/python_client.hpp) and
// with our own dendrite.
#include <bt/axon.hpp>

#include <bt/dendrite.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/sha3.hpp>

#include <catch2/catch.hpp>

#include <support/vectors.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "support/dummy_request.hpp"
#include "support/python_client.hpp"
#include "support/wait.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "support/dev_keys.hpp"

using namespace std::chrono_literals;
using bt::examples::dummy;
using bt::test::python_request;
using bt::test::raw_client;
using bt::test::roundtrip;

namespace {

using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;

void double_it(dummy& s, const bt::request_context&) {
  s.dummy_output = s.dummy_input * 2;
}

/// An axon for //Bob on 127.0.0.1, port 0, serving ping + Dummy.
std::unique_ptr<bt::axon> make_axon(bt::axon_options o = bt::axon_options::loopback(),
                                    bt::route_options policy = {}) {
  auto ax = std::make_unique<bt::axon>(bob(), std::move(o));
  ax->attach<dummy>(double_it, std::move(policy));
  return ax;
}

dummy dummy_with(std::int64_t input) {
  dummy d;
  d.dummy_input = input;
  return d;
}

bt::test::request_parts dummy_request(const bt::axon& ax, std::int64_t input = 21,
                                      bt::test::python_request_options o = {}) {
  return bt::test::dummy_request(ax.port(), input, std::move(o));
}

std::string message_of(const bt::test::reply& r) {
  const auto j = bt::json::parse(r.body, nullptr, false);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("message"));
  return j.at("message").get<std::string>();
}

/// Every error answer carries the bt headers with the status and message (PROTOCOL 6.7 item 4).
void check_error_headers(const bt::test::reply& r, int status, const std::string& message) {
  CHECK(r.status == status);
  CHECK(r.header("content-type") == std::optional<std::string>("application/json"));
  CHECK(r.header("bt_header_axon_status_code") ==
        std::optional<std::string>(std::to_string(status)));
  const auto hm = r.header("bt_header_axon_status_message");
  REQUIRE(hm);
  // The header copy is sanitised (non-ASCII -> '?'); messages in these tests are ASCII.
  CHECK(*hm == message);
  CHECK(r.has_header("bt_header_axon_process_time"));
  CHECK(r.has_header("computed_body_hash"));
  CHECK(message_of(r) == message);
}

/// Lower-case hex UUID text of the given version ('1' or '4') with the RFC 4122 variant.
bool is_uuid(std::string_view s, char version) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    const char ch = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (ch != '-') return false;
    } else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
      return false;
    }
  }
  return s[14] == version && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b');
}

/// `text` is `prefix`, then only digits and dots, then `suffix`.
bool numbers_between(const std::string& text, const std::string& prefix,
                     const std::string& suffix) {
  if (text.size() < prefix.size() + suffix.size() + 1) return false;
  if (text.compare(0, prefix.size(), prefix) != 0) return false;
  if (text.compare(text.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  for (std::size_t i = prefix.size(); i < text.size() - suffix.size(); ++i)
    if (!((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) return false;
  return true;
}

}  // namespace

TEST_CASE("a Python-shaped Dummy request gets the success response of PROTOCOL 5.11", "[axon]") {
  auto ax = make_axon();
  ax->start();
  const auto req = dummy_request(*ax, 21);
  const auto r = roundtrip(ax->port(), req.wire(ax->port()));

  REQUIRE(r.status == 200);
  CHECK(r.header("content-type") == std::optional<std::string>("application/json"));
  // The body: the request synapse echoed with the output and the axon's status.
  const auto body = bt::json::parse(r.body, nullptr, false);
  REQUIRE(body.is_object());
  CHECK(body.at("name").get<std::string>() == "Dummy");
  CHECK(body.at("dummy_input").get<std::int64_t>() == 21);
  CHECK(body.at("dummy_output").get<std::int64_t>() == 42);
  CHECK(body.at("axon").at("status_code").get<int>() == 200);
  CHECK(body.at("axon").at("status_message").get<std::string>() == "Success");
  CHECK(body.at("axon").at("process_time").is_number_float());
  CHECK(body.at("axon").at("hotkey").get<std::string>() == bob().ss58_address());
  CHECK(body.at("axon").at("signature").is_null());  // success carries no axon signature (5.11)
  CHECK(body.at("dendrite").at("hotkey").get<std::string>() == alice().ss58_address());
  CHECK(body.at("dendrite").at("port").is_null());  // the body block is echoed as sent
  CHECK(body.at("computed_body_hash").get<std::string>().empty());
  // Compact separators, as Starlette renders (PROTOCOL 1.4).
  CHECK(r.body.find("\": ") == std::string::npos);

  // Headers: lower case, the status trio, and to_headers() of the response synapse.
  for (const auto& f : r.message) {
    const std::string name(f.name_string());
    if (name.rfind("bt_header_", 0) == 0 || name == "name" || name == "computed_body_hash") {
      CHECK(std::none_of(name.begin(), name.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; }));
    }
  }
  CHECK(r.header("name") == std::optional<std::string>("Dummy"));
  CHECK(r.header("bt_header_axon_status_code") == std::optional<std::string>("200"));
  CHECK(r.header("bt_header_axon_status_message") == std::optional<std::string>("Success"));
  CHECK(r.has_header("bt_header_axon_process_time"));
  CHECK_FALSE(r.has_header("bt_header_axon_signature"));
  CHECK(r.header("bt_header_dendrite_hotkey") ==
        std::optional<std::string>(alice().ss58_address()));
  CHECK(r.header("bt_header_input_obj_dummy_input") == std::optional<std::string>("MA=="));
  CHECK(r.header("computed_body_hash") == std::optional<std::string>(bt::sha3_256_hex("")));
  CHECK(r.header("header_size"));
  CHECK(r.header("total_size"));
}

TEST_CASE("our dendrite gets 200 for ping and Dummy, and info() describes the axon", "[axon]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.coldkey = charlie().ss58_address();
  auto ax = make_axon(o);
  ax->start();
  const bt::axon_info info = ax->info();
  CHECK(info.ip == "127.0.0.1");
  CHECK(info.port == ax->port());
  CHECK(info.port != 0);
  CHECK(info.ip_type == 4);
  CHECK(info.hotkey == bob().ss58_address());
  CHECK(info.coldkey == charlie().ss58_address());
  CHECK(info.protocol == 4);
  CHECK(info.version == bt::version_as_int);
  CHECK(ax->synapse_names() == std::vector<std::string>{"Synapse", "Dummy"});

  bt::dendrite d(alice());
  const auto pong = d.call(info, bt::synapse{}, 5.0);
  CHECK(pong.dendrite.status_code == 200);
  CHECK(pong.axon.status_message == "Success");
  const auto answered = d.call(info, dummy_with(-7), 5.0);
  CHECK(answered.dendrite.status_code == 200);
  CHECK(answered.dummy_output == -14);
  // Keep-alive: several calls in a row on the pooled connection.
  for (int i = 0; i < 20; ++i) CHECK(d.call(info, dummy_with(i), 5.0).dummy_output == 2 * i);
}

TEST_CASE("the handler sees the verified caller", "[axon]") {
  auto ax = std::make_unique<bt::axon>(bob(), bt::axon_options::loopback());
  std::mutex m;
  std::string seen_hotkey, seen_ip, seen_name;
  bool seen_verified = false;
  ax->attach<dummy>([&](dummy& s, const bt::request_context& ctx) {
    std::lock_guard lk(m);
    seen_hotkey = std::string(ctx.hotkey);
    seen_ip = std::string(ctx.ip);
    seen_name = std::string(ctx.synapse_name);
    seen_verified = ctx.verified;
    CHECK(ctx.port != 0);
    CHECK_FALSE(ctx.cancelled());
    s.dummy_output = 1;
  });
  ax->start();
  const auto r = roundtrip(ax->port(), dummy_request(*ax).wire(ax->port()));
  REQUIRE(r.status == 200);
  std::lock_guard lk(m);
  CHECK(seen_hotkey == alice().ss58_address());
  CHECK(seen_ip == "127.0.0.1");
  CHECK(seen_name == "Dummy");
  CHECK(seen_verified);
}

TEST_CASE("401: missing, malformed, wrong and other-axon signatures", "[axon][verify]") {
  auto ax = make_axon();
  ax->start();
  const std::uint16_t port = ax->port();

  SECTION("missing signature is 401, not a bypass (D1)") {
    bt::test::python_request_options o;
    o.sign = false;
    const auto r = roundtrip(port, dummy_request(*ax, 1, o).wire(port));
    check_error_headers(r, 401, "Not Verified with error: Missing Signature");
    CHECK(r.header("connection") == std::optional<std::string>("close"));
  }
  SECTION("not hex") {
    auto req = dummy_request(*ax);
    req.set("bt_header_dendrite_signature", "abcd");
    check_error_headers(roundtrip(port, req.wire(port)), 401,
                        "Not Verified with error: Invalid signature format. Expected hex string.");
  }
  SECTION("wrong length") {
    auto req = dummy_request(*ax);
    req.set("bt_header_dendrite_signature", "0xabcd");
    check_error_headers(roundtrip(port, req.wire(port)), 401,
                        "Not Verified with error: Invalid signature");
  }
  SECTION("signature over another message") {
    auto req = dummy_request(*ax);
    const std::string bogus = "0x" + bt::to_hex(alice().sign(std::string_view("something else")));
    req.set("bt_header_dendrite_signature", bogus);
    check_error_headers(
        roundtrip(port, req.wire(port)), 401,
        "Not Verified with error: Signature mismatch with " + req.signed_message + " and " + bogus);
  }
  SECTION("signed for another axon's hotkey") {
    bt::test::python_request_options o;
    o.axon_port = port;
    const auto req = python_request(dummy_with(1), alice(), charlie().ss58_address(), o);
    const auto r = roundtrip(port, req.wire(port));
    CHECK(r.status == 401);
    CHECK(message_of(r).rfind("Not Verified with error: Signature mismatch with ", 0) == 0);
    // The message names what we verified: our own hotkey, not the one the client addressed.
    CHECK(message_of(r).find(bob().ss58_address()) != std::string::npos);
  }
  SECTION("signed by someone else than the claimed hotkey") {
    auto req = dummy_request(*ax);
    req.set("bt_header_dendrite_signature",
            "0x" + bt::to_hex(charlie().sign(std::string_view(req.signed_message))));
    CHECK(message_of(roundtrip(port, req.wire(port)))
              .rfind("Not Verified with error: Signature mismatch", 0) == 0);
  }
  SECTION("no hotkey") {
    auto req = dummy_request(*ax);
    req.erase("bt_header_dendrite_hotkey");
    check_error_headers(
        roundtrip(port, req.wire(port)), 401,
        "Not Verified with error: No SS58 formatted address or public key provided.");
  }
  SECTION("a hotkey that is not SS58") {
    auto req = dummy_request(*ax);
    req.set("bt_header_dendrite_hotkey", "5notanaddress");
    const auto r = roundtrip(port, req.wire(port));
    CHECK(r.status == 401);
    CHECK(message_of(r).rfind("Not Verified with error: Invalid SS58 address: ", 0) == 0);
  }
  SECTION("no nonce") {
    auto req = dummy_request(*ax);
    req.erase("bt_header_dendrite_nonce");
    check_error_headers(roundtrip(port, req.wire(port)), 401,
                        "Not Verified with error: Missing Nonce");
  }
}

TEST_CASE("401: replayed, too old and future nonces", "[axon][verify]") {
  auto ax = make_axon();
  ax->start();
  const std::uint16_t port = ax->port();

  SECTION("the same request twice: the second is refused") {
    const auto req = dummy_request(*ax);
    CHECK(roundtrip(port, req.wire(port)).status == 200);
    // The default nonce rule (window) names an exact replay as such.
    check_error_headers(roundtrip(port, req.wire(port)), 401,
                        "Not Verified with error: Nonce was already used");
  }
  SECTION("an older nonce after a newer one: accepted once by the default window rule") {
    bt::test::python_request_options o;
    const std::int64_t now = bt::test::now_ns();
    o.nonce = now;
    CHECK(roundtrip(port, dummy_request(*ax, 1, o).wire(port)).status == 200);
    o.nonce = now - 1000;  // a concurrent request of the same dendrite, processed late
    CHECK(roundtrip(port, dummy_request(*ax, 1, o).wire(port)).status == 200);
    CHECK(roundtrip(port, dummy_request(*ax, 1, o).wire(port)).status == 401);
  }
  SECTION("an older nonce after a newer one (Python >= 7.2 rule, strictly_increasing)") {
    auto opt = bt::axon_options::loopback();
    opt.nonces = std::make_shared<bt::memory_nonce_store>(
        bt::memory_nonce_store::options{.rule = bt::nonce_rule::strictly_increasing});
    auto strict = make_axon(opt);
    strict->start();
    const std::uint16_t sport = strict->port();
    bt::test::python_request_options o;
    const std::int64_t now = bt::test::now_ns();
    o.nonce = now;
    CHECK(roundtrip(sport, dummy_request(*strict, 1, o).wire(sport)).status == 200);
    o.nonce = now - 1000;
    check_error_headers(
        roundtrip(sport, dummy_request(*strict, 1, o).wire(sport)), 401,
        "Not Verified with error: Nonce is too old, a newer one was last processed");
    strict->stop();
  }
  SECTION("too old on first contact, with Python's message") {
    bt::test::python_request_options o;
    o.nonce = bt::test::now_ns() - 60'000'000'000;
    const auto r = roundtrip(port, dummy_request(*ax, 1, o).wire(port));
    CHECK(r.status == 401);
    CHECK(numbers_between(message_of(r),
                          "Not Verified with error: Nonce is too old: acceptable delta is 16.00 "
                          "seconds but request was 6",
                          " seconds old"));
  }
  SECTION("the unsigned version header no longer disables freshness (D2)") {
    bt::test::python_request_options o;
    o.nonce = bt::test::now_ns() - 60'000'000'000;
    o.version = 6'000'000;
    CHECK(roundtrip(port, dummy_request(*ax, 1, o).wire(port)).status == 401);
  }
  SECTION("a huge timeout header widens the window only up to the cap (D2)") {
    bt::test::python_request_options o;
    o.nonce = bt::test::now_ns() - 100'000'000'000;  // 100 s old
    o.timeout = 1000.0;                              // window capped at 4 + 60 s
    const auto r = roundtrip(port, dummy_request(*ax, 1, o).wire(port));
    CHECK(r.status == 401);
    CHECK(message_of(r).find("acceptable delta is 64.00 seconds") != std::string::npos);
  }
  SECTION("from the future beyond the skew (D3)") {
    bt::test::python_request_options o;
    o.nonce = bt::test::now_ns() + 120'000'000'000;
    const auto r = roundtrip(port, dummy_request(*ax, 1, o).wire(port));
    CHECK(r.status == 401);
    CHECK(message_of(r).rfind("Not Verified with error: Nonce is too far in the future: acceptable "
                              "skew is 30.00 seconds",
                              0) == 0);
  }
}

TEST_CASE("error responses carry the header synapse, the axon signs them only once verified (D29)",
          "[axon][verify]") {
  auto ax = make_axon(bt::axon_options::loopback(),
                      {.blacklist = [](const bt::synapse&, const bt::request_context& ctx) {
                        return ctx.hotkey == charlie().ss58_address() ? bt::verdict::deny("charlie")
                                                                      : bt::verdict::allow();
                      }});
  ax->start();
  const std::uint16_t port = ax->port();

  SECTION("an unverified request gets the header synapse but no signature") {
    raw_client c(port);
    bt::test::python_request_options o;
    o.sign = false;
    c.send(dummy_request(*ax, 1, o).wire(port));
    const auto r = c.read();
    REQUIRE(r.status == 401);
    CHECK(r.header("name") == std::optional<std::string>("Dummy"));
    CHECK(r.header("bt_header_axon_version") ==
          std::optional<std::string>(std::to_string(bt::version_as_int)));
    CHECK(r.header("bt_header_dendrite_ip") == std::optional<std::string>("127.0.0.1"));
    // The observed peer port replaces the claim.
    CHECK(r.header("bt_header_dendrite_port") ==
          std::optional<std::string>(std::to_string(c.stream().socket().local_endpoint().port())));
    CHECK(r.header("bt_header_axon_nonce"));
    CHECK(r.header("bt_header_axon_uuid"));
    CHECK_FALSE(r.has_header("bt_header_axon_signature"));
    // Rejected before the body was read: answered, then closed.
    CHECK(r.header("connection") == std::optional<std::string>("close"));
    CHECK(c.closed_by_peer());
  }

  SECTION("the oracle: a forged request naming this axon's own hotkey as the caller") {
    // The attacker claims the caller is //Bob (this axon) and the axon is "<victim>.<uuid>", so
    // that a signature over "{n}.{bob}.{victim}.{uuid}.{axon uuid}" would read as //Bob's
    // request to the victim. Unverified, it must get no signature at all.
    auto req = python_request(dummy_with(1), bob(), alice().ss58_address(),
                              {.axon_port = port, .sign = false});
    req.set("bt_header_axon_hotkey",
            alice().ss58_address() + ".5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a");
    req.set("bt_header_dendrite_signature", "0x" + std::string(128, '0'));
    const auto r = roundtrip(port, req.wire(port));
    CHECK(r.status == 401);
    CHECK_FALSE(r.has_header("bt_header_axon_signature"));
  }

  SECTION("a verified request refused later is signed over the verified caller and this axon") {
    raw_client c(port);
    auto req = python_request(dummy_with(1), charlie(), bob().ss58_address(), {.axon_port = port});
    c.send(req.wire(port));
    const auto r = c.read();
    REQUIRE(r.status == 403);
    const auto nonce = r.header("bt_header_axon_nonce");
    const auto uuid = r.header("bt_header_axon_uuid");
    const auto sig = r.header("bt_header_axon_signature");
    REQUIRE(nonce);
    REQUIRE(uuid);
    REQUIRE(sig);
    CHECK(is_uuid(*uuid, '1'));
    CHECK(r.header("bt_header_axon_hotkey") == std::optional<std::string>(bob().ss58_address()));
    const std::string msg =
        *nonce + "." + charlie().ss58_address() + "." + bob().ss58_address() + "." + *uuid;
    const auto bytes = bt::from_hex(*sig);
    REQUIRE(bytes);
    CHECK(bob().verify(std::string_view(msg), *bytes));
    CHECK_FALSE(charlie().verify(std::string_view(msg), *bytes));
  }
}

TEST_CASE("403 blacklist runs on the authenticated hotkey (D4)", "[axon]") {
  std::atomic<int> calls{0};
  bt::route_options policy;
  policy.blacklist = [&](const bt::synapse& h, const bt::request_context& ctx) {
    ++calls;
    CHECK(h.dendrite.hotkey == std::optional<std::string>(std::string(ctx.hotkey)));
    return ctx.hotkey == alice().ss58_address() ? bt::verdict::deny("Hotkey in deny list")
                                                : bt::verdict::allow();
  };
  auto ax = make_axon(bt::axon_options::loopback(), policy);
  ax->start();
  const std::uint16_t port = ax->port();
  check_error_headers(roundtrip(port, dummy_request(*ax).wire(port)), 403,
                      "Forbidden. Key is blacklisted: Hotkey in deny list.");
  CHECK(calls == 1);
  // Unauthenticated and blacklisted: 401, and the blacklist never sees the claim.
  bt::test::python_request_options o;
  o.sign = false;
  CHECK(roundtrip(port, dummy_request(*ax, 1, o).wire(port)).status == 401);
  CHECK(calls == 1);
  // Someone else passes.
  bt::test::python_request_options oc;
  oc.axon_port = port;
  CHECK(
      roundtrip(port, python_request(dummy_with(2), charlie(), bob().ss58_address(), oc).wire(port))
          .status == 200);
  CHECK(calls == 2);
}

TEST_CASE("a custom verify function adds to the built-in checks", "[axon][verify]") {
  bt::route_options policy;
  policy.verify = [](const bt::synapse&, const bt::request_context& ctx) {
    return ctx.hotkey == charlie().ss58_address() ? bt::verdict::deny("charlie may not call")
                                                  : bt::verdict::allow();
  };
  auto ax = make_axon(bt::axon_options::loopback(), policy);
  ax->start();
  const std::uint16_t port = ax->port();
  CHECK(roundtrip(port, dummy_request(*ax).wire(port)).status == 200);
  bt::test::python_request_options oc;
  oc.axon_port = port;
  check_error_headers(
      roundtrip(port,
                python_request(dummy_with(2), charlie(), bob().ss58_address(), oc).wire(port)),
      401, "Not Verified with error: charlie may not call");
}

TEST_CASE("404: exact route match before any work (D24)", "[axon]") {
  auto ax = make_axon();
  ax->start();
  const std::uint16_t port = ax->port();
  auto req = dummy_request(*ax);
  req.path = "/Nope";
  auto r = roundtrip(port, req.wire(port));
  check_error_headers(r, 404,
                      "Synapse name 'Nope' not found. Available synapses ['Synapse', 'Dummy']");
  // A fresh base Synapse gives the headers (5.12).
  CHECK(r.header("name") == std::optional<std::string>("Synapse"));
  CHECK_FALSE(r.has_header("bt_header_dendrite_hotkey"));

  req.path = "/Dummy/extra";
  r = roundtrip(port, req.wire(port));
  CHECK(r.status == 404);
  CHECK(message_of(r).rfind("Synapse name 'Dummy/extra' not found.", 0) == 0);
  // The nonce was not consumed by the 404s: the same signed request on the right path works.
  req.path = "/Dummy";
  CHECK(roundtrip(port, req.wire(port)).status == 200);
  // A query string does not change the route.
  auto q = dummy_request(*ax, 3);
  q.path = "/Dummy?x=1";
  CHECK(roundtrip(port, q.wire(port)).status == 200);
}

TEST_CASE("405 for other methods, GET is served like POST", "[axon]") {
  auto ax = make_axon();
  ax->start();
  const std::uint16_t port = ax->port();
  auto req = dummy_request(*ax);
  std::string wire = req.wire(port);
  check_error_headers(roundtrip(port, "PUT" + wire.substr(4)), 405, "Method Not Allowed");
  CHECK(roundtrip(port, "GET" + wire.substr(4)).status == 200);
}

TEST_CASE("400: malformed headers, malformed bodies and body hash mismatch", "[axon]") {
  bt::error err;
  auto hashed = bt::make_dynamic_descriptor(
      "Hashed", {{"text", bt::field_kind::required}, {"note", bt::field_kind::optional}},
      {"text", "note"}, err);
  REQUIRE_FALSE(err);
  auto ax = make_axon();
  ax->attach(hashed,
             [](bt::dynamic_synapse& s, const bt::request_context&) { REQUIRE(s.get("text")); });
  ax->start();
  const std::uint16_t port = ax->port();

  SECTION("a header that does not parse") {
    auto req = dummy_request(*ax);
    req.set("bt_header_dendrite_nonce", "12.5");
    const auto r = roundtrip(port, req.wire(port));
    CHECK(r.status == 400);
    CHECK(message_of(r).rfind("Malformed headers: ", 0) == 0);
    CHECK(message_of(r).find("bt_header_dendrite_nonce") != std::string::npos);
  }
  SECTION("no computed_body_hash header") {
    auto req = dummy_request(*ax);
    req.erase("computed_body_hash");
    check_error_headers(roundtrip(port, req.wire(port)), 400,
                        "Malformed headers: missing computed_body_hash");
  }
  SECTION("a body that is not JSON") {
    auto req = dummy_request(*ax);
    req.body = "{not json";
    const auto r = roundtrip(port, req.wire(port));
    CHECK(r.status == 400);
    CHECK(message_of(r).rfind("Malformed body: ", 0) == 0);
  }
  SECTION("a body missing a required field") {
    auto req = dummy_request(*ax);
    req.body = R"({"name": "Dummy"})";
    const auto r = roundtrip(port, req.wire(port));
    CHECK(r.status == 400);
    CHECK(message_of(r).find("dummy_input") != std::string::npos);
  }
  SECTION("a body claiming another caller than the signed headers (D5)") {
    auto req = dummy_request(*ax);
    const auto pos = req.body.find(alice().ss58_address());
    REQUIRE(pos != std::string::npos);
    req.body.replace(pos, alice().ss58_address().size(), charlie().ss58_address());
    CHECK(roundtrip(port, req.wire(port)).status == 400);
  }
  SECTION("a body whose hash fields differ from the signed hash") {
    bt::dynamic_synapse s(hashed);
    *s.get("text") = "signed text";
    bt::test::python_request_options o;
    o.axon_port = port;
    auto req = python_request(s, alice(), bob().ss58_address(), o);
    const std::string signed_hash = *req.find("computed_body_hash");
    bt::dynamic_synapse t(hashed);
    *t.get("text") = "other text";
    const std::string other_hash = bt::body_hash(t);
    const auto pos = req.body.find("signed text");
    REQUIRE(pos != std::string::npos);
    req.body.replace(pos, 11, "other text");
    const auto r = roundtrip(port, req.wire(port));
    check_error_headers(r, 400,
                        "Hash mismatch between header body hash " + signed_hash +
                            " and parsed body hash " + other_hash +
                            "; the hash covers the fields text, note (in that order), all in the "
                            "body, so one of their values is not the one signed (changed after "
                            "signing, or hashed differently: PROTOCOL 3)");
    // The untampered request is fine.
    auto good = python_request(s, alice(), bob().ss58_address(), o);
    CHECK(roundtrip(port, good.wire(port)).status == 200);
  }
  SECTION("a body that leaves out a hash field: the refusal names it and says to send it") {
    bt::dynamic_synapse s(hashed);
    *s.get("text") = "signed text";
    *s.get("note") = "signed note";
    bt::test::python_request_options o;
    o.axon_port = port;
    auto req = python_request(s, alice(), bob().ss58_address(), o);
    const std::string signed_hash = *req.find("computed_body_hash");
    // The key renamed to one the axon ignores: the body has no "note", so its default is hashed.
    const auto pos = req.body.find("\"note\"");
    REQUIRE(pos != std::string::npos);
    req.body.replace(pos, 6, "\"nope\"");
    bt::dynamic_synapse unsent(hashed);
    *unsent.get("text") = "signed text";
    const auto r = roundtrip(port, req.wire(port));
    check_error_headers(r, 400,
                        "Hash mismatch between header body hash " + signed_hash +
                            " and parsed body hash " + bt::body_hash(unsent) +
                            "; the hash covers the fields text, note (in that order), and the "
                            "body leaves out 'note': send every hash field in the body, with the "
                            "value that was signed");
  }
  SECTION("garbage instead of HTTP") {
    const auto r = roundtrip(port, "HELLO\r\n\r\n");
    CHECK(r.status == 400);
  }
}

TEST_CASE("408: a hanging handler is answered on time and told to stop", "[axon]") {
  std::atomic<bool> saw_cancel{false};
  bt::test::event finished;
  auto ax = std::make_unique<bt::axon>(bob(), bt::axon_options::loopback());
  ax->attach<dummy>([&](dummy&, const bt::request_context& ctx) {
    // Polled: request_context offers cancellation as a flag to poll (its documented contract).
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (!ctx.cancelled() && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(2ms);
    saw_cancel = ctx.cancelled();
    finished.set();
  });
  ax->start();
  bt::test::python_request_options o;
  o.timeout = 0.5;
  raw_client c(ax->port());
  c.send(dummy_request(*ax, 1, o).wire(ax->port()));
  const auto r = c.read(10s);
  check_error_headers(r, 408, "Request timeout after 0.5 seconds");
  CHECK(finished.wait_for(5s));
  CHECK(saw_cancel);
  // The body was read, so the connection stays usable.
  c.send(dummy_request(*ax, 2, {.timeout = 0.2}).wire(ax->port()));
  CHECK(c.read(10s).status == 408);
}

TEST_CASE("500: a throwing handler, and the server keeps serving, forward_error sets the status",
          "[axon]") {
  auto ax = std::make_unique<bt::axon>(bob(), bt::axon_options::loopback());
  ax->attach<dummy>([](dummy& s, const bt::request_context&) {
    if (s.dummy_input == 1) throw std::runtime_error("secret detail");
    if (s.dummy_input == 2) throw bt::forward_error(409, "Conflicting request");
    if (s.dummy_input == 3) s.axon.status_code = 404;  // a forward may choose its status
    s.dummy_output = s.dummy_input;
  });
  ax->start();
  const std::uint16_t port = ax->port();
  raw_client c(port);
  c.send(dummy_request(*ax, 1).wire(port));
  auto r = c.read();
  CHECK(r.status == 500);
  const std::string internal = message_of(r);
  CHECK(internal.rfind("Internal Server Error #", 0) == 0);
  CHECK(
      is_uuid(std::string_view(internal).substr(std::min<std::size_t>(internal.size(), 23)), '4'));
  CHECK(r.body.find("secret detail") == std::string::npos);
  c.send(dummy_request(*ax, 2).wire(port));
  check_error_headers(c.read(), 409, "Conflicting request");
  c.send(dummy_request(*ax, 3).wire(port));
  r = c.read();
  CHECK(r.status == 404);
  CHECK(bt::json::parse(r.body).at("dummy_output").get<int>() == 3);
  c.send(dummy_request(*ax, 4).wire(port));
  CHECK(c.read().status == 200);
}

TEST_CASE("413: body too large, judged from Content-Length before reading", "[axon][limits]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.max_body_bytes = 1024;
  auto ax = make_axon(o);
  ax->start();
  const std::uint16_t port = ax->port();
  auto req = dummy_request(*ax);
  std::string wire = req.wire(port);
  // Announce 10 MB and send none of it: the answer comes without waiting for the body.
  const auto cl = wire.find("Content-Length: ");
  wire.replace(cl, wire.find("\r\n", cl) - cl, "Content-Length: 10000000");
  wire.resize(wire.find("\r\n\r\n") + 4);
  raw_client c(port);
  c.send(wire);
  const auto r = c.read();
  check_error_headers(r, 413, "Request body too large: 10000000 bytes, the limit is 1024");
  CHECK(c.closed_by_peer());

  // Chunked: no Content-Length, cut while reading.
  auto chunked = dummy_request(*ax, 5).wire(port);  // a fresh nonce
  const auto hdr_end = chunked.find("\r\n\r\n");
  std::string head = chunked.substr(0, hdr_end);
  const auto cl2 = head.find("Content-Length: ");
  head.replace(cl2, head.find("\r\n", cl2) - cl2, "Transfer-Encoding: chunked");
  std::string big(2000, ' ');
  char size_hex[16];
  std::snprintf(size_hex, sizeof size_hex, "%zx", big.size());
  raw_client c2(port);
  c2.send(head + "\r\n\r\n" + size_hex + "\r\n" + big + "\r\n0\r\n\r\n");
  CHECK(c2.read().status == 413);
}

TEST_CASE("431: header block too large", "[axon][limits]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.max_header_bytes = 4096;
  auto ax = make_axon(o);
  ax->start();
  auto req = dummy_request(*ax);
  req.set("x-padding", std::string(8000, 'a'));
  raw_client c(ax->port());
  c.send(req.wire(ax->port()));
  check_error_headers(c.read(), 431, "Request Header Fields Too Large");
  CHECK(c.closed_by_peer());
}

TEST_CASE("503: the bounded queue refuses with Retry-After, and priority orders the queue",
          "[axon][limits]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.max_workers = 1;
  o.max_queued_requests = 2;
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  std::vector<std::int64_t> order;
  bt::test::signal_count entered;
  auto ax = std::make_unique<bt::axon>(bob(), o);
  ax->attach<dummy>(
      [&](dummy& s, const bt::request_context&) {
        entered.add();
        std::unique_lock lk(m);
        cv.wait(lk, [&] { return open; });
        order.push_back(s.dummy_input);
        s.dummy_output = s.dummy_input;
      },
      {.priority = [](const bt::synapse&, const bt::request_context& ctx) {
        return ctx.hotkey == charlie().ss58_address() ? 10.0 : 1.0;
      }});
  ax->start();
  const std::uint16_t port = ax->port();
  bt::test::python_request_options oc;
  oc.axon_port = port;

  raw_client a(port), b(port), c(port), d(port);
  a.send(dummy_request(*ax, 1).wire(port));  // runs (blocks the only worker)
  REQUIRE(entered.wait_for(1, 10s));
  REQUIRE(entered.value() == 1);
  b.send(python_request(dummy_with(2), alice(), bob().ss58_address(),
                        {.uuid = bt::test::test_uuid("uuid-b"), .axon_port = port})
             .wire(port));
  REQUIRE(bt::test::poll_until([&] { return ax->queued_requests() >= 1; }));
  c.send(python_request(dummy_with(3), charlie(), bob().ss58_address(), oc).wire(port));
  REQUIRE(bt::test::poll_until([&] { return ax->queued_requests() >= 2; }));
  d.send(python_request(dummy_with(4), alice(), bob().ss58_address(),
                        {.uuid = bt::test::test_uuid("uuid-d"), .axon_port = port})
             .wire(port));
  const auto r = d.read();
  check_error_headers(r, 503, "Service unavailable: request queue is full");
  CHECK(r.header("retry-after") == std::optional<std::string>("1"));
  {
    std::lock_guard lk(m);
    open = true;
  }
  cv.notify_all();
  CHECK(a.read().status == 200);
  CHECK(b.read().status == 200);
  CHECK(c.read().status == 200);
  std::lock_guard lk(m);
  // 1 was running; charlie's (priority 10) overtook alice's earlier request (priority 1).
  CHECK(order == std::vector<std::int64_t>{1, 3, 2});
}

TEST_CASE("slowloris: a client dripping its headers is cut off", "[axon][limits]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.header_timeout = 300ms;
  auto ax = make_axon(o);
  ax->start();
  raw_client c(ax->port());
  c.send("POST /Dummy HTTP/1.1\r\nHost: x\r\n");
  CHECK(c.closed_by_peer(5s));
  // A connection that never sends anything is closed too.
  raw_client silent(ax->port());
  CHECK(silent.closed_by_peer(5s));
  // The server still serves.
  CHECK(roundtrip(ax->port(), dummy_request(*ax).wire(ax->port())).status == 200);
}

TEST_CASE("Expect: 100-continue gets 100 before the body", "[axon]") {
  auto ax = make_axon();
  ax->start();
  const auto req = dummy_request(*ax);
  std::string wire = req.wire(ax->port());
  const auto split = wire.find("\r\n\r\n");
  raw_client c(ax->port());
  c.send(wire.substr(0, split) + "\r\nExpect: 100-continue\r\n\r\n");
  const auto cont = c.read();
  CHECK(cont.status == 100);
  c.send(wire.substr(split + 4));
  CHECK(c.read().status == 200);
}

TEST_CASE("coroutine forwards run on the I/O thread and are cancelled at the deadline", "[axon]") {
  auto ax = std::make_unique<bt::axon>(bob(), bt::axon_options::loopback());
  std::atomic<bool> aborted{false};
  bt::test::event woke;
  ax->attach<dummy>([&](dummy& s, const bt::request_context&) -> boost::asio::awaitable<void> {
    if (s.dummy_input == 0) {
      boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, 30s);
      auto [ec] = co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      aborted = ec == boost::asio::error::operation_aborted;
      woke.set();
      co_return;
    }
    s.dummy_output = s.dummy_input + 1;
  });
  ax->start();
  const std::uint16_t port = ax->port();
  CHECK(bt::json::parse(roundtrip(port, dummy_request(*ax, 5).wire(port)).body)
            .at("dummy_output")
            .get<int>() == 6);
  const auto r = roundtrip(port, dummy_request(*ax, 0, {.timeout = 0.3}).wire(port));
  CHECK(r.status == 408);
  CHECK(woke.wait_for(5s));
  CHECK(aborted);
}

TEST_CASE("coroutine forwards count against the admission limit", "[axon][limits]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.max_queued_requests = 1;
  auto ax = std::make_unique<bt::axon>(bob(), o);
  // The first request holds its slot until the test lets it go (the others are answered first).
  std::atomic<bool> release{false};
  bt::test::signal_count running;
  ax->attach<dummy>([&](dummy& s, const bt::request_context&) -> boost::asio::awaitable<void> {
    running.add();
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
    for (int i = 0; i < 500 && !release; ++i) {
      t.expires_after(10ms);
      co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    s.dummy_output = s.dummy_input;
  });
  ax->start();
  const std::uint16_t port = ax->port();
  raw_client first(port);
  first.send(dummy_request(*ax, 1, {.uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec11"}).wire(port));
  REQUIRE(running.wait_for(1, 10s));
  for (int i = 2; i <= 4; ++i) {
    const std::string uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1" + std::to_string(i);
    const auto r = roundtrip(port, dummy_request(*ax, i, {.uuid = uuid}).wire(port));
    check_error_headers(r, 503, "Service unavailable: request queue is full");
  }
  CHECK(running.value() == 1);
  release = true;
  CHECK(first.read().status == 200);
  // The slot came back: the next coroutine request is admitted.
  CHECK(
      roundtrip(port,
                dummy_request(*ax, 5, {.uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec15"}).wire(port))
          .status == 200);
}

TEST_CASE("a timeout of 0 or beyond the cap means the cap, without overflow", "[axon][limits]") {
  // A handler that takes 50 ms: a deadline in the past (the overflow) would answer 408 at once.
  auto ax = std::make_unique<bt::axon>(bob(), bt::axon_options::loopback());
  ax->attach<dummy>([](dummy& s, const bt::request_context& ctx) {
    std::this_thread::sleep_for(50ms);
    CHECK(ctx.deadline > std::chrono::steady_clock::now() + 60s);  // the 120 s cap
    s.dummy_output = s.dummy_input;
  });
  ax->start();
  const std::uint16_t port = ax->port();
  for (const double timeout : {0.0, 1e10, 9.3e9, 1e300}) {
    INFO("timeout " << timeout);
    const auto r = roundtrip(port, dummy_request(*ax, 7, {.timeout = timeout}).wire(port));
    CHECK(r.status == 200);
  }
}

TEST_CASE("concurrent clients", "[axon]") {
  bt::axon_options o = bt::axon_options::loopback();
  // One dendrite sends concurrently: its nonces may arrive out of order, which the unique rule
  // accepts (the strict Python rule would refuse some, PROTOCOL D3).
  o.nonces = std::make_shared<bt::memory_nonce_store>(
      bt::memory_nonce_store::options{.rule = bt::nonce_rule::unique});
  auto ax = make_axon(o);
  ax->start();
  bt::dendrite shared(alice(), {.threads = 2});
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      bt::dendrite own(t % 2 ? charlie() : alice());
      for (int i = 0; i < 15; ++i) {
        if (own.call(ax->info(), dummy_with(t * 100 + i), 10.0).dummy_output == 2 * (t * 100 + i))
          ++ok;
        if (shared.call(ax->info(), dummy_with(i), 10.0).dummy_output == 2 * i) ++ok;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(ok == 6 * 15 * 2);
  // Fan-out from one dendrite to the same axon, many in flight at once.
  std::vector<bt::axon_info> targets(50, ax->info());
  const auto results = shared.forward(targets, dummy_with(4), 10.0);
  CHECK(std::all_of(results.begin(), results.end(),
                    [](const dummy& d) { return d.dummy_output == 8; }));
}

TEST_CASE("the connection limit sheds extra connections", "[axon][limits]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.max_connections = 2;
  auto ax = make_axon(o);
  ax->start();
  raw_client a(ax->port()), b(ax->port());
  bt::test::poll_until([&] { return ax->connections() >= 2; }, 1s);
  REQUIRE(ax->connections() == 2);
  raw_client extra(ax->port());
  CHECK(extra.closed_by_peer());
  a.send(dummy_request(*ax).wire(ax->port()));
  CHECK(a.read().status == 200);
}

TEST_CASE("start() refuses unsafe or impossible configurations", "[axon]") {
  {
    bt::axon_options o = bt::axon_options::loopback();
    o.ip = "0.0.0.0";
    o.insecure_skip_verification = true;
    bt::axon ax(bob(), o);
    std::error_code ec;
    ax.start(ec);
    CHECK(ec);
    CHECK_FALSE(ax.running());
  }
  {
    auto first = make_axon();
    first->start();
    bt::axon_options o = bt::axon_options::loopback();
    o.port = first->port();
    bt::axon second(bob(), o);
    CHECK_THROWS_AS(second.start(), std::system_error);
  }
  {
    bt::axon ax(bob(), bt::axon_options::loopback());
    ax.attach<dummy>(double_it);
    CHECK_THROWS_AS(ax.attach<dummy>(double_it), std::logic_error);
    ax.start();
    CHECK_THROWS_AS(ax.attach<bt::synapse>([](bt::synapse&) {}), std::logic_error);
  }
}

TEST_CASE("insecure_skip_verification on loopback serves unsigned requests", "[axon]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.insecure_skip_verification = true;
  auto ax = make_axon(o);
  ax->start();
  bt::test::python_request_options po;
  po.sign = false;
  const auto req = dummy_request(*ax, 3, po);
  CHECK(roundtrip(ax->port(), req.wire(ax->port())).status == 200);
  CHECK(roundtrip(ax->port(), req.wire(ax->port())).status == 200);  // no nonce memory either
}

TEST_CASE("dual-stack default listens for IPv4 callers", "[axon]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.ip = "[::]";
  auto ax = make_axon(o);
  ax->start();
  const auto r = roundtrip(ax->port(), dummy_request(*ax).wire(ax->port()));
  CHECK(r.status == 200);
  CHECK((ax->info().ip == "::" || ax->info().ip == "0.0.0.0"));
}
