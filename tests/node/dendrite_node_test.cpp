// Our dendrite against an independent Python-shaped axon written in Node.js
// (tests/node/python_axon_peer.mjs): it verifies our sr25519 signatures with
// @polkadot/util-crypto, checks every request against PROTOCOL 2-4 and answers as 5.11.
// Registered by tests/dendrite_node.cmake. A missing node or node_modules fails the test
// (run scripts/setup); nothing is skipped.
#include <bt/dendrite.hpp>

#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/json_body.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "support/dev_keys.hpp"
#include "support/node_peer.hpp"

using bt::test::alice;
using bt::test::bob;
using bt::test::node_peer;

TEST_CASE("a Python-shaped axon accepts every request we send", "[dendrite][node]") {
  node_peer peer("python_axon_peer.mjs", bob());
  bt::dendrite d(alice());

  SECTION("Dummy, the ping and a hashed dynamic synapse, repeatedly on one connection") {
    for (int i = 0; i < 20; ++i) {
      bt::examples::dummy q;
      q.dummy_input = i;
      auto r = d.call(peer.axon(), q, 5.0);
      INFO(r.dendrite.status_message.value_or("None"));
      REQUIRE(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 2 * i);
      CHECK(r.dendrite.status_message == "Success");
      CHECK(r.axon.process_time.has_value());
    }
    auto ping = d.call(peer.axon(), bt::synapse{}, 5.0);
    INFO(ping.dendrite.status_message.value_or("None"));
    CHECK(ping.dendrite.status_code == 200);

    bt::error err;
    auto echo = bt::make_dynamic_descriptor(
        "Echo", {{"text", bt::field_kind::required}, {"reply", bt::field_kind::optional}}, {"text"},
        err);
    REQUIRE_FALSE(err);
    for (const char* text :
         {"hello", "", "quote ' and \" and \\", "caf\xc3\xa9 \xf0\x9f\x98\x80"}) {
      bt::dynamic_synapse s(echo);
      *s.get("text") = text;
      auto r = d.call(peer.axon(), s, 5.0);
      INFO(r.dendrite.status_message.value_or("None"));
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.get("text")->get<std::string>() == text);
      REQUIRE(r.get("reply")->is_string());
    }
    CHECK(d.stats().connections_opened == 1);
  }

  SECTION("a sequential fan-out: nonces strictly increase as the peer requires") {
    bt::dendrite seq(alice(), {.max_concurrency = 1});
    bt::examples::dummy q;
    q.dummy_input = 3;
    auto rs = seq.forward(std::vector<bt::axon_info>(10, peer.axon()), q, 5.0);
    for (auto& r : rs) {
      INFO(r.dendrite.status_message.value_or("None"));
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 6);
    }
  }

  SECTION("a request signed for another hotkey is refused as Python refuses it") {
    auto target = peer.axon();
    target.hotkey = alice().ss58_address();
    auto r = d.call(target, bt::examples::dummy{}, 5.0);
    CHECK(r.dendrite.status_code == 401);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Not Verified with error: Signature mismatch with "));
  }

  SECTION("no response signature: accepted under if_present, refused under required") {
    // A Python axon sends no bt-response-signature (PROTOCOL 5.15).
    bt::examples::dummy q;
    q.dummy_input = 5;
    auto r = d.call(peer.axon(), q, 5.0);  // verify_responses = if_present by default
    CHECK(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 10);
    bt::dendrite strict(alice(), {.verify_responses = bt::response_verification::required});
    auto refused = strict.call(peer.axon(), q, 5.0);
    CHECK(refused.dendrite.status_code == 421);
    CHECK(refused.dendrite.status_message ==
          "Response not authenticated: no bt-response-signature header");
    CHECK_FALSE(refused.dummy_output.has_value());
  }

  SECTION("session = true: the offer is ignored and every request is today's signed one") {
    // PROTOCOL 13: a Python axon ignores bt-session-offer, so the connection declines and
    // never offers again; the peer checks each request as above (signature included).
    bt::dendrite sd(alice(), {.session = true});
    for (int i = 0; i < 10; ++i) {
      bt::examples::dummy q;
      q.dummy_input = i;
      auto r = sd.call(peer.axon(), q, 5.0);
      INFO(r.dendrite.status_message.value_or("None"));
      REQUIRE(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 2 * i);
    }
    const auto st = sd.stats();
    CHECK(st.connections_opened == 1);
    CHECK(st.sessions_offered == 1);
    CHECK(st.sessions_established == 0);
    CHECK(st.session_requests == 0);
  }

  SECTION("an unknown synapse gets Python's 404") {
    bt::error err;
    auto other = bt::make_dynamic_descriptor("Other", {}, {}, err);
    REQUIRE_FALSE(err);
    auto r = d.call(peer.axon(), bt::dynamic_synapse(other), 5.0);
    CHECK(r.dendrite.status_code == 404);
    CHECK(r.dendrite.status_message ==
          "Synapse name 'Other' not found. Available synapses ['Synapse', 'Dummy', 'Echo']");
  }
}
