// The fan-out's signing pool (dendrite_options::signing_threads): with several I/O threads and
// several signing threads, every request of a fan-out carries a valid signature over its own
// nonce (the responder verifies each one), and a fan-out cancelled, or a dendrite destroyed,
// while signatures are in the pool ends every call cleanly.
#include <bt/dendrite.hpp>

#include <bt/body_hash.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>

#include "fault_server.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <thread>

using bt::examples::dummy;
using namespace bt::test;

namespace {

/// What the verifying responder saw: signatures that verified, ones that did not, and the
/// nonces (each request must have its own).
struct signature_log {
  std::mutex mu;
  std::size_t verified = 0, refused = 0;
  std::set<std::int64_t> nonces;
};

/// Verifies each request's sr25519 signature over PROTOCOL 4.4's message against alice's key,
/// answers 200 (dummy_output = 1) when it verifies and 401 otherwise, after `delay`.
behaviour verifying_responder(std::shared_ptr<signature_log> seen,
                              std::chrono::milliseconds delay = 0ms) {
  return [seen, delay](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (;;) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
      (void)n;
      if (ec) co_return;
      dummy d;
      if (bt::read_json_body(bt::descriptor_of<dummy>(), req.body(), d)) co_return;
      const std::string message = std::to_string(d.dendrite.nonce.value_or(0)) + "." +
                                  d.dendrite.hotkey.value_or("") + "." +
                                  d.axon.hotkey.value_or("") + "." + d.dendrite.uuid.value_or("") +
                                  "." + bt::body_hash(bt::descriptor_of<dummy>(), d);
      const auto sig = bt::from_hex(d.dendrite.signature.value_or(""));
      const bool ok =
          sig && d.dendrite.hotkey == alice().ss58_address() && alice().verify(message, *sig);
      {
        std::lock_guard lk(seen->mu);
        ++(ok ? seen->verified : seen->refused);
        seen->nonces.insert(d.dendrite.nonce.value_or(0));
      }
      log.add(std::move(req));  // (what wait_count() counts)
      if (delay.count() > 0) co_await sleep_for(delay);
      d.dummy_output = 1;
      d.axon.status_code = ok ? 200 : 401;
      d.axon.status_message = ok ? "Success" : "Signature mismatch";
      std::string body;
      bt::write_json_body(bt::descriptor_of<dummy>(), d, body, bt::json_style::compact);
      co_await write_text(s, http_response(ok ? 200 : 401, body));
    }
  };
}

}  // namespace

TEST_CASE(
    "a fan-out signed in the signing pool of a multi-threaded dendrite: every signature "
    "verifies",
    "[dendrite][fanout][signing]") {
  raise_fd_limit();
  auto seen = std::make_shared<signature_log>();
  fault_server srv(verifying_responder(seen));
  bt::dendrite d(alice(), {.threads = 2, .signing_threads = 3, .max_concurrency = 64});
  const std::size_t n = 300;
  std::vector<bt::axon_info> axons(n, srv.axon(bob().ss58_address()));
  dummy q;
  q.dummy_input = 7;
  for (int round = 0; round < 2; ++round) {  // new connections, then pooled ones
    INFO("round " << round);
    const auto rs = d.forward(axons, q, 30.0);
    REQUIRE(rs.size() == n);
    std::size_t ok = 0;
    for (const auto& r : rs) ok += r.dendrite.status_code == 200 && r.dummy_output == 1;
    CHECK(ok == n);
  }
  std::lock_guard lk(seen->mu);
  CHECK(seen->verified == 2 * n);
  CHECK(seen->refused == 0);
  CHECK(seen->nonces.size() == 2 * n);  // a fresh nonce for every request
  CHECK(d.stats().calls == 2 * n);
}

TEST_CASE(
    "a fan-out cancelled while its signatures are in the signing pool ends every call "
    "cleanly",
    "[dendrite][fanout][signing][cancel]") {
  raise_fd_limit();
  auto seen = std::make_shared<signature_log>();
  fault_server srv(verifying_responder(seen, 20ms));
  bt::dendrite d(alice(), {.threads = 2, .signing_threads = 2, .max_concurrency = 32});
  const std::size_t n = 400;
  std::vector<bt::axon_info> axons(n, srv.axon(bob().ss58_address()));
  net::cancellation_signal sig;
  std::promise<std::vector<dummy>> p;
  auto f = p.get_future();
  d.async_forward(axons, dummy{}, 30.0,
                  net::bind_cancellation_slot(
                      sig.slot(), [&p](std::vector<dummy> r) { p.set_value(std::move(r)); }));
  REQUIRE(srv.log().wait_count(40));  // mid fan-out: some answered, some in flight, most queued
  sig.emit(net::cancellation_type::terminal);
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  const auto rs = f.get();
  REQUIRE(rs.size() == n);
  std::size_t answered = 0, cancelled = 0;
  for (const auto& r : rs) {
    if (r.dendrite.status_code == 200) {
      ++answered;
    } else {
      ++cancelled;
      CHECK(r.dendrite.status_code == 503);
      CHECK(r.dendrite.status_message == "Request cancelled: cancelled by the caller");
    }
  }
  CHECK(answered + cancelled == n);
  CHECK(cancelled > 0);
  CHECK(d.stats().in_flight == 0);
  std::lock_guard lk(seen->mu);
  CHECK(seen->refused == 0);  // whatever was sent before the cancellation was signed right
}

TEST_CASE(
    "destroying a dendrite while a fan-out's signatures are in the signing pool completes "
    "the fan-out",
    "[dendrite][fanout][signing][cancel]") {
  raise_fd_limit();
  auto seen = std::make_shared<signature_log>();
  fault_server srv(verifying_responder(seen, 20ms));
  std::future<std::vector<dummy>> f;
  {
    bt::dendrite d(alice(), {.threads = 2, .signing_threads = 2, .max_concurrency = 64});
    f = d.async_forward(std::vector<bt::axon_info>(300, srv.axon(bob().ss58_address())), dummy{},
                        30.0, boost::asio::use_future);
    REQUIRE(srv.log().wait_count(10));
  }  // the destructor cancels the calls, drains the pool and joins the threads
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  const auto rs = f.get();
  REQUIRE(rs.size() == 300);
  for (const auto& r : rs) {
    if (r.dendrite.status_code == 200) continue;
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message == "Request cancelled: dendrite stopped");
  }
}

namespace {
/// Threads of this process now (the entries of /proc/self/task).
std::size_t process_threads() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

/// Threads the default signing_threads (0) adds to a dendrite with `io_threads` I/O threads
/// once it has fanned out, every signature verified.
std::size_t default_pool_threads(unsigned io_threads) {
  auto seen = std::make_shared<signature_log>();
  fault_server srv(verifying_responder(seen));
  bt::dendrite d(alice(), {.threads = io_threads, .max_concurrency = 16});
  dummy q;
  q.dummy_input = 3;
  const std::size_t before = process_threads();
  const auto rs =
      d.forward(std::vector<bt::axon_info>(20, srv.axon(bob().ss58_address())), q, 30.0);
  const std::size_t after = process_threads();
  std::size_t ok = 0;
  for (const auto& r : rs) ok += r.dendrite.status_code == 200 && r.dummy_output == 1;
  CHECK(ok == rs.size());
  std::lock_guard lk(seen->mu);
  CHECK(seen->verified == 20);
  return after - before;
}
}  // namespace

TEST_CASE(
    "by default a fan-out signs in a pool of one thread per core only while the dendrite's "
    "own I/O threads are fewer than the cores",
    "[dendrite][fanout][signing]") {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // I/O threads covering the cores sign on themselves: no thread starts.
  CHECK(default_pool_threads(cores) == 0);
  // One I/O thread on a machine of several cores: the pool starts, one thread per core.
  CHECK(default_pool_threads(1) == (cores >= 2 ? cores : 0));
}
