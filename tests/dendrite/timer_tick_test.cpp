// bt::detail::timer_tick: it keeps its io_context busy while started and lets run() return once
// stopped, from any thread, whatever the moment.
#include <bt/detail/timer_tick.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "support/wait.hpp"

#include <chrono>
#include <future>
#include <thread>

namespace net = boost::asio;
using namespace std::chrono_literals;

TEST_CASE("timer_tick keeps the loop running until stopped, then lets run() return",
          "[timer_tick]") {
  net::io_context ioc;
  bt::detail::timer_tick tick(ioc);
  tick.start();
  // Started: the pending tick is work, so run_for() runs for its whole span (past one tick).
  ioc.run_for(bt::detail::timer_tick::period + 200ms);
  CHECK_FALSE(ioc.stopped());
  // Stopped from another thread while the loop runs: run() returns (bounded by the future).
  ioc.restart();
  bt::test::event running;
  boost::asio::post(ioc, [&] { running.set(); });
  auto ran = std::async(std::launch::async, [&] { ioc.run(); });
  REQUIRE(running.wait_for(5s));
  tick.stop();
  REQUIRE(ran.wait_for(5s) == std::future_status::ready);
  CHECK(ioc.stopped());
}

TEST_CASE("timer_tick stopped before its first tick ran still ends", "[timer_tick]") {
  for (int i = 0; i < 50; ++i) {
    net::io_context ioc;
    bt::detail::timer_tick tick(ioc);
    tick.start();
    tick.stop();  // both posted before run(): the stop wins, nothing is left
    auto ran = std::async(std::launch::async, [&] { ioc.run(); });
    REQUIRE(ran.wait_for(5s) == std::future_status::ready);
  }
}

TEST_CASE("timer_tick leaves the deadlines of other timers intact", "[timer_tick]") {
  net::io_context ioc;
  bt::detail::timer_tick tick(ioc);
  tick.start();
  // A short deadline (sooner than the tick) and a longer one (later than the first tick) both
  // fire when due.
  net::steady_timer soon(ioc), later(ioc);
  const auto t0 = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration soon_at{}, later_at{};
  soon.expires_after(100ms);
  soon.async_wait([&](auto) { soon_at = std::chrono::steady_clock::now() - t0; });
  later.expires_after(bt::detail::timer_tick::period + 300ms);
  later.async_wait([&](auto) {
    later_at = std::chrono::steady_clock::now() - t0;
    tick.stop();
  });
  auto ran = std::async(std::launch::async, [&] { ioc.run(); });
  REQUIRE(ran.wait_for(10s) == std::future_status::ready);
  CHECK(soon_at >= 100ms);
  CHECK(later_at >= bt::detail::timer_tick::period + 300ms);
}
