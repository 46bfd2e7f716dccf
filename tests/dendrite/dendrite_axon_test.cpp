// The dendrite against our own axon on loopback: every status the axon can give arrives with the
// axon's message, the 200 path merges outputs, and concurrent calls from one dendrite are all
// accepted.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>

#include "fault_server.hpp"
#include "support/example_queries.hpp"

#include <catch2/catch.hpp>

#include <thread>

using bt::examples::dummy;
using bt::test::dummy_query;
using namespace bt::test;

namespace {

/// A running axon with Bob's hotkey serving Dummy (output = 2 * input) and some misbehaving
/// routes, stopped at scope exit.
struct running_axon {
  bt::axon ax;

  running_axon() : ax(bob(), bt::axon_options::loopback()) {
    ax.attach<dummy>(
        [](dummy& d) {
          if (d.dummy_input == -1) throw std::runtime_error("boom");
          if (d.dummy_input == -2) throw bt::forward_error(429, "slow down");
          if (d.dummy_input == -3)  // a slow handler: the subject of the timeout cases
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          d.dummy_output = 2 * d.dummy_input;
        },
        {.blacklist = [](const bt::synapse&, const bt::request_context& c) {
          return c.hotkey == charlie().ss58_address() ? bt::verdict::deny("banned")
                                                      : bt::verdict::allow();
        }});
    ax.start();
  }
  ~running_axon() { ax.stop(); }

  static const bt::keypair& charlie() {
    static const bt::keypair k = bt::keypair::from_uri("//Charlie");
    return k;
  }
  bt::axon_info info() const {
    auto i = ax.info();
    i.ip = "127.0.0.1";
    return i;
  }
};

}  // namespace

TEST_CASE("against our axon: 200 for the ping and for Dummy", "[dendrite][axon]") {
  running_axon srv;
  bt::dendrite d(alice());
  auto ping = d.call(srv.info(), bt::synapse{}, 5.0);
  CHECK(ping.dendrite.status_code == 200);
  CHECK(ping.dendrite.status_message == "Success");
  CHECK(ping.axon.status_code == 200);
  CHECK(ping.axon.process_time.has_value());
  CHECK(ping.dendrite.process_time.has_value());

  auto r = d.call(srv.info(), dummy_query(21), 5.0);
  CHECK(r.dendrite.status_code == 200);
  CHECK(r.dummy_output == 42);
  CHECK(r.dummy_input == 21);
  CHECK(r.axon.hotkey == bob().ss58_address());
  CHECK(d.stats().connections_opened == 1);  // the second call reused the connection
}

TEST_CASE("against our axon: every error status with its message", "[dendrite][axon]") {
  running_axon srv;
  bt::dendrite d(alice());

  SECTION("401: signed for another hotkey") {
    auto target = srv.info();
    target.hotkey = running_axon::charlie().ss58_address();
    // The axon's 401 is signed by its own hotkey, not the one addressed: by default
    // (verify_responses = if_present) the dendrite reports that (PROTOCOL 5.15) ...
    auto r = d.call(target, dummy_query(1), 5.0);
    CHECK(r.dendrite.status_code == 421);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Response not authenticated: signature mismatch with the "
                                 "axon's hotkey " +
                                 target.hotkey + "; the axon at 127.0.0.1:" +
                                 std::to_string(target.port) + " answered 401 \"Not Verified") &&
                   Catch::Contains("signed by another key than " + target.hotkey +
                                   ": is the hotkey given for this axon right"));
    // ... and without the check it sees the axon's ordinary 401.
    bt::dendrite unchecked(alice(), {.verify_responses = bt::response_verification::off});
    r = unchecked.call(target, dummy_query(1), 5.0);
    CHECK(r.dendrite.status_code == 401);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Not Verified with error"));
    CHECK(r.failed_verification());
  }
  SECTION("403: blacklisted caller") {
    bt::dendrite banned(running_axon::charlie());
    auto r = banned.call(srv.info(), dummy_query(1), 5.0);
    CHECK(r.dendrite.status_code == 403);
    CHECK(r.dendrite.status_message == "Forbidden. Key is blacklisted: banned.");
    CHECK(r.is_blacklist());
  }
  SECTION("404: unknown synapse") {
    bt::error err;
    auto type = bt::make_dynamic_descriptor("Unknown", {{"x", bt::field_kind::optional}}, {}, err);
    REQUIRE_FALSE(err);
    auto r = d.call(srv.info(), bt::dynamic_synapse(type), 5.0);
    CHECK(r.dendrite.status_code == 404);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Synapse name 'Unknown' not found"));
  }
  SECTION("500: the handler throws") {
    auto r = d.call(srv.info(), dummy_query(-1), 5.0);
    CHECK(r.dendrite.status_code == 500);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Internal Server Error #"));
    CHECK_FALSE(r.dummy_output.has_value());
  }
  SECTION("a status chosen by the handler") {
    auto r = d.call(srv.info(), dummy_query(-2), 5.0);
    CHECK(r.dendrite.status_code == 429);
    CHECK(r.dendrite.status_message == "slow down");
  }
  SECTION("408: the handler outlives the timeout") {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = d.call(srv.info(), dummy_query(-3), 0.5);
    CHECK(r.dendrite.status_code == 408);
    CHECK(r.is_timeout());
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1400));
  }
  SECTION("503: nobody listens any more") {
    auto info = srv.info();
    srv.ax.stop();
    auto r = d.call(info, dummy_query(1), 2.0);
    CHECK(r.dendrite.status_code == 503);
  }
}

TEST_CASE("against our axon: concurrent calls from one dendrite", "[dendrite][axon]") {
  SECTION("an axon with the reordering-tolerant nonce rule (D3) accepts them all") {
    auto opt = bt::axon_options::loopback();
    opt.nonces = std::make_shared<bt::memory_nonce_store>(
        bt::memory_nonce_store::options{.rule = bt::nonce_rule::unique});
    bt::axon ax(bob(), opt);
    ax.attach<dummy>([](dummy& d) { d.dummy_output = 2 * d.dummy_input; });
    ax.start();
    auto info = ax.info();
    info.ip = "127.0.0.1";
    bt::dendrite d(alice(), {.threads = 2, .max_concurrency = 16});
    auto rs = d.forward(std::vector<bt::axon_info>(200, info), dummy_query(5), 10.0);
    REQUIRE(rs.size() == 200);
    std::size_t ok = 0;
    for (auto& r : rs) {
      INFO(r.dendrite.status_message.value_or("None"));
      CHECK(r.dendrite.status_code == 200);
      ok += r.dummy_output == 10;
    }
    CHECK(ok == 200);
    ax.stop();
  }
  SECTION("Python's strictly increasing rule may refuse reordered ones, only as stale") {
    auto opt = bt::axon_options::loopback();
    opt.nonces = std::make_shared<bt::memory_nonce_store>(
        bt::memory_nonce_store::options{.rule = bt::nonce_rule::strictly_increasing});
    bt::axon ax(bob(), opt);
    ax.attach<dummy>([](dummy& d) { d.dummy_output = 2 * d.dummy_input; });
    ax.start();
    auto info = ax.info();
    info.ip = "127.0.0.1";
    bt::dendrite d(alice(), {.threads = 2, .max_concurrency = 16});
    auto rs = d.forward(std::vector<bt::axon_info>(200, info), dummy_query(5), 10.0);
    REQUIRE(rs.size() == 200);
    for (auto& r : rs) {
      INFO(r.dendrite.status_message.value_or("None"));
      const bool ok = r.dendrite.status_code == 200 && r.dummy_output == 10;
      const bool stale =
          r.dendrite.status_code == 401 &&
          r.dendrite.status_message ==
              "Not Verified with error: Nonce is too old, a newer one was last processed";
      CHECK((ok || stale));
    }
    // One at a time, every call is accepted.
    bt::dendrite seq(alice(), {.max_concurrency = 1});
    auto rs2 = seq.forward(std::vector<bt::axon_info>(50, info), dummy_query(5), 10.0);
    for (auto& r : rs2) CHECK(r.dendrite.status_code == 200);
    ax.stop();
  }
}

TEST_CASE("insecure_skip_signing: unsigned requests, accepted only by a no-verification axon",
          "[dendrite][axon]") {
  bt::dendrite d(alice(), {.insecure_skip_signing = true});

  // An axon that verifies answers the unsigned request 401 (no signature header at all).
  {
    running_axon srv;
    auto r = d.call(srv.info(), bt::synapse{}, 5.0);
    CHECK(r.dendrite.status_code == 401);
    CHECK_FALSE(r.dendrite.signature.has_value());
  }
  // One with insecure_skip_verification (loopback) answers 200.
  {
    auto o = bt::axon_options::loopback();
    o.insecure_skip_verification = true;
    bt::axon ax(bob(), o);
    ax.start();
    auto info = ax.info();
    info.ip = "127.0.0.1";
    auto r = d.call(info, bt::synapse{}, 5.0);
    CHECK(r.dendrite.status_code == 200);
    CHECK_FALSE(r.dendrite.signature.has_value());
    ax.stop();
  }
  // A non-loopback axon is refused before anything is sent (TEST-NET-1 is never reached).
  bt::axon_info far;
  far.ip = "192.0.2.1";
  far.port = 8091;
  far.hotkey = bob().ss58_address();
  auto r = d.call(far, bt::synapse{}, 5.0);
  CHECK(r.dendrite.status_code == 422);
  CHECK(r.dendrite.status_message.value_or("").find("insecure_skip_signing") != std::string::npos);
  CHECK(d.stats().connections_opened == 2);  // no connect attempt for the refused one
}
