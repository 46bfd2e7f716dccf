// dendrite::btauth_call (PROTOCOL 14) against a btauth/1 receiver made of libsynapse's verifier
// (btauth_peer.hpp), and against our axon; forward_mixed: one query to a loopback axon's synapse
// route and its plain route in Epistula and in btauth/1 at once, answered in order.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/btauth.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/examples/echo_route.hpp>
#include <bt/json.hpp>

#include "btauth_peer.hpp"
#include "fault_server.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/use_future.hpp>

#include <string>
#include <variant>

using bt::examples::dummy;
using namespace bt::test;

namespace {

/// The value of header `name` of a request the server logged.
std::string logged_header(server_log& log, std::size_t i, std::string_view name) {
  std::lock_guard lk(log.mu);
  return std::string(log.requests.at(i)[name]);
}

}  // namespace

TEST_CASE("btauth_call: signed for the addressed hotkey, the answer's signature checked",
          "[dendrite][btauth]") {
  fault_server srv(btauth_verifier(bob()));
  bt::dendrite d(alice(), {.verify_responses = bt::response_verification::required});

  auto r = d.btauth_call(srv.axon(bob().ss58_address()), "POST", "/forward?round=3&x=y",
                         R"({"q":[1,2]})", 5.0);
  INFO(r.status_message << " " << r.body);
  REQUIRE_FALSE(r.error);
  REQUIRE(r.status == 200);
  CHECK(r.response_verified);
  CHECK(r.process_time.has_value());
  const auto j = bt::json::parse(r.body);
  CHECK(j.at("hotkey") == alice().ss58_address());
  CHECK(j.at("target") == "/forward?round=3&x=y");
  CHECK(j.at("method") == "POST");
  CHECK(j.at("body") == R"({"q":[1,2]})");
  CHECK(j.at("nonce") == r.nonce);
  CHECK(r.uuid.empty());

  // The head as sent: version 1, the receiver bound, no Crypto header for an sr25519 key.
  REQUIRE(srv.log().count() == 1);
  CHECK(logged_header(srv.log(), 0, bt::btauth::version_header) == "1");
  CHECK(logged_header(srv.log(), 0, bt::btauth::receiver_header) == bob().ss58_address());
  CHECK(logged_header(srv.log(), 0, bt::btauth::crypto_header).empty());
  CHECK(logged_header(srv.log(), 0, "content-type") == "application/json");

  SECTION("each call a fresh nonce, on one pooled connection") {
    auto again = d.btauth_call(srv.axon(bob().ss58_address()), "POST", "/forward", "{}", 5.0);
    CHECK(again.status == 200);
    CHECK(again.nonce != r.nonce);
    CHECK(std::stoll(again.nonce) > std::stoll(r.nonce));
    CHECK(d.stats().connections_opened == 1);
  }

  SECTION("an empty body and GET") {
    auto g = d.btauth_call(srv.axon(bob().ss58_address()), "GET", "/health", "", 5.0);
    CHECK(g.status == 200);
    CHECK(bt::json::parse(g.body).at("body") == "");
  }

  SECTION("addressing another hotkey: the receiver refuses (WrongReceiver)") {
    auto w = d.btauth_call(srv.axon(charlie().ss58_address()), "POST", "/forward", "{}", 5.0);
    // The 401 is unsigned: under required it is a 421, under if_present the refusal itself.
    CHECK(w.status == 421);
    bt::dendrite lenient(alice());
    auto w2 =
        lenient.btauth_call(srv.axon(charlie().ss58_address()), "POST", "/forward", "{}", 5.0);
    CHECK(w2.status == 401);
    CHECK(bt::json::parse(w2.body).at("error") == "WrongReceiver");
  }

  SECTION("a failure names the path without its query, in the message and the metrics") {
    bt::axon_info gone = srv.axon(bob().ss58_address());
    gone.port = closed_port();
    auto f = d.btauth_call(gone, "POST", "/forward?round=3", "{}", 5.0);
    CHECK(f.error == bt::dendrite_errc::connect_failed);
    CHECK(f.status_message ==
          "Service unavailable at 127.0.0.1:" + std::to_string(gone.port) + "/forward");
    const std::string m = d.metrics().render();
    CHECK_THAT(m, Catch::Contains(R"(synapse="forward",status="503")"));
    CHECK_THAT(m, !Catch::Contains("round=3"));
  }

  SECTION("a method or path that cannot be sent is refused before any connection") {
    bt::dendrite fresh(alice());
    auto bad = fresh.btauth_call(srv.axon(bob().ss58_address()), "POST", "forward", "{}", 5.0);
    CHECK(bad.error == bt::dendrite_errc::invalid_address);
    CHECK(fresh.stats().connections_opened == 0);
  }
}

TEST_CASE("btauth_call to our axon's btauth/1 route: verified both ways", "[dendrite][btauth]") {
  bt::axon ax(bob(), bt::axon_options::loopback());
  bt::examples::attach_echo_route(ax, {.auth = bt::auth_mode::btauth});
  ax.start();
  bt::dendrite d(alice(), {.verify_responses = bt::response_verification::required});
  for (int i = 0; i < 3; ++i) {
    auto r = d.btauth_call(ax.info(), "POST", "/echo", R"({"i":)" + std::to_string(i) + "}", 5.0);
    INFO(r.status_message << " " << r.body);
    REQUIRE(r.status == 200);
    CHECK(r.response_verified);
    CHECK(bt::json::parse(r.body).at("i") == i);
    CHECK(bt::json::parse(r.body).at("signed_by") == alice().ss58_address());
  }
  // An Epistula request to the btauth-only route is refused (signed over no caller: accepted
  // under required as the axon's authentic refusal).
  auto e = d.epistula_call(ax.info(), "POST", "/echo", "{}", 5.0);
  CHECK(e.status / 100 == 4);
  CHECK_FALSE(e.response_verified);
  ax.stop();
}

TEST_CASE("btauth_call with an ed25519 hotkey sends X-Bittensor-Crypto and verifies",
          "[dendrite][btauth]") {
  fault_server srv(btauth_verifier(bob()));
  const auto dave = bt::keypair::from_uri("//Dave", bt::crypto_type::ed25519);
  bt::dendrite d(dave);
  auto r = d.btauth_call(srv.axon(bob().ss58_address()), "POST", "/forward", R"({"x":1})", 5.0);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(bt::json::parse(r.body).at("hotkey") == dave.ss58_address());
  CHECK(r.response_verified);
  CHECK(logged_header(srv.log(), 0, bt::btauth::crypto_header) == "ed25519");
}

TEST_CASE("btauth_call: a retried try is signed again under a fresh nonce", "[dendrite][btauth]") {
  // The second request on the pooled connection is read and dropped unanswered: the dendrite
  // retries it once on a new connection, which must carry a new nonce (the receiver refuses a
  // (hotkey, nonce) pair it has seen, and this one may have reached it).
  fault_server srv(btauth_verifier(bob(), /*drop_reused=*/true));
  bt::dendrite d(alice());
  const auto a = srv.axon(bob().ss58_address());
  auto first = d.btauth_call(a, "POST", "/forward", "{}", 5.0);
  REQUIRE(first.status == 200);
  auto second = d.btauth_call(a, "POST", "/forward", "{}", 5.0);
  INFO(second.status_message << " " << second.body);
  REQUIRE(second.status == 200);
  CHECK(d.stats().retries == 1);
  REQUIRE(srv.log().count() == 3);
  const std::string dropped = logged_header(srv.log(), 1, bt::btauth::nonce_header);
  const std::string retried = logged_header(srv.log(), 2, bt::btauth::nonce_header);
  CHECK(dropped != retried);
  CHECK(second.nonce == retried);
  CHECK(bt::json::parse(second.body).at("nonce") == retried);
}

TEST_CASE("forward_mixed: one query to a synapse, an Epistula and a btauth/1 target, in order",
          "[dendrite][btauth][fanout]") {
  // One loopback axon serves the three dialects: the Dummy synapse, and POST /echo accepting
  // Epistula and btauth/1 (the route's scheme is chosen per request by its headers).
  bt::axon ax(bob(), bt::axon_options::loopback());
  ax.attach<dummy>([](dummy& q) { q.dummy_output = q.dummy_input * 2; });
  bt::examples::attach_echo_route(ax, {.auth = bt::auth_mode::epistula | bt::auth_mode::btauth});
  ax.start();

  const auto miner = ax.info();
  std::vector<bt::mixed_request> requests{
      {.axon = miner},
      {.axon = miner, .dialect = bt::wire_dialect::epistula, .path = "/echo", .body = R"({"q":7})"},
      {.axon = miner, .dialect = bt::wire_dialect::btauth, .path = "/echo", .body = R"({"q":8})"},
      {.axon = miner,  // a path that cannot be sent
       .dialect = bt::wire_dialect::btauth,
       .path = "no slash"},
  };
  dummy q;
  q.dummy_input = 7;
  bt::dendrite d(alice());

  const auto check_answers = [&](const std::vector<bt::mixed_answer<dummy>>& out) {
    REQUIRE(out.size() == 4);
    REQUIRE(std::holds_alternative<dummy>(out[0]));
    const auto& s = std::get<dummy>(out[0]);
    CHECK(s.dendrite.status_code == 200);
    CHECK(s.dummy_output == 14);
    REQUIRE(std::holds_alternative<bt::http_call_response>(out[1]));
    const auto& e = std::get<bt::http_call_response>(out[1]);
    INFO(e.status_message << " " << e.body);
    CHECK(e.status == 200);
    CHECK(e.response_verified);
    CHECK_FALSE(e.uuid.empty());
    CHECK(bt::json::parse(e.body).at("signed_by") == alice().ss58_address());
    REQUIRE(std::holds_alternative<bt::http_call_response>(out[2]));
    const auto& b = std::get<bt::http_call_response>(out[2]);
    INFO(b.status_message << " " << b.body);
    CHECK(b.status == 200);
    CHECK(b.response_verified);  // the axon signs over (our hotkey, the nonce text)
    CHECK_FALSE(b.nonce.empty());
    CHECK(bt::json::parse(b.body) ==
          bt::json::parse(R"({"q":8,"signed_by":")" + alice().ss58_address() + "\"}"));
    REQUIRE(std::holds_alternative<bt::http_call_response>(out[3]));
    CHECK(std::get<bt::http_call_response>(out[3]).error == bt::dendrite_errc::invalid_address);
  };

  SECTION("blocking") {
    check_answers(d.forward_mixed(requests, q, 5.0));
  }
  SECTION("with a completion token, concurrency 1") {
    bt::dendrite one(alice(), {.max_concurrency = 1});
    auto f = one.async_forward_mixed(requests, q, 5.0, boost::asio::use_future);
    check_answers(f.get());
  }
  SECTION("no requests: an empty answer") {
    CHECK(d.forward_mixed(std::vector<bt::mixed_request>{}, q, 5.0).empty());
  }
  ax.stop();
}
