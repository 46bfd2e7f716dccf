// Bounded waits for tests: wait on the event itself, not on time. A handler (or any other
// thread) signals an `event` or raises a `signal_count`; the test thread waits for it with a
// deadline and gets false when the deadline passes, so a broken build fails instead of hanging.
// `poll_until` is the one polling wait, for state that offers no notification to wait on (the
// axon's connections() and queued_requests() gauges, the process's open descriptors).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace bt::test {

/// A count that other threads raise and a test waits to reach. Thread-safe.
class signal_count {
 public:
  /// Notifies while holding the lock: a waiter cannot return (and destroy this object, a stack
  /// local of the test) until the notifying thread is done with the condition variable.
  void add(int n = 1) {
    std::lock_guard lk(m_);
    v_ += n;
    cv_.notify_all();
  }
  int value() const {
    std::lock_guard lk(m_);
    return v_;
  }
  /// True once value() >= `at_least`; false if `limit` passes first.
  bool wait_for(int at_least, std::chrono::steady_clock::duration limit) const {
    std::unique_lock lk(m_);
    return cv_.wait_for(lk, limit, [&] { return v_ >= at_least; });
  }

 private:
  mutable std::mutex m_;
  mutable std::condition_variable cv_;
  int v_ = 0;
};

/// A one-shot flag: set() once (or more), is_set() at any time, wait_for() with a deadline.
class event {
 public:
  void set() { c_.add(c_.value() == 0 ? 1 : 0); }
  bool is_set() const { return c_.value() > 0; }
  explicit operator bool() const { return is_set(); }
  /// True once set(); false if `limit` passes first.
  bool wait_for(std::chrono::steady_clock::duration limit) const { return c_.wait_for(1, limit); }

 private:
  signal_count c_;
};

/// Polls `pred` every `step` until it holds or `limit` passes; returns its last value. Only for
/// state with no notification to wait on (see the file header): anything a test's own code
/// signals uses `event` or `signal_count` instead.
template <class Pred>
bool poll_until(Pred pred, std::chrono::steady_clock::duration limit = std::chrono::seconds(10),
                std::chrono::milliseconds step = std::chrono::milliseconds(2)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= end) return pred();
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace bt::test
