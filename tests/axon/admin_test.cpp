// The admin listener (options.admin_listen) and the axon's metrics: /metrics passes promtool and
// its counters match the requests sent; /healthz and /readyz (with the replay store's readiness);
// unknown paths and methods; and bad input on the admin port (a slow client, a huge head, many
// connections) gets its status without affecting the public port.
#include <bt/axon.hpp>
#include <bt/dendrite.hpp>
#include <bt/examples/dummy.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"
#include "support/promtool.hpp"
#include "support/python_client.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using bt::examples::dummy;
using bt::test::raw_client;

namespace {

bt::axon_options admin_options() {
  auto o = bt::axon_options::loopback();
  o.admin_listen = "127.0.0.1:0";
  o.admin_timeout = 1000ms;
  return o;
}

bt::test::reply admin_get(std::uint16_t port, const std::string& path,
                          const std::string& method = "GET") {
  raw_client c(port);
  c.send(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  return c.read(5000ms);
}

bt::axon_info target_of(const bt::axon& ax) {
  bt::axon_info t = ax.info();
  t.ip = "127.0.0.1";
  return t;
}

/// The value of the sample `series` (name and labels exactly as rendered), or -1.
double sample(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size(), text.find('\n', at + key.size())));
}

/// A replay store that accepts everything and reports what `down` says as its readiness.
struct switchable_store final : bt::nonce_store {
  std::atomic<bool> down{false};
  bt::nonce_verdict record(std::string_view, std::string_view, std::int64_t, std::int64_t,
                           std::int64_t) noexcept override {
    return down ? bt::nonce_verdict::unavailable : bt::nonce_verdict::accepted;
  }
  std::string unavailable_reason() const override {
    return down ? "connection refused (test)" : "";
  }
};

}  // namespace

TEST_CASE("admin: off by default, and a malformed admin_listen fails start") {
  bt::axon plain(bt::test::bob(), bt::axon_options::loopback());
  plain.start();
  CHECK(plain.admin_port() == 0);
  plain.stop();

  for (const char* bad : {"127.0.0.1", "localhost:9100", "127.0.0.1:70000", ":9100"}) {
    auto o = bt::axon_options::loopback();
    o.admin_listen = bad;
    bt::axon ax(bt::test::bob(), o);
    std::error_code ec;
    ax.start(ec);
    INFO(bad);
    CHECK(ec == std::errc::invalid_argument);
    CHECK_FALSE(ax.running());
  }
}

TEST_CASE("admin: /metrics passes promtool check metrics and its counters match the requests") {
  bt::axon ax(bt::test::bob(), admin_options());
  ax.attach<dummy>([](dummy& d) { d.dummy_output = d.dummy_input * 2; });
  auto& mine = ax.metrics().counter("miner_things_total", "A miner's own counter.");
  ax.start();
  REQUIRE(ax.admin_port() != 0);
  REQUIRE(ax.admin_port() != ax.port());

  bt::dendrite den(bt::test::alice());
  const int pings = 3, dummies = 4;
  for (int i = 0; i < pings; ++i) {
    bt::synapse s;
    CHECK(den.call(target_of(ax), s, 10.0).dendrite.status_code == 200);
  }
  for (int i = 0; i < dummies; ++i) {
    dummy d;
    d.dummy_input = i;
    CHECK(den.call(target_of(ax), d, 10.0).dendrite.status_code == 200);
  }
  // Two refusals: an unknown route (404, before verification) and a bad signature (401).
  CHECK(
      bt::test::roundtrip(ax.port(), "POST /Nope HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
          .status == 404);
  {
    dummy d;
    d.dummy_input = 1;
    bt::test::python_request_options po;
    po.axon_port = ax.port();
    po.uuid = bt::test::test_uuid("admin-bad-signature");
    auto parts = bt::test::python_request(d, bt::test::alice(), bt::test::bob().ss58_address(), po);
    parts.set("bt_header_dendrite_signature", "0x" + std::string(128, '0'));
    CHECK(bt::test::roundtrip(ax.port(), parts.wire(ax.port())).status == 401);
  }
  mine.get().inc(5);

  const auto r = admin_get(ax.admin_port(), "/metrics");
  REQUIRE(r.status == 200);
  CHECK(r.header("Content-Type").value_or("").rfind("text/plain; version=0.0.4", 0) == 0);
  const std::string text = "\n" + r.body;
  INFO(r.body);
  CHECK(sample(text, "bt_axon_requests_total{synapse=\"Synapse\",status=\"200\"}") == pings);
  CHECK(sample(text, "bt_axon_requests_total{synapse=\"Dummy\",status=\"200\"}") == dummies);
  CHECK(sample(text, "bt_axon_requests_total{synapse=\"-\",status=\"404\"}") == 1);
  CHECK(sample(text, "bt_axon_requests_total{synapse=\"Dummy\",status=\"401\"}") == 1);
  CHECK(sample(text, "bt_axon_rejections_total{reason=\"unknown_route\"}") == 1);
  CHECK(sample(text, "bt_axon_rejections_total{reason=\"not_verified\"}") == 1);
  CHECK(sample(text, "bt_axon_rejections_total{reason=\"queue_full\"}") == 0);
  CHECK(sample(text, "bt_axon_replay_store_operations_total{result=\"accepted\"}") ==
        pings + dummies);
  CHECK(sample(text, "bt_axon_request_duration_seconds_count{synapse=\"Dummy\"}") == dummies + 1);
  CHECK(sample(text, "bt_axon_verification_duration_seconds_count{synapse=\"Dummy\"}") ==
        dummies + 1);
  CHECK(sample(text, "bt_axon_handler_duration_seconds_count{synapse=\"Dummy\"}") == dummies);
  CHECK(sample(text, "bt_axon_queue_wait_seconds_count{synapse=\"Dummy\"}") == dummies);
  CHECK(sample(text, "bt_axon_workers") == 2);
  CHECK(sample(text, "bt_axon_open_connections") >= 0);
  CHECK(text.find("bt_axon_build_info{bittensor_version=\"") != std::string::npos);
  CHECK(sample(text, "miner_things_total") == 5);

  const auto check = bt::test::promtool_check_metrics(r.body);
  INFO(check.output);
  CHECK(check.exit_code == 0);
  CHECK(check.output.empty());

  // The dendrite's side: its calls by synapse and status, in its own registry.
  {
    bt::synapse s;
    bt::axon_info nowhere = target_of(ax);
    nowhere.port = 1;  // refused: the dendrite's own failure status
    (void)den.call(nowhere, s, 2.0);
  }
  const std::string dtext = "\n" + den.metrics().render();
  INFO(dtext);
  CHECK(sample(dtext, "bt_dendrite_calls_total{synapse=\"Synapse\",status=\"200\"}") == pings);
  CHECK(sample(dtext, "bt_dendrite_calls_total{synapse=\"Dummy\",status=\"200\"}") == dummies);
  CHECK(
      sample(dtext, "bt_dendrite_call_duration_seconds_count{synapse=\"Dummy\",status=\"200\"}") ==
      dummies);
  CHECK(dtext.find("bt_dendrite_calls_total{synapse=\"Synapse\",status=\"503\"} 1") !=
        std::string::npos);
  const auto dcheck = bt::test::promtool_check_metrics(dtext.substr(1));
  INFO(dcheck.output);
  CHECK(dcheck.exit_code == 0);
  ax.stop();
}

TEST_CASE("admin: /healthz, /readyz with the replay store's readiness, 404 and 405") {
  auto store = std::make_shared<switchable_store>();
  auto o = admin_options();
  o.nonces = store;
  bt::axon ax(bt::test::bob(), o);
  ax.start();
  const auto port = ax.admin_port();

  auto h = admin_get(port, "/healthz");
  CHECK(h.status == 200);
  CHECK(h.body == "ok\n");
  auto ready = admin_get(port, "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "ready\n");

  store->down = true;
  ready = admin_get(port, "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body == "not ready: replay store: connection refused (test)\n");
  CHECK(admin_get(port, "/healthz").status == 200);  // alive, just not ready
  store->down = false;
  CHECK(admin_get(port, "/readyz").status == 200);  // back without a restart

  CHECK(admin_get(port, "/").status == 404);
  CHECK(admin_get(port, "/Synapse").status == 404);  // the public routes are not served here
  const auto post = admin_get(port, "/metrics", "POST");
  CHECK(post.status == 405);
  CHECK(post.header("Allow").value_or("") == "GET, HEAD");
  {
    // HEAD: the status and Content-Length of a GET, and no body (read raw, to the close).
    raw_client c(port);
    c.send("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string raw;
    std::array<char, 1024> buf;
    boost::system::error_code ec;
    c.stream().expires_after(5s);
    for (;;) {
      const std::size_t n = c.stream().read_some(boost::asio::buffer(buf), ec);
      raw.append(buf.data(), n);
      if (ec) break;
    }
    CHECK(raw.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(raw.find("Content-Length: 3\r\n") != std::string::npos);
    CHECK(raw.size() >= 4);
    CHECK(raw.substr(raw.size() - 4) == "\r\n\r\n");  // nothing after the head
  }
  ax.stop();
}

TEST_CASE("admin: slow and huge requests get 408 and 431, and the public port keeps serving") {
  auto o = admin_options();
  o.admin_max_connections = 8;
  bt::axon ax(bt::test::bob(), o);
  ax.start();
  const auto admin = ax.admin_port();

  // A slow client: a partial head, then nothing.
  raw_client slow(admin);
  slow.send("GET /metrics HTTP/1.1\r\nHost: x\r\n");
  // A huge head: over admin_max_header_bytes (8 KiB by default).
  raw_client huge(admin);
  huge.send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Fill: " + std::string(64 * 1024, 'a') +
            "\r\n\r\n");
  // More connections than admin_max_connections, all idle.
  std::vector<std::unique_ptr<raw_client>> idle;
  for (int i = 0; i < 12; ++i) idle.push_back(std::make_unique<raw_client>(admin));

  // Meanwhile the public port answers every request.
  bt::dendrite den(bt::test::alice());
  for (int i = 0; i < 10; ++i) {
    bt::synapse s;
    CHECK(den.call(target_of(ax), s, 5.0).dendrite.status_code == 200);
  }

  const auto big = huge.read(5000ms);
  CHECK(big.status == 431);
  const auto late = slow.read(5000ms);  // admin_timeout is 1 s
  CHECK(late.status == 408);
  // The connections beyond the cap were closed at accept.
  int closed = 0;
  for (auto& c : idle)
    if (c->closed_by_peer(3000ms)) ++closed;
  CHECK(closed >= 4);
  // And the admin port serves again once the slow ones are gone.
  idle.clear();
  // (The listener notices the closed connections asynchronously: retry for a bounded time.)
  int health = 0;
  for (int i = 0; i < 50 && health != 200; ++i) {
    try {
      health = admin_get(admin, "/healthz").status;
    } catch (const std::exception&) {
      std::this_thread::sleep_for(100ms);
    }
  }
  CHECK(health == 200);
  bt::synapse s;
  CHECK(den.call(target_of(ax), s, 5.0).dendrite.status_code == 200);
  ax.stop();
}
