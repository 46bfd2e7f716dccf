// A once-a-second tick that keeps per-operation deadlines off Asio's timerfd.
//
// Asio's epoll reactor reprograms its timerfd (one system call) whenever a timer armed becomes
// the earliest in its queue. An axon or a dendrite arms a deadline per read, write or call and
// cancels it when the operation completes, so with one request in flight every deadline armed is
// the earliest and costs a timerfd_settime. A timer that always expires sooner, re-armed each
// time it fires, keeps every deadline longer than its period from being the earliest: the loop
// then pays one system call a second instead of a few per request. Deadlines shorter than the
// period behave as before (they become the earliest).
//
// Owned next to the io_context it ticks on, by the code that runs that io_context's threads:
// while started, its pending wait keeps run() from returning, so stop() must come before the
// threads are expected to run out of work, and the object must outlive the io_context's
// handlers (destroy it after the threads have been joined).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>

namespace bt::detail {

class timer_tick {
 public:
  static constexpr auto period = std::chrono::seconds(1);

  explicit timer_tick(boost::asio::io_context& ioc)
      : strand_(boost::asio::make_strand(ioc)), timer_(strand_) {}
  timer_tick(const timer_tick&) = delete;
  timer_tick& operator=(const timer_tick&) = delete;

  /// Starts ticking (once; thread-safe).
  void start() {
    boost::asio::post(strand_, [this] { arm(); });
  }

  /// Stops ticking: the pending wait ends and is not renewed (thread-safe; idempotent).
  void stop() {
    boost::asio::post(strand_, [this] {
      stopped_ = true;
      timer_.cancel();
    });
  }

 private:
  void arm() {  // on strand_
    if (stopped_) return;
    timer_.expires_after(period);
    timer_.async_wait([this](const boost::system::error_code& e) {
      if (!e) arm();
    });
  }

  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::steady_timer timer_;
  bool stopped_ = false;  ///< on strand_
};

}  // namespace bt::detail
