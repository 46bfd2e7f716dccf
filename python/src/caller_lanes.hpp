// Blocking calls that run on the calling thread: one lane (an io_context and a bt::dendrite on
// it) per Python thread that calls Dendrite.query().
//
// Why: a blocking call on the shared dendrite hands the request to the dendrite's I/O thread
// (an eventfd wake-up) and the answer back to the blocked caller (a futex wake-up); on a busy
// machine each hand-off waits for the scheduler. A lane's io_context is run only by its own
// thread, inside run_lane(), with the GIL released: the thread that asked is the thread that
// signs, sends, reads and verifies, and nothing wakes anybody.
//
// Contract:
//  * A lane is a dendrite of its own (the same keypair and options as the shared one): its own
//    keep-alive connections, sessions and uuid. Each thread's blocking calls are sequential, so
//    a lane needs no concurrency limiter, and a separate uuid keeps nonces unique per uuid
//    without a counter shared between threads.
//  * close() destroys every lane's dendrite, which cancels a running call (the cancellation is
//    posted to the lane and runs on the calling thread, which is still running the lane: the
//    call ends 503 "Request cancelled"); the lane's io_context goes with its last user. Calls
//    after close() raise "Dendrite is closed".
//  * A thread's lane is destroyed when the thread ends (or at close(), whichever is first).
//  * A lane's io_context runs a bt::detail::timer_tick (a steady_timer, no thread), so a call's
//    deadline is not the earliest timer and costs no timerfd_settime; it goes with the lane.
//  * stats() sums every lane's counters, those of ended threads' lanes included.
#pragma once

#include <bt/dendrite.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace btpy {

/// Adds b's counters to a; with `gauges`, also b's current idle and in-flight figures.
void add_stats(bt::dendrite_stats& a, const bt::dendrite_stats& b, bool gauges);

class caller_lanes : public std::enable_shared_from_this<caller_lanes> {
 public:
  caller_lanes(bt::keypair key, bt::dendrite_options opt);
  ~caller_lanes();
  caller_lanes(const caller_lanes&) = delete;
  caller_lanes& operator=(const caller_lanes&) = delete;

  /// Starts one asynchronous call with `start(dendrite)` on this thread's lane, then runs the
  /// lane's io_context on this thread until `done()` (set by that call's completion handler,
  /// which runs here too). Call without the GIL. Throws what `start` throws, or
  /// std::invalid_argument("Dendrite is closed") (ValueError).
  void run(const std::function<void(bt::dendrite&)>& start, const std::function<bool()>& done);

  /// Destroys every lane's dendrite (running calls end 503 soon after). Idempotent.
  void close();

  /// Destroys this thread's lane, keeping its counters (the thread is ending).
  void forget_this_thread();

  /// The sum of every live lane's stats, plus the counters of lanes whose thread has ended.
  bt::dendrite_stats stats() const;

 private:
  struct lane;
  std::shared_ptr<lane> lane_for_this_thread();

  const bt::keypair key_;
  const bt::dendrite_options opt_;
  mutable std::mutex mu_;  // guards lanes_, retired_ and closed_
  bool closed_ = false;
  bt::dendrite_stats retired_;  // counters of forgotten lanes (idle and in-flight stay 0)
  std::unordered_map<std::thread::id, std::shared_ptr<lane>> lanes_;
};

}  // namespace btpy
