// Sessions between our own ends (PROTOCOL 13), the dendrite against our axon: one offer and one
// accept per connection, then MAC'd requests and answers; a session used up by the axon's
// request bound moves to a new connection; an answer whose MAC a relay altered or stripped is
// refused as an altered signature is; an invalid accept closes the connection and nothing
// else changes; an axon that ignores the offer (sessions off, as every Python axon) gets exactly
// the signed requests of today. The counts come from what a relay between the two ends saw on
// the wire, not from timing.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/response_signature.hpp>
#include <bt/session_auth.hpp>

#include "fault_server.hpp"
#include "support/example_queries.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/use_future.hpp>
#include <boost/beast/http/write.hpp>

#include <future>
#include <string>

using bt::examples::dummy;
using bt::test::dummy_query;
using namespace bt::test;
namespace session_auth = bt::session_auth;

namespace {

/// An axon serving Dummy (output = 2 * input) with Bob's hotkey, stopped at scope exit.
struct session_axon {
  bt::axon ax;

  explicit session_axon(bool accept, std::uint64_t max_requests = 100000,
                        std::size_t io_threads = 1)
      : ax(bob(), [&] {
          auto o = bt::axon_options::loopback();
          o.accept_sessions = accept;
          o.session_max_requests = max_requests;
          o.io_threads = io_threads;
          return o;
        }()) {
    ax.attach<dummy>([](dummy& d) { d.dummy_output = 2 * d.dummy_input; });
    ax.start();
  }
  ~session_axon() { ax.stop(); }

  bt::axon_info info() const {
    auto i = ax.info();
    i.ip = "127.0.0.1";
    return i;
  }
};

/// What the relay does to each answer on its way back.
enum class mac_tamper {
  none,
  mac_body_byte,  ///< one byte of the body of an answer that carries bt-response-mac
  strip_mac,      ///< bt-response-mac removed
  accept_byte,    ///< one hex digit of bt-session-accept's session id changed
};

/// What crossed the relay, counted per header (the relay runs on the fault_server's thread; the
/// test reads the counts after its calls completed).
struct wire_counts {
  std::atomic<int> offers{0}, accepts{0}, session_requests{0}, signed_requests{0}, response_macs{0},
      response_signatures{0};
};

/// A relay to 127.0.0.1:`upstream` keeping ONE upstream connection per downstream connection
/// (a session lives in its connection), counting the session headers it passes and altering
/// answers as `how` says.
behaviour session_relay(std::uint16_t upstream, mac_tamper how, wire_counts& seen) {
  return [upstream, how, &seen](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf, ubuf;
    tcp::socket up(s.get_executor());
    auto [cec] = co_await up.async_connect({net::ip::make_address("127.0.0.1"), upstream},
                                           net::as_tuple(net::use_awaitable));
    if (cec) co_return;
    for (;;) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
      if (ec) co_return;
      if (req.count(session_auth::offer_header)) ++seen.offers;
      if (req.count(session_auth::request_header)) ++seen.session_requests;
      if (req.count("bt_header_dendrite_signature")) ++seen.signed_requests;
      log.add(req);
      auto [wec, wn] = co_await http::async_write(up, req, net::as_tuple(net::use_awaitable));
      if (wec) co_return;
      http::response<http::string_body> res;
      auto [rec, rn] = co_await http::async_read(up, ubuf, res, net::as_tuple(net::use_awaitable));
      if (rec) co_return;
      if (res.count(session_auth::accept_header)) ++seen.accepts;
      if (res.count(session_auth::response_mac_header)) ++seen.response_macs;
      if (res.count(bt::response_signature::header)) ++seen.response_signatures;
      switch (how) {
        case mac_tamper::none:
          break;
        case mac_tamper::mac_body_byte:
          if (res.count(session_auth::response_mac_header)) {
            std::string& b = res.body();
            const auto at = b.find("\"dummy_output\":");
            if (at != std::string::npos) {
              char& c = b[at + 15];
              c = c == '9' ? '8' : static_cast<char>(c + 1);
            }
          }
          break;
        case mac_tamper::strip_mac:
          res.erase(session_auth::response_mac_header);
          break;
        case mac_tamper::accept_byte:
          if (auto it = res.find(session_auth::accept_header); it != res.end()) {
            std::string v(it->value());  // "v1.{session_id}...": a digit of the id
            v[3] = v[3] == 'a' ? 'b' : 'a';
            res.set(session_auth::accept_header, v);
          }
          break;
      }
      const bool keep = res.keep_alive();
      auto [xec, xn] = co_await http::async_write(s, res, net::as_tuple(net::use_awaitable));
      if (xec || !keep) co_return;
    }
  };
}

bt::dendrite_options with_session(bt::response_verification v) {
  return bt::dendrite_options{.verify_responses = v, .session = true};
}

using rv = bt::response_verification;

}  // namespace

TEST_CASE("sessions: many calls on one connection, one offer and one accept",
          "[dendrite][axon][session]") {
  session_axon srv(true);
  wire_counts seen;
  fault_server relay(session_relay(srv.info().port, mac_tamper::none, seen));
  bt::dendrite d(alice(), with_session(rv::required));
  constexpr int calls = 40;
  for (int i = 0; i < calls; ++i) {
    auto r = d.call(relay.axon(bob().ss58_address()), dummy_query(i), 5.0);
    INFO(i << ": " << r.dendrite.status_message.value_or(""));
    REQUIRE(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 2 * i);
  }
  CHECK(relay.log().connections == 1);
  CHECK(seen.offers == 1);
  CHECK(seen.accepts == 1);
  CHECK(seen.signed_requests == 1);  // the opening request only
  CHECK(seen.session_requests == calls - 1);
  CHECK(seen.response_macs == calls - 1);
  CHECK(seen.response_signatures == 1);  // the answer to the offer
  const auto st = d.stats();
  CHECK(st.connections_opened == 1);
  CHECK(st.sessions_offered == 1);
  CHECK(st.sessions_established == 1);
  CHECK(st.sessions_rejected == 0);
  CHECK(st.session_requests == calls - 1);

  // A streaming-capable call path is the same coroutine: the ping also rides the session.
  auto ping = d.call(relay.axon(bob().ss58_address()), bt::synapse{}, 5.0);
  CHECK(ping.dendrite.status_code == 200);
  CHECK(seen.session_requests == calls);
}

TEST_CASE("sessions: the axon's request bound moves the dendrite to a new connection",
          "[dendrite][axon][session]") {
  session_axon srv(true, /*max_requests=*/5);
  wire_counts seen;
  fault_server relay(session_relay(srv.info().port, mac_tamper::none, seen));
  bt::dendrite d(alice(), with_session(rv::required));
  for (int i = 0; i < 12; ++i) {
    auto r = d.call(relay.axon(bob().ss58_address()), dummy_query(i), 5.0);
    INFO(i << ": " << r.dendrite.status_message.value_or(""));
    REQUIRE(r.dendrite.status_code == 200);
  }
  // 5 + 5 + 2: three connections, each with its own session, never a refused request.
  CHECK(relay.log().connections == 3);
  CHECK(seen.offers == 3);
  CHECK(seen.accepts == 3);
  CHECK(seen.session_requests == 12 - 3);
  CHECK(d.stats().sessions_established == 3);
}

TEST_CASE("sessions: an altered or stripped response MAC is detected",
          "[dendrite][axon][session]") {
  session_axon srv(true);
  const auto call_twice = [](bt::dendrite& d, const bt::axon_info& target) {
    auto first = d.call(target, dummy_query(3), 5.0);  // the offer: signed answer, untouched
    REQUIRE(first.dendrite.status_code == 200);
    REQUIRE(d.stats().sessions_established == 1);
    return d.call(target, dummy_query(3), 5.0);  // MAC'd
  };

  SECTION("one byte of the body") {
    for (auto v : {rv::if_present, rv::required}) {
      wire_counts seen;
      fault_server relay(session_relay(srv.info().port, mac_tamper::mac_body_byte, seen));
      bt::dendrite d(alice(), with_session(v));
      auto r = call_twice(d, relay.axon(bob().ss58_address()));
      CHECK(r.dendrite.status_code == 421);
      CHECK_THAT(r.dendrite.status_message.value_or(""),
                 Catch::StartsWith("Response not authenticated: bt-response-mac: "));
      CHECK_FALSE(r.dummy_output.has_value());  // discarded
      CHECK(seen.response_macs == 1);
    }
  }

  SECTION("stripped: accepted by if_present, refused by required") {
    wire_counts seen;
    fault_server relay(session_relay(srv.info().port, mac_tamper::strip_mac, seen));
    bt::dendrite lax(alice(), with_session(rv::if_present));
    auto ok = call_twice(lax, relay.axon(bob().ss58_address()));
    CHECK(ok.dendrite.status_code == 200);
    CHECK(ok.dummy_output == 6);
    bt::dendrite strict(alice(), with_session(rv::required));
    auto r = call_twice(strict, relay.axon(bob().ss58_address()));
    CHECK(r.dendrite.status_code == 421);
    CHECK(r.dendrite.status_message ==
          "Response not authenticated: no bt-response-mac or bt-response-signature header");
  }
}

TEST_CASE("sessions: an invalid accept closes the connection, the calls still succeed",
          "[dendrite][axon][session]") {
  session_axon srv(true);
  wire_counts seen;
  fault_server relay(session_relay(srv.info().port, mac_tamper::accept_byte, seen));
  bt::dendrite d(alice(), with_session(rv::required));
  for (int i = 0; i < 3; ++i) {
    auto r = d.call(relay.axon(bob().ss58_address()), dummy_query(i), 5.0);
    INFO(r.dendrite.status_message.value_or(""));
    CHECK(r.dendrite.status_code == 200);  // judged by its valid response signature
    CHECK(r.dummy_output == 2 * i);
  }
  const auto st = d.stats();
  CHECK(st.sessions_offered == 3);
  CHECK(st.sessions_rejected == 3);
  CHECK(st.sessions_established == 0);
  CHECK(st.session_requests == 0);
  CHECK(st.connections_opened == 3);  // each connection closed after its rejected accept
  CHECK(seen.session_requests == 0);
}

TEST_CASE("sessions: an axon that ignores the offer sees today's signed requests",
          "[dendrite][axon][session]") {
  session_axon srv(false);  // as a Python axon: the offer header is ignored
  wire_counts seen;
  fault_server relay(session_relay(srv.info().port, mac_tamper::none, seen));
  bt::dendrite d(alice(), with_session(rv::required));
  for (int i = 0; i < 10; ++i) {
    auto r = d.call(relay.axon(bob().ss58_address()), dummy_query(i), 5.0);
    REQUIRE(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 2 * i);
  }
  CHECK(relay.log().connections == 1);
  CHECK(seen.offers == 1);  // once per connection, never again after the decline
  CHECK(seen.accepts == 0);
  CHECK(seen.signed_requests == 10);
  CHECK(seen.session_requests == 0);
  CHECK(seen.response_macs == 0);
  CHECK(seen.response_signatures == 10);
  const auto st = d.stats();
  CHECK(st.sessions_offered == 1);
  CHECK(st.sessions_established == 0);
  CHECK(st.session_requests == 0);
}

TEST_CASE("sessions: 16 calls in flight on 2 dendrite threads to 3 axons",
          "[dendrite][axon][session][concurrency]") {
  session_axon a(true, 100000, 2), b(true, 100000, 2), c(true, 100000, 2);
  bt::dendrite d(alice(), bt::dendrite_options{.threads = 2,
                                               .max_concurrency = 16,
                                               .max_idle_per_endpoint = 8,
                                               .verify_responses = rv::required,
                                               .session = true});
  std::vector<bt::axon_info> targets;
  for (int i = 0; i < 16; ++i) targets.push_back((i % 3 == 0 ? a : i % 3 == 1 ? b : c).info());
  constexpr int rounds = 6;
  for (int round = 0; round < rounds; ++round) {
    auto f = d.async_forward(targets, dummy_query(round), 20.0, boost::asio::use_future);
    // Generous bound: the calls end by their 20 s deadline at the latest; this proves "no hang".
    REQUIRE(f.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    for (const dummy& r : f.get()) {
      INFO(r.dendrite.status_message.value_or(""));
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 2 * round);
    }
  }
  const auto st = d.stats();
  CHECK(st.calls == 16 * rounds);
  // Every connection offered once and was accepted; every other call rode a session.
  CHECK(st.sessions_offered == st.connections_opened);
  CHECK(st.sessions_established == st.sessions_offered);
  CHECK(st.session_requests == 16 * rounds - st.sessions_offered);
  CHECK(st.session_requests > 0);
}
