// Sessions between our own ends (PROTOCOL 13), the dendrite against a peer written in this test
// that plays the axon with libsynapse's session_auth directly (not bt::axon): it checks each
// request's session MAC itself, so what the dendrite puts on the wire is checked independently of
// our axon's pipeline (dendrite_session_axon_test.cpp runs the same dendrite against bt::axon).
#include <bt/dendrite.hpp>

#include <bt/examples/dummy.hpp>
#include <bt/json_body.hpp>
#include <bt/response_signature.hpp>
#include <bt/session_auth.hpp>

#include "fault_server.hpp"
#include "support/example_queries.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <optional>
#include <string>

using bt::examples::dummy;
using bt::test::dummy_query;
using namespace bt::test;
namespace session_auth = bt::session_auth;

namespace {

/// What the peer saw.
struct peer_counts {
  std::atomic<int> offers{0}, accepted{0}, macs_valid{0}, macs_invalid{0}, signed_requests{0};
};

/// How the peer answers an offer.
enum class peer_accept {
  yes,       ///< a valid accept, signed by Bob
  never,     ///< no accept header (as a Python axon)
  tampered,  ///< Bob's accept with one hex digit of its session id changed (signature invalid)
};

std::string field(const http::request<http::string_body>& r, std::string_view name) {
  auto it = r.find(name);
  return it == r.end() ? std::string() : std::string(it->value());
}

/// A keep-alive peer answering Dummy (output = 2 * input) as Bob, with sessions of at most
/// `max_requests` requests. A request with a wrong MAC gets a 401 (and the peer counts it).
behaviour session_peer(peer_accept mode, std::uint64_t max_requests, peer_counts& seen) {
  return [mode, max_requests, &seen](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    std::optional<session_auth::session_keys> keys;
    std::uint64_t used = 0;
    for (;;) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
      if (ec) co_return;
      log.add(req);
      const std::string nonce = field(req, "bt_header_dendrite_nonce");
      const std::string dhk = field(req, "bt_header_dendrite_hotkey");
      const std::string ahk = field(req, "bt_header_axon_hotkey");
      const std::string uuid = field(req, "bt_header_dendrite_uuid");
      const std::string canonical =
          nonce + "." + dhk + "." + ahk + "." + uuid + "." + field(req, "computed_body_hash");
      const std::string request_id = nonce + "." + uuid;
      if (req.count("bt_header_dendrite_signature")) ++seen.signed_requests;
      std::string extra;
      int status = 200;
      bool use_mac = false;
      if (auto offer = field(req, session_auth::offer_header); !offer.empty()) {
        ++seen.offers;
        if (mode != peer_accept::never) {
          std::string why;
          auto a = session_auth::accept(offer, {nonce, dhk, ahk, uuid}, bob(), {max_requests, 3600},
                                        &why);
          INFO(why);
          REQUIRE(a);
          ++seen.accepted;
          std::string value = a->header_value;  // "v1.{session_id}...."
          if (mode == peer_accept::tampered) value[3] = value[3] == 'a' ? 'b' : 'a';
          keys = std::move(a->keys);
          used = 1;
          extra += std::string(session_auth::accept_header) + ": " + value + "\r\n";
        }
      } else if (auto mac = field(req, session_auth::request_header); !mac.empty()) {
        if (keys && ++used <= max_requests &&
            session_auth::check_request_mac(*keys, mac, canonical).empty()) {
          ++seen.macs_valid;
          use_mac = true;
        } else {
          ++seen.macs_invalid;
          status = 401;
        }
      }
      std::string body;
      if (status == 200) {
        dummy d;
        REQUIRE_FALSE(bt::read_json_body(bt::descriptor_of<dummy>(), req.body(), d));
        d.dummy_output = 2 * d.dummy_input;
        d.axon.status_code = 200;
        d.axon.status_message = "Success";
        bt::write_json_body(bt::descriptor_of<dummy>(), d, body, bt::json_style::compact);
        extra += "bt_header_axon_status_code: 200\r\nbt_header_axon_status_message: Success\r\n";
      } else {
        body = R"({"message": "session MAC invalid"})";
        extra += "bt_header_axon_status_code: 401\r\n";
      }
      const std::string axon_nonce = "1";
      if (use_mac)
        extra += std::string(session_auth::response_mac_header) + ": " +
                 session_auth::response_mac(*keys, axon_nonce, dhk, request_id, status, body,
                                            bob().ss58_address()) +
                 "\r\n";
      else
        extra += std::string(bt::response_signature::header) + ": " +
                 bt::response_signature::sign(bob(), axon_nonce, dhk, request_id, status, body) +
                 "\r\n";
      const bool last = keys && used >= max_requests;
      if (last) extra += "connection: close\r\n";
      co_await write_text(s, http_response(status, body, extra));
      if (last) co_return;
    }
  };
}

bt::dendrite_options with_session() {
  return bt::dendrite_options{.verify_responses = bt::response_verification::required,
                              .session = true};
}

}  // namespace

TEST_CASE("session peer: one offer per connection, then MAC'd requests the peer verifies",
          "[dendrite][session]") {
  peer_counts seen;
  fault_server peer(session_peer(peer_accept::yes, 100000, seen));
  bt::dendrite d(alice(), with_session());
  for (int i = 0; i < 25; ++i) {
    auto r = d.call(peer.axon(bob().ss58_address()), dummy_query(i), 5.0);
    INFO(i << ": " << r.dendrite.status_message.value_or(""));
    REQUIRE(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 2 * i);
  }
  CHECK(peer.log().connections == 1);
  CHECK(seen.offers == 1);
  CHECK(seen.accepted == 1);
  CHECK(seen.signed_requests == 1);
  CHECK(seen.macs_valid == 24);
  CHECK(seen.macs_invalid == 0);
  // A MAC'd request carries no signature header at all.
  {
    std::lock_guard lk(peer.log().mu);
    const auto& last = peer.log().requests.back();
    CHECK(last.count("bt_header_dendrite_signature") == 0);
    CHECK(last.count(session_auth::request_header) == 1);
  }
  const auto st = d.stats();
  CHECK(st.sessions_offered == 1);
  CHECK(st.sessions_established == 1);
  CHECK(st.session_requests == 24);
}

TEST_CASE("session peer: a used-up session moves to a new connection before the peer refuses",
          "[dendrite][session]") {
  peer_counts seen;
  fault_server peer(session_peer(peer_accept::yes, 3, seen));
  bt::dendrite d(alice(), with_session());
  for (int i = 0; i < 7; ++i) {
    auto r = d.call(peer.axon(bob().ss58_address()), dummy_query(i), 5.0);
    INFO(i << ": " << r.dendrite.status_message.value_or(""));
    REQUIRE(r.dendrite.status_code == 200);
  }
  CHECK(peer.log().connections == 3);  // 3 + 3 + 1
  CHECK(seen.offers == 3);
  CHECK(seen.macs_valid == 4);
  CHECK(seen.macs_invalid == 0);
  CHECK(d.stats().retries == 0);  // never sent on a connection the peer had closed
}

TEST_CASE("session peer: no accept declines for good, an invalid accept is refused",
          "[dendrite][session]") {
  SECTION("no accept: every request is signed, one offer per connection") {
    peer_counts seen;
    fault_server peer(session_peer(peer_accept::never, 100000, seen));
    bt::dendrite d(alice(), bt::dendrite_options{.session = true});
    for (int i = 0; i < 5; ++i)
      CHECK(d.call(peer.axon(bob().ss58_address()), dummy_query(i), 5.0).dummy_output == 2 * i);
    CHECK(peer.log().connections == 1);
    CHECK(seen.offers == 1);
    CHECK(seen.signed_requests == 5);
    CHECK(d.stats().session_requests == 0);
  }
  SECTION("an invalid accept: the call stands on its signature, the connection closes") {
    peer_counts seen;
    fault_server peer(session_peer(peer_accept::tampered, 100000, seen));
    bt::dendrite d(alice(), with_session());
    for (int i = 0; i < 3; ++i) {
      auto r = d.call(peer.axon(bob().ss58_address()), dummy_query(i), 5.0);
      INFO(r.dendrite.status_message.value_or(""));
      CHECK(r.dendrite.status_code == 200);
    }
    CHECK(peer.log().connections == 3);
    CHECK(seen.macs_valid + seen.macs_invalid == 0);
    const auto st = d.stats();
    CHECK(st.sessions_rejected == 3);
    CHECK(st.sessions_established == 0);
  }
  SECTION("session = false: no offer at all") {
    peer_counts seen;
    fault_server peer(session_peer(peer_accept::yes, 100000, seen));
    bt::dendrite d(alice());
    for (int i = 0; i < 3; ++i)
      CHECK(d.call(peer.axon(bob().ss58_address()), dummy_query(i), 5.0).dummy_output == 2 * i);
    CHECK(seen.offers == 0);
    CHECK(seen.signed_requests == 3);
  }
}
