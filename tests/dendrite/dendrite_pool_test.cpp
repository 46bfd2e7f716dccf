// The dendrite's keep-alive pool through the public API (dendrite_options limits, stats()), and
// the start of a call queued in a fan-out: raw Asio peers on loopback (fault_server.hpp).
#include <bt/dendrite.hpp>

#include <bt/examples/dummy.hpp>
#include <bt/json_body.hpp>

#include "fault_server.hpp"
#include "support/example_queries.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <future>

using bt::examples::dummy;
using bt::test::dummy_query;
using namespace bt::test;

namespace {

/// A Python-shaped keep-alive 200 for a Dummy request: dummy_output = 2 * dummy_input.
std::string doubled_answer(const http::request<http::string_body>& req) {
  dummy d;
  REQUIRE_FALSE(bt::read_json_body(bt::descriptor_of<dummy>(), req.body(), d));
  d.dummy_output = 2 * d.dummy_input;
  d.axon.status_code = 200;
  d.axon.status_message = "Success";
  std::string body;
  bt::write_json_body(bt::descriptor_of<dummy>(), d, body, bt::json_style::compact);
  return http_response(200, body,
                       "bt_header_axon_status_code: 200\r\nbt_header_axon_status_message: "
                       "Success\r\n");
}

/// Keep-alive server that holds every answer until `batch` requests of the current round have
/// arrived (over all its listeners and connections), so a round of `batch` calls is in flight at
/// once and each call needs a connection of its own. Its io_context has one thread: the
/// coroutines run one at a time, so the log's count right after a read is that request's rank.
behaviour hold_until_batch(std::size_t batch) {
  return [batch](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (;;) {
      if (!co_await read_request(s, buf, log)) co_return;
      http::request<http::string_body> req;
      std::size_t rank = 0;
      {
        std::lock_guard lk(log.mu);
        req = log.requests.back();
        rank = log.requests.size();
      }
      const std::size_t round_end = (rank + batch - 1) / batch * batch;
      // The peer's pacing under test, not a wait of the test: bounded by the calls' deadline.
      while (log.count() < round_end) co_await sleep_for(1ms);
      co_await write_text(s, doubled_answer(req));
    }
  };
}

}  // namespace

TEST_CASE("the pool keeps at most max_idle_per_endpoint per axon and max_idle_total in all",
          "[dendrite][pool]") {
  constexpr std::size_t per_axon = 3, axons = 3;
  fault_server srv(hold_until_batch(per_axon * axons), axons);
  std::vector<bt::axon_info> targets;
  for (std::size_t i = 0; i < axons; ++i)
    for (std::size_t k = 0; k < per_axon; ++k) targets.push_back(srv.axon(bob().ss58_address(), i));

  bt::dendrite d(alice(), {.threads = 2, .max_idle_per_endpoint = 2, .max_idle_total = 5});
  auto first = d.forward(targets, dummy_query(4), 10.0);
  for (auto& r : first) {
    CHECK(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 8);
  }
  auto st = d.stats();
  CHECK(st.connections_opened == 9);  // all nine in flight at once: one connection each
  CHECK(st.connections_reused == 0);
  // 2 per axon would be 6; the total cap keeps 5, and the other four were closed.
  CHECK(st.idle_connections == 5);

  auto second = d.forward(targets, dummy_query(5), 10.0);
  for (auto& r : second) CHECK(r.dendrite.status_code == 200);
  st = d.stats();
  CHECK(st.connections_reused == 5);   // every pooled connection was used again
  CHECK(st.connections_opened == 13);  // and four new ones
  CHECK(st.idle_connections == 5);
  CHECK(srv.log().connections == 13);
}

TEST_CASE("a connection idle longer than idle_timeout is closed instead of reused",
          "[dendrite][pool]") {
  fault_server srv(hold_until_batch(1));
  bt::dendrite d(alice(), {.idle_timeout = std::chrono::milliseconds(1)});
  const auto a = srv.axon(bob().ss58_address());
  CHECK(d.call(a, dummy_query(1), 10.0).dendrite.status_code == 200);
  CHECK(d.stats().idle_connections == 1);
  std::this_thread::sleep_for(20ms);  // make the pooled connection older than idle_timeout
  auto r = d.call(a, dummy_query(2), 10.0);
  CHECK(r.dendrite.status_code == 200);
  CHECK(r.dummy_output == 4);
  const auto st = d.stats();
  CHECK(st.connections_reused == 0);
  CHECK(st.connections_opened == 2);
  CHECK(st.retries == 0);  // the expired connection was dropped, not tried
  CHECK(srv.log().connections == 2);
}

TEST_CASE("calls of a cancelled fan-out still queued never connect", "[dendrite][pool][cancel]") {
  // Accepts and reads, never answers: the first call holds the only slot until cancelled.
  fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    if (!co_await read_request(s, buf, log)) co_return;
    co_await sleep_for(30s);
  });
  bt::dendrite d(alice(), {.max_concurrency = 1});
  std::vector<bt::axon_info> targets(3, srv.axon(bob().ss58_address()));
  net::cancellation_signal cancel;
  std::promise<std::vector<dummy>> p;
  auto f = p.get_future();
  d.async_forward(targets, dummy_query(), 20.0,
                  net::bind_cancellation_slot(
                      cancel.slot(), [&p](std::vector<dummy> r) { p.set_value(std::move(r)); }));
  REQUIRE(srv.log().wait_count(1));
  cancel.emit(net::cancellation_type::terminal);
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  auto results = f.get();
  REQUIRE(results.size() == 3);
  for (auto& r : results) {
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message == "Request cancelled: cancelled by the caller");
  }
  const auto st = d.stats();
  CHECK(st.connections_opened == 1);
  CHECK(st.idle_connections == 0);  // a cancelled exchange is never pooled
  CHECK(st.in_flight == 0);
  CHECK(srv.log().connections == 1);
}
