// The axon behind a load balancer, on loopback sockets: PROXY protocol v1/v2 headers written by
// hand replace the peer's address in request_context, the TerminalInfo and IP-based policy;
// untrusted, malformed and missing headers close the connection; SO_REUSEPORT lets two axons
// share one port.
#include <bt/axon.hpp>

#include <bt/examples/dummy.hpp>
#include <bt/json.hpp>
#include <bt/proxy_protocol.hpp>

#include <catch2/catch.hpp>

#include "memory_session.hpp"   // axon_access
#include "state/axon_impl.hpp"  // the rejection counters
#include "support/dev_keys.hpp"
#include "support/dummy_request.hpp"
#include "support/proxy_bytes.hpp"
#include "support/python_client.hpp"
#include "support/wait.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <system_error>

using namespace std::chrono_literals;
using bt::examples::dummy;
using bt::test::alice;
using bt::test::bob;
using bt::test::raw_client;
namespace pp = bt::proxy_protocol;
using bt::test::be16;
using bt::test::proxy_v2_signature;

namespace {

struct seen_caller {
  std::mutex m;
  std::string ip;
  std::uint16_t port = 0;
  int calls = 0;
};

/// An axon for //Bob on 127.0.0.1 with the PROXY protocol required from `trusted`; its Dummy
/// handler records the caller's address, and its blacklist refuses 198.51.100.9 by address.
std::unique_ptr<bt::axon> proxied_axon(seen_caller& seen,
                                       std::vector<std::string> trusted = {"127.0.0.1/32"},
                                       bool proxy = true) {
  bt::axon_options o = bt::axon_options::loopback();
  o.proxy_protocol = proxy;
  o.trusted_proxies = std::move(trusted);
  o.proxy_header_timeout = 2s;
  auto ax = std::make_unique<bt::axon>(bob(), o);
  bt::route_options policy;
  policy.blacklist = [](const bt::synapse&, const bt::request_context& ctx) {
    return ctx.ip == "198.51.100.9" ? bt::verdict::deny("address denied") : bt::verdict::allow();
  };
  ax->attach<dummy>(
      [&seen](dummy& s, const bt::request_context& ctx) {
        std::lock_guard lk(seen.m);
        seen.ip = std::string(ctx.ip);
        seen.port = ctx.port;
        ++seen.calls;
        s.dummy_output = s.dummy_input * 2;
      },
      std::move(policy));
  return ax;
}

std::string dummy_wire(const bt::axon& ax, std::int64_t input = 21) {
  return bt::test::dummy_request(ax.port(), input).wire(ax.port());
}

/// PROXY v2, TCP over IPv6, [2001:db8::42]:40000 -> [::1]:8091, with one TLV.
std::string v2_ipv6_header() {
  std::string src(16, '\0'), dst(16, '\0');
  src[0] = 0x20, src[1] = 0x01, src[2] = 0x0d, src[3] = static_cast<char>(0xb8), src[15] = 0x42;
  dst[15] = 0x01;
  const std::string tlv = std::string("\x02", 1) + be16(11) + "example.org";
  const std::string payload = src + dst + be16(40000) + be16(8091) + tlv;
  return proxy_v2_signature + "\x21\x21" + be16(static_cast<unsigned>(payload.size())) + payload;
}

std::uint64_t rejected(bt::axon& ax, pp::reject_reason why) {
  return bt::detail::axon_access::of(ax).proxy_rejections[static_cast<std::size_t>(why)].load();
}

}  // namespace

TEST_CASE("proxy protocol v1: the caller's address reaches request_context and the TerminalInfo",
          "[axon][proxy]") {
  seen_caller seen;
  auto ax = proxied_axon(seen);
  ax->start();
  raw_client c(ax->port());
  c.send("PROXY TCP4 203.0.113.7 127.0.0.1 51234 8091\r\n" + dummy_wire(*ax));
  REQUIRE(c.read().status == 200);
  {
    std::lock_guard lk(seen.m);
    CHECK(seen.ip == "203.0.113.7");
    CHECK(seen.port == 51234);
  }
  // Keep-alive: the next request on the connection carries no header and keeps the address.
  c.send(dummy_wire(*ax, 5));
  REQUIRE(c.read().status == 200);
  {
    std::lock_guard lk(seen.m);
    CHECK(seen.calls == 2);
    CHECK(seen.ip == "203.0.113.7");
  }
  // IP-based policy sees the real caller; the error answer echoes it as the dendrite's ip/port.
  raw_client d(ax->port());
  d.send("PROXY TCP4 198.51.100.9 127.0.0.1 6000 8091\r\n" + dummy_wire(*ax));
  const auto r = d.read();
  CHECK(r.status == 403);
  CHECK(r.header("bt_header_dendrite_ip") == std::optional<std::string>("198.51.100.9"));
  CHECK(r.header("bt_header_dendrite_port") == std::optional<std::string>("6000"));
  // The header may also arrive in pieces, and UNKNOWN keeps the proxy's own address.
  raw_client e(ax->port());
  e.send("PROXY UNK");
  e.send("NOWN\r\n" + dummy_wire(*ax));
  REQUIRE(e.read().status == 200);
  std::lock_guard lk(seen.m);
  CHECK(seen.ip == "127.0.0.1");
}

TEST_CASE("proxy protocol v2: IPv6 caller with a TLV, and LOCAL keeps the proxy's address",
          "[axon][proxy]") {
  seen_caller seen;
  auto ax = proxied_axon(seen);
  ax->start();
  raw_client c(ax->port());
  c.send(v2_ipv6_header() + dummy_wire(*ax));
  REQUIRE(c.read().status == 200);
  {
    std::lock_guard lk(seen.m);
    CHECK(seen.ip == "2001:db8::42");
    CHECK(seen.port == 40000);
  }
  raw_client l(ax->port());
  l.send(proxy_v2_signature + "\x20" + std::string(1, '\0') + be16(0) + dummy_wire(*ax));
  REQUIRE(l.read().status == 200);
  std::lock_guard lk(seen.m);
  CHECK(seen.ip == "127.0.0.1");
  CHECK(seen.calls == 2);
}

TEST_CASE("proxy protocol: untrusted, malformed, missing and late headers close the connection",
          "[axon][proxy]") {
  {
    seen_caller seen;
    auto ax = proxied_axon(seen, {"10.0.0.0/8", "::1/128"});  // 127.0.0.1 is not trusted
    ax->start();
    raw_client c(ax->port());
    c.send("PROXY TCP4 203.0.113.7 127.0.0.1 51234 8091\r\n" + dummy_wire(*ax));
    CHECK(c.closed_by_peer());
    CHECK(rejected(*ax, pp::reject_reason::untrusted_source) == 1);
    std::lock_guard lk(seen.m);
    CHECK(seen.calls == 0);
  }
  seen_caller seen;
  auto ax = proxied_axon(seen);
  ax->start();
  {  // malformed: a port out of range
    raw_client c(ax->port());
    c.send("PROXY TCP4 203.0.113.7 127.0.0.1 99999 8091\r\n" + dummy_wire(*ax));
    CHECK(c.closed_by_peer());
    CHECK(rejected(*ax, pp::reject_reason::malformed) == 1);
  }
  {  // malformed: a v2 header claiming more than the cap
    raw_client c(ax->port());
    c.send(proxy_v2_signature + "\x21\x11" + be16(60000));
    CHECK(c.closed_by_peer());
    CHECK(rejected(*ax, pp::reject_reason::malformed) == 2);
  }
  {  // missing: a plain request from the trusted proxy
    raw_client c(ax->port());
    c.send(dummy_wire(*ax));
    CHECK(c.closed_by_peer());
    CHECK(rejected(*ax, pp::reject_reason::missing) == 1);
  }
  {  // incomplete: a header that never ends is cut at proxy_header_timeout (2 s here)
    raw_client c(ax->port());
    c.send("PROXY TCP4 203.0.113.7");
    CHECK(c.closed_by_peer(10s));
    // The stream's deadline closes the socket before the coroutine resumes and counts: wait.
    CHECK(bt::test::poll_until([&] { return rejected(*ax, pp::reject_reason::incomplete) == 1; },
                               5s));
  }
  std::lock_guard lk(seen.m);
  CHECK(seen.calls == 0);
}

TEST_CASE("proxy protocol off: nothing is read ahead, a PROXY line is just a bad request",
          "[axon][proxy]") {
  seen_caller seen;
  auto ax = proxied_axon(seen, {}, false);
  ax->start();
  CHECK(bt::test::roundtrip(ax->port(), dummy_wire(*ax)).status == 200);
  {
    std::lock_guard lk(seen.m);
    CHECK(seen.ip == "127.0.0.1");
  }
  const auto r = bt::test::roundtrip(
      ax->port(), "PROXY TCP4 203.0.113.7 127.0.0.1 51234 8091\r\n" + dummy_wire(*ax));
  CHECK(r.status == 400);
}

TEST_CASE("proxy protocol: bad trusted_proxies are refused with a clear error", "[axon][proxy]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.proxy_protocol = true;
  o.trusted_proxies = {"127.0.0.1/32", "10.0.0.1/8"};
  CHECK_THROWS_WITH(bt::axon(bob(), o),
                    "bt::axon: trusted_proxies: '10.0.0.1/8' is not a CIDR block: host bits are "
                    "set below /8 (did you mean 10.0.0.0/8?)");
  o.trusted_proxies.clear();
  bt::axon ax(bob(), o);
  std::error_code ec;
  ax.start(ec);
  CHECK(ec == std::errc::invalid_argument);
  CHECK_FALSE(ax.running());
}

TEST_CASE("reuse_port: two axons share one port and both serve", "[axon][proxy]") {
  seen_caller first_seen, second_seen;
  bt::axon_options o = bt::axon_options::loopback();
  o.reuse_port = true;
  auto first = std::make_unique<bt::axon>(bob(), o);
  first->attach<dummy>([&](dummy& s, const bt::request_context&) {
    std::lock_guard lk(first_seen.m);
    ++first_seen.calls;
    s.dummy_output = 1;
  });
  first->start();
  const std::uint16_t port = first->port();

  // Without the option on the second socket the port is taken.
  bt::axon_options plain = bt::axon_options::loopback();
  plain.port = port;
  bt::axon refused(bob(), plain);
  std::error_code ec;
  refused.start(ec);
  CHECK(ec);

  o.port = port;
  auto second = std::make_unique<bt::axon>(bob(), o);
  second->attach<dummy>([&](dummy& s, const bt::request_context&) {
    std::lock_guard lk(second_seen.m);
    ++second_seen.calls;
    s.dummy_output = 2;
  });
  second->start();
  REQUIRE(second->port() == port);

  // The kernel spreads connections by a hash of their addresses: new connections reach both
  // soon (each one lands on the first with probability 1/2; 200 tries bound the loop).
  int ones = 0, twos = 0;
  for (int i = 0; i < 200 && (ones == 0 || twos == 0); ++i) {
    dummy d;
    d.dummy_input = i;
    bt::test::python_request_options po;
    po.axon_port = port;
    const auto r = bt::test::roundtrip(
        port, bt::test::python_request(d, alice(), bob().ss58_address(), po).wire(port, false));
    REQUIRE(r.status == 200);
    (bt::json::parse(r.body).at("dummy_output").get<int>() == 1 ? ones : twos)++;
  }
  CHECK(ones > 0);
  CHECK(twos > 0);
  std::lock_guard lk1(first_seen.m);
  std::lock_guard lk2(second_seen.m);
  CHECK(first_seen.calls == ones);
  CHECK(second_seen.calls == twos);
}
