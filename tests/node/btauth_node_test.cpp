// Our btauth/1 requests (dendrite::btauth_call and bt-dendrite btauth) against an independent
// receiver (tests/node/btauth_verifier_peer.mjs, verifying with tests/node/btauth.mjs): accepted
// as made, with sr25519 and ed25519 keys, a retried try under a fresh nonce. Registered by
// tests/btauth_node.cmake. A missing node or node_modules fails the test (run scripts/setup);
// nothing is skipped.
#include <bt/dendrite.hpp>

#include <bt/json.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "support/dev_keys.hpp"
#include "support/node_peer.hpp"
#include "support/run_command.hpp"

namespace {

using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;
using bt::test::node_peer;

std::string axon_flag(const bt::axon_info& a, const std::string& hotkey) {
  return a.ip + ":" + std::to_string(a.port) + ":" + hotkey;
}

}  // namespace

TEST_CASE("bt-dendrite btauth: one JSON line the independent btauth/1 verifier accepted",
          "[dendrite][node][btauth]") {
  node_peer peer("btauth_verifier_peer.mjs", bob());
  const auto a = peer.axon();
  const std::string exe = BT_DENDRITE_EXE;

  auto r = bt::test::run_command(exe + " btauth --axon " + axon_flag(a, a.hotkey) +
                                 " --path '/forward?round=3&q=a%20b' --data '{\"q\": [1, 2]}'" +
                                 " --uri //Alice");
  INFO(r.out);
  REQUIRE(r.status == 0);
  const auto j = bt::json::parse(r.out);
  CHECK(j.at("status") == 200);
  const auto& seen = j.at("body");
  CHECK(seen.at("hotkey") == alice().ss58_address());
  CHECK(seen.at("crypto") == "sr25519");
  CHECK(seen.at("method") == "POST");
  CHECK(seen.at("target") == "/forward?round=3&q=a%20b");
  CHECK(seen.at("body") == bt::json::parse(R"({"q":[1,2]})"));
  CHECK(j.at("process_time").is_number());
  CHECK(j.at("response_verified") == false);  // the peer does not sign its answers
  CHECK(j.size() == 4);

  // Signed for another receiver: the verifier's WrongReceiver 401, a completed call: exit 1.
  auto wrong =
      bt::test::run_command(exe + " btauth --axon " + axon_flag(a, charlie().ss58_address()) +
                            " --path /forward --data '{}' --uri //Alice");
  CHECK(wrong.status == 1);
  const auto w = bt::json::parse(wrong.out);
  CHECK(w.at("status") == 401);
  CHECK(w.at("body").at("error") == "WrongReceiver");

  // GET with no body.
  auto get = bt::test::run_command(exe + " btauth --axon " + axon_flag(a, a.hotkey) +
                                   " --method GET --path /health --uri //Alice");
  REQUIRE(get.status == 0);
  CHECK(bt::json::parse(get.out).at("body").at("method") == "GET");
  CHECK(bt::json::parse(get.out).at("body").at("body").is_null());

  // Bad usage: exit 2 with {"error": ...} on stderr.
  for (const std::string& args :
       {" --axon " + axon_flag(a, a.hotkey) + " --path forward --uri //Alice",
        " --axon " + axon_flag(a, a.hotkey) + " --path /forward --data '{x' --uri //Alice",
        std::string(" --axon 127.0.0.1:1:notahotkey --path /forward --uri //Alice")}) {
    INFO(args);
    auto bad = bt::test::run_command(exe + " btauth" + args + " 2>&1 >/dev/null");
    CHECK(bad.status == 2);
    const auto e = bt::json::parse(bad.out, nullptr, false);
    REQUIRE(e.is_object());
    CHECK(e.contains("error"));
  }
}

TEST_CASE("btauth_call: the independent verifier accepts sr25519 and ed25519 signers",
          "[dendrite][node][btauth]") {
  node_peer peer("btauth_verifier_peer.mjs", bob());

  SECTION("sr25519, repeatedly on one connection, each with a fresh nonce") {
    bt::dendrite d(alice());
    std::set<std::string> nonces;
    for (const char* body : {R"({"x":1})", "[1,2,3]", R"({"text":"caf\u00e9"})", ""}) {
      auto r = d.btauth_call(peer.axon(), "POST", "/forward?n=1", body, 5.0);
      INFO(r.status_message << " " << r.body);
      REQUIRE_FALSE(r.error);
      REQUIRE(r.status == 200);
      const auto j = bt::json::parse(r.body);
      CHECK(j.at("hotkey") == alice().ss58_address());
      CHECK(j.at("nonce") == r.nonce);
      CHECK(j.at("target") == "/forward?n=1");
      nonces.insert(r.nonce);
    }
    CHECK(nonces.size() == 4);
    CHECK(d.stats().connections_opened == 1);
  }

  SECTION("ed25519") {
    const auto dave = bt::keypair::from_uri("//Dave", bt::crypto_type::ed25519);
    bt::dendrite d(dave);
    auto r = d.btauth_call(peer.axon(), "POST", "/forward", R"({"x":2})", 5.0);
    INFO(r.status_message << " " << r.body);
    REQUIRE(r.status == 200);
    const auto j = bt::json::parse(r.body);
    CHECK(j.at("hotkey") == dave.ss58_address());
    CHECK(j.at("crypto") == "ed25519");
    CHECK(j.at("body") == bt::json::parse(R"({"x":2})"));
  }

  SECTION("a retried try is signed under a fresh nonce") {
    // The first call pools its connection; the second goes out on it, is verified (its nonce
    // recorded as used) and dropped unanswered. The dendrite retries once on a new connection: a
    // reused nonce would be the verifier's ReplayedRequest 401.
    bt::dendrite d(alice());
    REQUIRE(d.btauth_call(peer.axon(), "POST", "/forward", "{}", 5.0).status == 200);
    auto r = d.btauth_call(peer.axon(), "POST", "/drop-once", "{}", 5.0);
    INFO(r.status_message << " " << r.body);
    REQUIRE(r.status == 200);
    CHECK(d.stats().retries == 1);
    const auto j = bt::json::parse(r.body);
    CHECK(j.at("nonce") == r.nonce);
    CHECK(j.at("dropped_nonce") != r.nonce);
  }
}
