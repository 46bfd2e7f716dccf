// bt::rpc_client against the loopback fake subtensor (tests/support/fake_subtensor.hpp), and the
// endpoint flags (endpoint.hpp).
#include <bt/chain/endpoint.hpp>
#include <bt/chain/rpc_client.hpp>

#include "support/fake_subtensor.hpp"
#include "support/vectors.hpp"
#include "support/wait.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

const std::string block_hash = "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0";

std::string session_path() {
  return bt::test::vectors_dir() + "/chain/session_sn1_block6852690.json";
}

bt::endpoint ep_of(const bt::test::fake_subtensor& f) {
  auto ep = bt::parse_endpoint(f.url());
  REQUIRE(ep);
  return *ep;
}

struct outcome {
  bt::error error;
  bt::json result;
};

std::future<outcome> start(bt::rpc_client& c, std::string method, bt::json params) {
  auto p = std::make_shared<std::promise<outcome>>();
  auto f = p->get_future();
  c.async_call(std::move(method), std::move(params), [p](bt::error e, bt::json r) {
    p->set_value({std::move(e), std::move(r)});
  });
  return f;
}

/// Waits for an outcome, failing the test (instead of hanging) after a generous bound.
outcome wait(std::future<outcome>& f, std::chrono::seconds bound = 20s) {
  REQUIRE(f.wait_for(bound) == std::future_status::ready);
  return f.get();
}

}  // namespace

TEST_CASE("rpc_client: answers a recorded call and matches params with or without 0x", "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  bt::rpc_client c(ep_of(fake));
  CHECK(c.call("chain_getHead", bt::json::array()) == block_hash);
  CHECK(c.call("chain_getBlockHash", {6852690}) == block_hash);
  const bt::json header = c.call("chain_getHeader", {block_hash});
  CHECK(header.at("number") == "0x689052");  // 6852690
  // The recording has the argument as "0100"; a client that sends "0x0100" gets the same answer.
  const bt::json neurons =
      c.call("state_call", {"NeuronInfoRuntimeApi_get_neurons_lite", "0x0100", block_hash});
  REQUIRE(neurons.is_string());
  CHECK(neurons.get<std::string>().size() > 100'000);
  CHECK(c.stats().connections_opened == 1);
}

TEST_CASE("rpc_client: many requests in flight on one connection, answered out of order", "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  // The first request's answer comes last: the client must match answers by id.
  fake.set_fault("chain_getHeader", bt::test::parse_fake_fault("delay:300"));
  bt::rpc_client c(ep_of(fake));
  std::vector<std::future<outcome>> slow, fast;
  slow.push_back(start(c, "chain_getHeader", {block_hash}));
  for (int i = 0; i < 40; ++i) {
    fast.push_back(i % 2 ? start(c, "chain_getHead", bt::json::array())
                         : start(c, "chain_getBlockHash", {6852690}));
  }
  for (auto& f : fast) {
    auto o = wait(f);
    CHECK_FALSE(o.error);
    CHECK(o.result == block_hash);
  }
  auto h = wait(slow[0]);
  CHECK_FALSE(h.error);
  CHECK(h.result.at("number") == "0x689052");
  CHECK(fake.connections() == 1);
  CHECK(fake.max_outstanding() >= 2);  // the slow one was still open when others arrived
  CHECK(c.stats().connections_opened == 1);
}

TEST_CASE("rpc_client: a JSON-RPC error object carries its code and message", "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  bt::rpc_client c(ep_of(fake));
  auto f = start(c, "no_such_method", bt::json::array());
  auto o = wait(f);
  CHECK(o.error.code == bt::chain_errc::rpc_error);
  CHECK(o.error.what == "no_such_method");
  CHECK(o.error.detail.find("-32601") != std::string::npos);
  CHECK(o.result.at("code") == -32601);
  CHECK(o.result.at("message") == "Method not found");
  // The blocking form throws the same, with the error object.
  try {
    c.call("no_such_method", bt::json::array());
    FAIL("no exception");
  } catch (const bt::rpc_call_error& e) {
    CHECK(e.code() == bt::chain_errc::rpc_error);
    CHECK(e.rpc_error_object().at("code") == -32601);
    CHECK(std::string(e.what()).find("Method not found") != std::string::npos);
  }
  // A recorded method with unrecorded params is an error too, and the connection stays usable.
  auto g = start(c, "chain_getBlockHash", {1});
  CHECK(wait(g).error.code == bt::chain_errc::rpc_error);
  CHECK(c.call("chain_getHead", bt::json::array()) == block_hash);
  CHECK(c.stats().connections_opened == 1);
}

TEST_CASE(
    "rpc_client: a connection closed mid-response fails every request in flight, then reconnects",
    "[rpc]") {
  // Two methods that may act (author_*): neither is sent again.
  bt::test::fake_subtensor fake(session_path());
  fake.set_any_response("author_submitExtrinsic", {{"result", "0x01"}});
  fake.set_any_response("author_pendingExtrinsics", {{"result", bt::json::array()}});
  fake.set_fault("author_submitExtrinsic", bt::test::parse_fake_fault("delay:2000"));
  fake.set_fault("author_pendingExtrinsics", bt::test::parse_fake_fault("close"));
  bt::rpc_client c(ep_of(fake));
  auto pending = start(c, "author_submitExtrinsic", {"0x00"});  // in flight when the close comes
  REQUIRE(bt::test::poll_until([&] { return fake.requests("author_submitExtrinsic") == 1; }));
  auto cut = start(c, "author_pendingExtrinsics", bt::json::array());
  auto o = wait(cut);
  CHECK(o.error.code == bt::chain_errc::closed);
  CHECK(o.error.what == "author_pendingExtrinsics");
  CHECK(o.error.detail.find(fake.url()) != std::string::npos);
  auto p = wait(pending);
  CHECK(p.error.code == bt::chain_errc::closed);
  CHECK(p.error.what == "author_submitExtrinsic");
  CHECK(fake.requests("author_submitExtrinsic") == 1);  // never sent twice
  CHECK(fake.requests("author_pendingExtrinsics") == 1);
  CHECK(c.stats().requests_sent_again == 0);
  // The next request opens a new connection.
  fake.clear_faults();
  CHECK(c.call("chain_getHead", bt::json::array()) == block_hash);
  CHECK(fake.connections() == 2);
  CHECK(c.stats().connections_opened == 2);
}

TEST_CASE("rpc_client: reads whose connection is lost are sent again, once, on the next one",
          "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  SECTION("a node that closes the connection on receipt: answered on the second connection") {
    bt::test::fake_fault drop = bt::test::parse_fake_fault("drop");
    drop.times = 1;
    fake.set_fault("chain_getHead", drop);
    bt::rpc_client c(ep_of(fake));
    CHECK(c.call("chain_getHead", bt::json::array()) == block_hash);
    CHECK(fake.requests("chain_getHead") == 2);
    CHECK(fake.connections() == 2);
    CHECK(c.stats().requests_sent_again == 1);
  }
  SECTION("every read in flight on the lost connection, each answered") {
    fake.set_fault("chain_getHeader", bt::test::parse_fake_fault("delay:500"));
    bt::test::fake_fault close = bt::test::parse_fake_fault("close");
    close.times = 1;
    fake.set_fault("chain_getHead", close);
    bt::rpc_client c(ep_of(fake));
    auto header = start(c, "chain_getHeader", {block_hash});
    REQUIRE(bt::test::poll_until([&] { return fake.requests("chain_getHeader") == 1; }));
    auto head = start(c, "chain_getHead", bt::json::array());
    auto h = wait(head);
    CHECK_FALSE(h.error);
    CHECK(h.result == block_hash);
    auto hd = wait(header);
    CHECK_FALSE(hd.error);
    CHECK(hd.result.at("number") == "0x689052");
    CHECK(fake.requests("chain_getHeader") == 2);
    CHECK(c.stats().requests_sent_again == 2);
    CHECK(fake.connections() == 2);
  }
  SECTION("only once: a read lost twice fails with closed") {
    fake.set_fault("chain_getHead", bt::test::parse_fake_fault("drop"));
    bt::rpc_client c(ep_of(fake));
    auto f = start(c, "chain_getHead", bt::json::array());
    auto o = wait(f);
    CHECK(o.error.code == bt::chain_errc::closed);
    CHECK(o.error.what == "chain_getHead");
    CHECK(fake.requests("chain_getHead") == 2);
    CHECK(c.stats().requests_sent_again == 1);
  }
  SECTION("a submission is not sent again") {
    fake.set_any_response("author_submitExtrinsic", {{"result", "0x01"}});
    fake.set_fault("author_submitExtrinsic", bt::test::parse_fake_fault("drop"));
    bt::rpc_client c(ep_of(fake));
    auto f = start(c, "author_submitExtrinsic", {"0x00"});
    CHECK(wait(f).error.code == bt::chain_errc::closed);
    CHECK(fake.requests("author_submitExtrinsic") == 1);
    CHECK(c.stats().requests_sent_again == 0);
  }
  SECTION("a node restarted while the client idled: the next read is answered") {
    bt::rpc_client c(ep_of(fake));
    CHECK(c.call("chain_getHead", bt::json::array()) == block_hash);
    fake.drop_connections();
    // Whether the client notices the close before this request or only when it meets the closed
    // socket, the read is answered, on a second connection.
    CHECK(c.call("chain_getBlockHash", {6852690}) == block_hash);
    CHECK(fake.connections() == 2);
    CHECK(c.stats().connections_opened == 2);
  }
}

TEST_CASE("rpc_client: a frame over the size limit is refused and the connection closed", "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  SECTION("the recorded get_neurons_lite answer (373 KB) over a 64 KiB limit") {
    bt::rpc_client c(ep_of(fake), {.max_frame_bytes = 64u << 10});
    auto f = start(c, "state_call", {"NeuronInfoRuntimeApi_get_neurons_lite", "0100", block_hash});
    auto o = wait(f);
    CHECK(o.error.code == bt::chain_errc::frame_too_large);
    CHECK(o.error.detail.find("65536") != std::string::npos);
    // Small answers still work on a new connection.
    CHECK(c.call("chain_getHead", bt::json::array()) == block_hash);
  }
  SECTION("a scripted oversized frame") {
    fake.set_fault("chain_getHead", bt::test::parse_fake_fault("oversized:300000"));
    bt::rpc_client c(ep_of(fake), {.max_frame_bytes = 200'000});
    auto f = start(c, "chain_getHead", bt::json::array());
    CHECK(wait(f).error.code == bt::chain_errc::frame_too_large);
  }
  SECTION("the same frame under the limit is read") {
    fake.set_fault("chain_getHead", bt::test::parse_fake_fault("oversized:300000"));
    bt::rpc_client c(ep_of(fake), {.max_frame_bytes = 400'000});
    auto f = start(c, "chain_getHead", bt::json::array());
    auto o = wait(f);
    CHECK_FALSE(o.error);
    CHECK(o.result.get<std::string>().size() > 250'000);
  }
}

TEST_CASE("rpc_client: a malformed frame fails the requests in flight with malformed_frame",
          "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  fake.set_fault("chain_getHead", bt::test::parse_fake_fault("malformed"));
  bt::rpc_client c(ep_of(fake));
  auto f = start(c, "chain_getHead", bt::json::array());
  auto o = wait(f);
  CHECK(o.error.code == bt::chain_errc::malformed_frame);
  CHECK(o.error.detail.find("not JSON") != std::string::npos);
  fake.clear_faults();
  CHECK(c.call("chain_getHead", bt::json::array()) == block_hash);
}

TEST_CASE("rpc_client: a slow answer past the request timeout is a timeout, not a hang", "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  fake.set_fault("chain_getHead", bt::test::parse_fake_fault("delay:3000"));
  bt::rpc_client c(ep_of(fake), {.request_timeout = 200ms});
  const auto t0 = std::chrono::steady_clock::now();
  auto f = start(c, "chain_getHead", bt::json::array());
  auto o = wait(f, 10s);
  CHECK(o.error.code == bt::chain_errc::timeout);
  CHECK(o.error.what == "chain_getHead");
  CHECK(std::chrono::steady_clock::now() - t0 < 2500ms);  // well before the answer would come
  // Other requests on the same connection are unaffected.
  CHECK(c.call("chain_getBlockHash", {6852690}) == block_hash);
}

TEST_CASE("rpc_client: no server: bounded attempts with backoff, then closed naming the endpoint",
          "[rpc]") {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = a.local_endpoint().port();
  a.close();  // nothing listens there now
  auto ep = bt::parse_endpoint("ws://127.0.0.1:" + std::to_string(port));
  REQUIRE(ep);
  bt::rpc_client c(*ep, {.max_connect_attempts = 3, .backoff_initial = 20ms, .backoff_max = 50ms});
  auto f = start(c, "chain_getHead", bt::json::array());
  auto o = wait(f);
  CHECK(o.error.code == bt::chain_errc::closed);
  CHECK(o.error.detail.find("cannot connect to ws://127.0.0.1:" + std::to_string(port)) !=
        std::string::npos);
  CHECK(o.error.detail.find("3 attempts") != std::string::npos);
}

TEST_CASE("rpc_client: destroying the client completes the requests in flight with closed",
          "[rpc]") {
  bt::test::fake_subtensor fake(session_path());
  fake.set_fault("chain_getHead", bt::test::parse_fake_fault("delay:5000"));
  std::future<outcome> f;
  {
    bt::rpc_client c(ep_of(fake));
    f = start(c, "chain_getHead", bt::json::array());
    REQUIRE(bt::test::poll_until([&] { return fake.requests("chain_getHead") == 1; }));
  }
  auto o = wait(f, 3s);
  CHECK(o.error.code == bt::chain_errc::closed);
}

// A self-signed certificate for 127.0.0.1 and its key, made for this test only
// (openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -subj /CN=127.0.0.1
// -addext subjectAltName=IP:127.0.0.1): no CA in the system store signed it.
constexpr const char* test_cert = R"(-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUQrdR4OTtbgTjAu8Y5ra9bmfpOUQwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwMzE5NTQ1OFoYDzIxMjYxMTA5
MTk1NDU4WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAREY4d+lHt0xxvz109s502EPHIEZ+befk7hWOc2pDmWqDHlUOZQHcXC
agF9dwRIN7GtPKgPuHLOLgZ0zCRFBcmao2QwYjAdBgNVHQ4EFgQUm5LzKOtSFHl7
tfiID3Jv9Gpkl3MwHwYDVR0jBBgwFoAUm5LzKOtSFHl7tfiID3Jv9Gpkl3MwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IHZKXmijSNPBecFaJE2JwU421WVuMiCV/njEAkY+d0teAiEA0vwkBTfOaUYgtwcd
gClNVPhaPtO4jXh/jwepIIczLmU=
-----END CERTIFICATE-----
)";
constexpr const char* test_key = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLZfcQMxU0QTbyy86
NIdzW17o1gME+u9J+YivYeUCPiOhRANCAAREY4d+lHt0xxvz109s502EPHIEZ+be
fk7hWOc2pDmWqDHlUOZQHcXCagF9dwRIN7GtPKgPuHLOLgZ0zCRFBcma
-----END PRIVATE KEY-----
)";

TEST_CASE("rpc_client: wss:// refuses a certificate no trusted CA signed", "[rpc]") {
  namespace net = boost::asio;
  net::io_context ioc;
  net::ssl::context server_ctx(net::ssl::context::tls_server);
  server_ctx.use_certificate_chain(net::buffer(std::string_view(test_cert)));
  server_ctx.use_private_key(net::buffer(std::string_view(test_key)), net::ssl::context::pem);
  net::ip::tcp::acceptor acceptor(ioc, {net::ip::make_address("127.0.0.1"), 0});
  const auto port = acceptor.local_endpoint().port();
  // One TLS server handshake; the client aborts it.
  std::thread server([&] {
    boost::system::error_code ec;
    net::ssl::stream<net::ip::tcp::socket> s(ioc, server_ctx);
    acceptor.accept(s.next_layer(), ec);
    if (!ec) s.handshake(net::ssl::stream_base::server, ec);
  });
  auto ep = bt::parse_endpoint("wss://127.0.0.1:" + std::to_string(port));
  REQUIRE(ep);
  outcome o;
  {
    bt::rpc_client c(*ep, {.request_timeout = 10s, .max_connect_attempts = 1});
    auto f = start(c, "chain_getHead", bt::json::array());
    o = wait(f);
  }
  server.join();
  CHECK(o.error.code == bt::chain_errc::closed);
  CHECK(o.error.detail.find("TLS handshake") != std::string::npos);
  CHECK(o.error.detail.find("certificate verify failed") != std::string::npos);
}

TEST_CASE("endpoint: URLs, network names and the precedence of the flags", "[rpc][endpoint]") {
  auto ep = bt::parse_endpoint("wss://entrypoint-finney.opentensor.ai:443");
  REQUIRE(ep);
  CHECK(ep->tls);
  CHECK(ep->host == "entrypoint-finney.opentensor.ai");
  CHECK(ep->port == 443);
  CHECK(ep->target == "/");
  CHECK(ep->host_header() == "entrypoint-finney.opentensor.ai");
  ep = bt::parse_endpoint("ws://127.0.0.1:9944/rpc?x=1");
  REQUIRE(ep);
  CHECK_FALSE(ep->tls);
  CHECK(ep->port == 9944);
  CHECK(ep->target == "/rpc?x=1");
  CHECK(ep->host_header() == "127.0.0.1:9944");
  ep = bt::parse_endpoint("WS://[::1]");
  REQUIRE(ep);
  CHECK(ep->host == "::1");
  CHECK(ep->port == 80);
  CHECK(ep->url() == "ws://[::1]:80/");
  ep = bt::parse_endpoint("wss://[2001:db8::1]:9944?q");
  REQUIRE(ep);
  CHECK(ep->host == "2001:db8::1");
  CHECK(ep->target == "/?q");
  CHECK(ep->host_header() == "[2001:db8::1]:9944");

  for (const char* bad :
       {"", "127.0.0.1:9944", "http://127.0.0.1:9944", "ws://", "ws://:9944", "ws://host:0",
        "ws://host:65536", "ws://host:99x", "ws://host:", "ws://user@host", "ws://host/#frag",
        "ws://ho st", "ws://[::1", "ws://[zz]:1", "ws://host\n", "ws://host:99x/", "ws://h%41",
        "ws://[v1.x]"}) {
    INFO(bad);
    bt::error err;
    CHECK_FALSE(bt::parse_endpoint(bad, &err));
    CHECK(err.code == bt::chain_errc::bad_endpoint);
    CHECK_FALSE(err.detail.empty());
  }

  CHECK(bt::network_url("finney") == "wss://entrypoint-finney.opentensor.ai:443");
  CHECK(bt::network_url("test") == "wss://test.finney.opentensor.ai:443");
  CHECK(bt::network_url("local") == "ws://127.0.0.1:9944");
  CHECK_FALSE(bt::network_url("mainnet"));

  // --subtensor.chain_endpoint wins over --subtensor.network and the environment.
  auto r = bt::resolve_endpoint("ws://10.0.0.1:1", "local", "ws://10.0.0.2:2");
  REQUIRE(r);
  CHECK(r->host == "10.0.0.1");
  r = bt::resolve_endpoint("", "local", "ws://10.0.0.2:2");
  REQUIRE(r);
  CHECK(r->url() == "ws://127.0.0.1:9944/");
  r = bt::resolve_endpoint("", "", "ws://10.0.0.2:2");
  REQUIRE(r);
  CHECK(r->host == "10.0.0.2");
  r = bt::resolve_endpoint("", "", nullptr);
  REQUIRE(r);
  CHECK(r->host == "entrypoint-finney.opentensor.ai");
  r = bt::resolve_endpoint("", "ws://10.0.0.3:3", nullptr);  // a URL as the network, as bittensor
  REQUIRE(r);
  CHECK(r->host == "10.0.0.3");

  bt::error err;
  CHECK_FALSE(bt::resolve_endpoint("", "mainnet", nullptr, &err));
  CHECK(err.code == bt::chain_errc::bad_endpoint);
  CHECK(err.what == "--subtensor.network");
  CHECK(err.detail.find("mainnet") != std::string::npos);
  CHECK_FALSE(bt::resolve_endpoint("", "", "http://x", &err));
  CHECK(err.what == "BT_SUBTENSOR_CHAIN_ENDPOINT");
  CHECK_FALSE(bt::resolve_endpoint("tcp://x", "", nullptr, &err));
  CHECK(err.what == "--subtensor.chain_endpoint");
}
