// Sessions between our own ends (PROTOCOL 13), the axon's side, over raw keep-alive HTTP with the
// libsynapse API playing the dendrite: an offer on a signed request is answered with an accept;
// later requests on that connection carry a MAC instead of a signature, reach the handler with
// the session's hotkey, and are answered with a bt-response-mac; the last allowed request closes
// the connection. Then every refusal of the protocol, and sessions off (today's behaviour).
#include <bt/axon.hpp>

#include <bt/examples/dummy.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/json.hpp>
#include <bt/session_auth.hpp>
#include <bt/stream_writer.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"
#include "support/python_client.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using bt::examples::dummy;
using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;
using bt::test::python_request;
using bt::test::raw_client;
using bt::test::reply;
using bt::test::request_parts;
namespace sa = bt::session_auth;

namespace {

/// An axon for //Bob on 127.0.0.1:0 serving Dummy (output = 2 * input), recording the hotkey its
/// handler saw in request_context; //Charlie is blacklisted.
struct session_axon {
  std::mutex m;
  std::vector<std::string> seen;  // ctx.hotkey per handled request
  std::unique_ptr<bt::axon> ax;

  explicit session_axon(bool sessions, std::uint64_t max_requests = 100,
                        std::uint64_t max_seconds = 3600) {
    bt::axon_options o = bt::axon_options::loopback();
    o.accept_sessions = sessions;
    o.session_max_requests = max_requests;
    o.session_max_seconds = max_seconds;
    ax = std::make_unique<bt::axon>(bob(), std::move(o));
    ax->attach<dummy>(
        [this](dummy& d, const bt::request_context& ctx) {
          const std::lock_guard lk(m);
          seen.emplace_back(ctx.hotkey);
          d.dummy_output = 2 * d.dummy_input;
        },
        {.blacklist = [](const bt::synapse&, const bt::request_context& ctx) {
          return ctx.hotkey == charlie().ss58_address() ? bt::verdict::deny("charlie")
                                                        : bt::verdict::allow();
        }});
    // A streamed route: one chunk per word.
    ax->attach<bt::examples::word_stream>(
        [](bt::examples::word_stream& s, bt::stream_writer& out) -> boost::asio::awaitable<void> {
          for (auto word : bt::examples::word_stream::split_words(s.text))
            if (!co_await out.send(std::string(word) + "\n")) co_return;
        });
    ax->start();
  }
  ~session_axon() { ax->stop(); }
  std::uint16_t port() const { return ax->port(); }
  std::vector<std::string> handled() {
    const std::lock_guard lk(m);
    return seen;
  }
};

/// A distinct endpoint (uuid) per test run of a scenario, so nonce windows never collide.
std::string fresh_uuid() {
  static int n = 0;
  return bt::test::test_uuid("session_auth_test " + std::to_string(bt::test::now_ns()) + " " +
                             std::to_string(++n));
}

dummy dummy_with(std::int64_t input) {
  dummy d;
  d.dummy_input = input;
  return d;
}

/// A request by `caller`, signed or not, with its own nonce (now) and the scenario's uuid.
request_parts make_request(std::uint16_t port, std::int64_t input, const std::string& uuid,
                           bool sign, const bt::keypair& caller = alice()) {
  return python_request(dummy_with(input), caller, bob().ss58_address(),
                        {.uuid = uuid, .axon_port = port, .sign = sign});
}

sa::request_identity identity_of(const request_parts& r) {
  return {*r.find("bt_header_dendrite_nonce"), *r.find("bt_header_dendrite_hotkey"),
          *r.find("bt_header_axon_hotkey"), *r.find("bt_header_dendrite_uuid")};
}

std::string request_id_of(const request_parts& r) {
  return *r.find("bt_header_dendrite_nonce") + "." + *r.find("bt_header_dendrite_uuid");
}

std::string message_of(const reply& r) {
  return bt::json::parse(r.body).value("message", std::string());
}

/// A connection with an established session: the opening request carried the offer and its
/// answer the accept, checked with //Bob's hotkey.
struct session_conn {
  std::uint16_t port;
  std::string uuid = fresh_uuid();
  raw_client c;
  std::optional<sa::session_keys> keys;
  reply opening;

  explicit session_conn(std::uint16_t p) : port(p), c(p) {
    request_parts r = make_request(port, 1, uuid, true);
    sa::client_offer offer(alice(), identity_of(r));
    r.set(std::string(sa::offer_header), offer.header_value());
    c.send(r.wire(port));
    opening = c.read();
    REQUIRE(opening.status == 200);
    const auto accept = opening.header(std::string(sa::accept_header));
    REQUIRE(accept);
    std::string why;
    keys = std::move(offer).complete(*accept, &why);
    INFO(why);
    REQUIRE(keys);
    // The opening answer is still signed as today.
    CHECK(opening.has_header("bt-response-signature"));
  }

  /// A MAC'd request (no signature) for `input`.
  request_parts mac_request(std::int64_t input, const bt::keypair& caller = alice()) {
    request_parts r = make_request(port, input, uuid, false, caller);
    r.set(std::string(sa::request_header), sa::request_mac(*keys, r.signed_message));
    return r;
  }

  reply send(const request_parts& r) {
    c.send(r.wire(port));
    return c.read();
  }
};

}  // namespace

TEST_CASE("session: offer, accept, then MAC'd requests reach the handler with the session's hotkey",
          "[axon][session]") {
  session_axon ax(true, 4);
  session_conn s(ax.port());
  const auto accept = *s.opening.header(std::string(sa::accept_header));
  CHECK(accept.find(".4.3600.0x") != std::string::npos);  // the bounds it announces
  CHECK(s.keys->limits().max_requests == 4);
  CHECK(s.opening.header("connection") != std::optional<std::string>("close"));

  for (int i = 2; i <= 4; ++i) {
    INFO("request " << i);
    const request_parts r = s.mac_request(10 + i);
    CHECK_FALSE(r.find("bt_header_dendrite_signature"));
    const reply a = s.send(r);
    REQUIRE(a.status == 200);
    CHECK(a.body.find("\"dummy_output\":" + std::to_string(2 * (10 + i))) != std::string::npos);
    // The answer carries the session MAC instead of the signature, valid under k_s2c.
    CHECK_FALSE(a.has_header("bt-response-signature"));
    CHECK_FALSE(a.has_header(std::string(sa::accept_header)));
    const auto mac = a.header(std::string(sa::response_mac_header));
    REQUIRE(mac);
    CHECK(sa::check_response_mac(*s.keys, *mac, alice().ss58_address(), request_id_of(r), 200,
                                 a.body, bob().ss58_address())
              .empty());
    // ...and not for another request id or status.
    CHECK_FALSE(sa::check_response_mac(*s.keys, *mac, alice().ss58_address(), "1.x", 200, a.body,
                                       bob().ss58_address())
                    .empty());
    // The 4th is the session's last: answered with Connection: close, then closed.
    if (i < 4) {
      CHECK(a.header("connection") != std::optional<std::string>("close"));
    } else {
      CHECK(a.header("connection") == std::optional<std::string>("close"));
      CHECK(s.c.closed_by_peer());
    }
  }
  const auto seen = ax.handled();
  REQUIRE(seen.size() == 4);
  for (const auto& h : seen) CHECK(h == alice().ss58_address());
}

TEST_CASE("session: a request pipelined after the last allowed one is never served",
          "[axon][session]") {
  session_axon ax(true, 2);
  session_conn s(ax.port());
  const request_parts second = s.mac_request(2);
  const request_parts third = s.mac_request(3);
  s.c.send(second.wire(s.port) + third.wire(s.port));
  const reply a = s.c.read();
  CHECK(a.status == 200);
  CHECK(a.header("connection") == std::optional<std::string>("close"));
  CHECK(s.c.closed_by_peer());
  CHECK(ax.handled().size() == 2);
}

TEST_CASE("session: a streamed answer to the last allowed request closes the connection too",
          "[axon][session]") {
  session_axon ax(true, 2);
  session_conn s(ax.port());
  bt::examples::word_stream w;
  w.text = "one two";
  request_parts r = python_request(w, alice(), bob().ss58_address(),
                                   {.uuid = s.uuid, .axon_port = s.port, .sign = false});
  r.set(std::string(sa::request_header), sa::request_mac(*s.keys, r.signed_message));
  const reply a = s.send(r);
  CHECK(a.status == 200);
  CHECK(a.body == "one\ntwo\n");
  CHECK(a.header("connection") == std::optional<std::string>("close"));
  CHECK(s.c.closed_by_peer());
}

TEST_CASE("session: refusals", "[axon][session]") {
  session_axon ax(true);
  const std::uint16_t port = ax.port();

  SECTION("a MAC'd request on another connection: no session there") {
    session_conn s(port);
    raw_client other(port);
    other.send(s.mac_request(5).wire(port));
    const reply a = other.read();
    CHECK(a.status == 401);
    CHECK(message_of(a).find("no session " + std::string(s.keys->id_hex()) +
                             " on this connection") != std::string::npos);
    CHECK(a.header("connection") == std::optional<std::string>("close"));
    // The session's own connection still works.
    CHECK(s.send(s.mac_request(6)).status == 200);
  }
  SECTION("a replayed MAC'd request: refused by the nonce rules") {
    session_conn s(port);
    const request_parts r = s.mac_request(5);
    REQUIRE(s.send(r).status == 200);
    const reply again = s.send(r);
    CHECK(again.status == 401);
    CHECK(message_of(again).find("Nonce") != std::string::npos);
  }
  SECTION("a wrong MAC") {
    session_conn s(port);
    request_parts r = s.mac_request(5);
    std::string mac = *r.find(std::string(sa::request_header));
    mac.back() = mac.back() == '0' ? '1' : '0';
    r.set(std::string(sa::request_header), mac);
    const reply a = s.send(r);
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session MAC invalid") != std::string::npos);
    CHECK_FALSE(a.has_header(std::string(sa::response_mac_header)));
  }
  SECTION("a MAC made with another session's key") {
    session_conn s(port);
    session_conn t(port);
    request_parts r = s.mac_request(5);
    const std::string forged = "v1." + std::string(s.keys->id_hex()) + "." +
                               sa::request_mac(*t.keys, r.signed_message).substr(3 + 32 + 1);
    r.set(std::string(sa::request_header), forged);
    const reply a = s.send(r);
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session MAC invalid") != std::string::npos);
  }
  SECTION("a covered field altered after the MAC: the nonce") {
    session_conn s(port);
    request_parts r = s.mac_request(5);
    r.set("bt_header_dendrite_nonce",
          std::to_string(std::stoll(*r.find("bt_header_dendrite_nonce")) + 1));
    const reply a = s.send(r);
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session MAC invalid") != std::string::npos);
    CHECK(ax.handled().size() == 1);  // only the opening request
  }
  SECTION("a second offer on a connection that has a session") {
    session_conn s(port);
    request_parts r = make_request(port, 5, s.uuid, true);
    sa::client_offer offer(alice(), identity_of(r));
    r.set(std::string(sa::offer_header), offer.header_value());
    const reply a = s.send(r);
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session already established on this connection") !=
          std::string::npos);
    CHECK_FALSE(a.has_header(std::string(sa::accept_header)));
  }
  SECTION("an offer whose signature does not cover this request") {
    raw_client c(port);
    const std::string uuid = fresh_uuid();
    request_parts r = make_request(port, 5, uuid, true);
    request_parts earlier = make_request(port, 5, uuid, true);
    earlier.set("bt_header_dendrite_nonce", "1");  // another request's identity
    sa::client_offer offer(alice(), identity_of(earlier));
    r.set(std::string(sa::offer_header), offer.header_value());
    c.send(r.wire(port));
    const reply a = c.read();
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session offer invalid") != std::string::npos);
    CHECK_FALSE(a.has_header(std::string(sa::accept_header)));
  }
  SECTION("a malformed offer") {
    raw_client c(port);
    request_parts r = make_request(port, 5, fresh_uuid(), true);
    r.set(std::string(sa::offer_header), "v1.nothex.0x00");
    c.send(r.wire(port));
    const reply a = c.read();
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session offer invalid: malformed") != std::string::npos);
  }
  SECTION("a MAC'd request naming another dendrite hotkey") {
    session_conn s(port);
    const reply a = s.send(s.mac_request(5, charlie()));
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session hotkey mismatch") != std::string::npos);
  }
  SECTION("a MAC'd request naming another axon hotkey") {
    session_conn s(port);
    request_parts r = s.mac_request(5);
    r.set("bt_header_axon_hotkey", charlie().ss58_address());
    const reply a = s.send(r);
    CHECK(a.status == 401);
    CHECK(message_of(a).find("session hotkey mismatch") != std::string::npos);
  }
  SECTION("a blacklisted caller's offer gets no accept") {
    raw_client c(port);
    request_parts r = make_request(port, 5, fresh_uuid(), true, charlie());
    sa::client_offer offer(charlie(), identity_of(r));
    r.set(std::string(sa::offer_header), offer.header_value());
    c.send(r.wire(port));
    const reply a = c.read();
    CHECK(a.status == 403);
    CHECK_FALSE(a.has_header(std::string(sa::accept_header)));
  }
  SECTION("a request with no offer (a Python dendrite) sees today's protocol") {
    raw_client c(port);
    c.send(make_request(port, 5, fresh_uuid(), true).wire(port));
    const reply a = c.read();
    CHECK(a.status == 200);
    CHECK(a.has_header("bt-response-signature"));
    CHECK_FALSE(a.has_header(std::string(sa::accept_header)));
    CHECK_FALSE(a.has_header(std::string(sa::response_mac_header)));
  }
}

TEST_CASE("session: expired by its lifetime", "[axon][session]") {
  session_axon ax(true, 100, 1);
  session_conn s(ax.port());
  REQUIRE(s.send(s.mac_request(2)).status == 200);
  std::this_thread::sleep_for(1100ms);
  const reply a = s.send(s.mac_request(3));
  CHECK(a.status == 401);
  CHECK(message_of(a).find("session expired") != std::string::npos);
  CHECK(s.c.closed_by_peer());
}

TEST_CASE("sessions off: the offer is ignored and a MAC'd request is refused as unsigned",
          "[axon][session]") {
  session_axon ax(false);
  const std::uint16_t port = ax.port();
  raw_client c(port);
  const std::string uuid = fresh_uuid();
  request_parts r = make_request(port, 1, uuid, true);
  sa::client_offer offer(alice(), identity_of(r));
  r.set(std::string(sa::offer_header), offer.header_value());
  c.send(r.wire(port));
  const reply a = c.read();
  CHECK(a.status == 200);
  CHECK(a.has_header("bt-response-signature"));
  CHECK_FALSE(a.has_header(std::string(sa::accept_header)));

  // A MAC under keys the axon never agreed to (another axon's session) is no signature.
  session_axon other(true);
  session_conn s(other.port());
  request_parts m = make_request(port, 2, uuid, false);
  m.set(std::string(sa::request_header), sa::request_mac(*s.keys, m.signed_message));
  c.send(m.wire(port));
  const reply b = c.read();
  CHECK(b.status == 401);
  CHECK(message_of(b).find("Missing Signature") != std::string::npos);
}

TEST_CASE("session options are validated at start", "[axon][session]") {
  for (const auto& [requests, seconds] :
       {std::pair<std::uint64_t, std::uint64_t>{0, 60}, {5, 0}, {5, 400ull * 86400}}) {
    bt::axon_options o = bt::axon_options::loopback();
    o.accept_sessions = true;
    o.session_max_requests = requests;
    o.session_max_seconds = seconds;
    bt::axon ax(bob(), o);
    std::error_code ec;
    ax.start(ec);
    CHECK(ec == std::errc::invalid_argument);
  }
  bt::axon_options o = bt::axon_options::loopback();
  o.accept_sessions = true;
  o.sign_responses = false;
  bt::axon secretless(bt::keypair::from_ss58(bob().ss58_address()), o);
  std::error_code ec;
  secretless.start(ec);
  CHECK(ec == std::errc::invalid_argument);
}

TEST_CASE("session: the answer's MAC names the session's verified caller, never Epistula fields",
          "[axon][session][response_signature]") {
  session_axon ax(true, 4);
  session_conn s(ax.port());
  // A MAC'd request of Alice's session that also claims another caller and request id in
  // Epistula-* fields, which a route authenticated by bittensor's scheme does not check.
  const std::string claimed_id = "1700000000000000000.3a8c1f2e-9b7d-4e6f-8a1b-2c3d4e5f6a7b";
  request_parts r = s.mac_request(7);
  r.set("Epistula-Signed-By", charlie().ss58_address());
  r.set("Epistula-Uuid", claimed_id);
  const reply a = s.send(r);
  REQUIRE(a.status == 200);
  const auto mac = a.header(std::string(sa::response_mac_header));
  REQUIRE(mac);
  CHECK(sa::check_response_mac(*s.keys, *mac, alice().ss58_address(), request_id_of(r), 200, a.body,
                               bob().ss58_address())
            .empty());
  CHECK_FALSE(sa::check_response_mac(*s.keys, *mac, charlie().ss58_address(), claimed_id, 200,
                                     a.body, bob().ss58_address())
                  .empty());
}
