// The measured loop of bt-ping: dendrite calls against one axon, sequential (the original
// measurement) or with N callers in flight, for a number of calls or for a bounded time.
#pragma once

#include "report.hpp"

#include <bt/axon_info.hpp>
#include <bt/dendrite.hpp>
#include <bt/detail/timer_tick.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bt::perf {

/// The callers of a run: one dendrite per caller, each with its own uuid, as N validators would
/// be. One dendrite alone would not do for N > 1: its nonces are strictly increasing, and
/// concurrent requests on different connections reach the axon out of order, so the axon's
/// ">= 7.2 strictly increasing per hotkey:uuid" rule would answer 401 to some of them.
/// A single caller runs on the dendrite's own thread (no strand, as a simple client does); several
/// share one io_context run by `threads` threads.
class caller_set {
 public:
  caller_set(const keypair& key, std::size_t callers, unsigned threads,
             const dendrite_options& opt);
  /// Destroys the dendrites (cancelling anything still running), then lets the shared
  /// io_context finish and joins its threads.
  ~caller_set();
  caller_set(const caller_set&) = delete;
  caller_set& operator=(const caller_set&) = delete;

  std::size_t size() const noexcept { return dendrites_.size(); }
  dendrite& at(std::size_t i) { return *dendrites_[i]; }
  /// Where the caller coroutines run: the executor of the dendrites.
  boost::asio::any_io_executor executor() const { return dendrites_.front()->get_executor(); }

 private:
  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  /// The shared io_context's tick (bt/detail/timer_tick.hpp), as a dendrite that owns its
  /// io_context has one; started with the threads, stopped with the work guard.
  std::unique_ptr<bt::detail::timer_tick> tick_;
  std::vector<std::unique_ptr<dendrite>> dendrites_;
  std::vector<std::thread> threads_;
};

/// A ping by method and path (bt-ping --epistula, --btauth): dendrite::epistula_call or
/// btauth_call (as `dialect` says) of POST `path` with `body`.
struct plain_ping {
  wire_dialect dialect = wire_dialect::epistula;  ///< epistula or btauth
  std::string path = "/echo";
  std::string body = "{}";
};

struct drive_options {
  std::size_t count = 10'000;                 ///< calls to make (ignored when `duration` is set)
  std::chrono::duration<double> duration{0};  ///< > 0: keep calling until this much time passed
  std::size_t concurrency = 1;                ///< callers in flight at once
  double timeout = 5.0;                       ///< seconds, passed to every call
  std::ostream* verbose = nullptr;            ///< per-call lines when set
  bool progress = false;                      ///< a progress bar on stdout (for a terminal)
};

/// Runs opt.concurrency caller coroutines (caller i uses dendrite i % callers.size()) on the
/// dendrites' executor (no thread hop per call, like Python's single event loop) and waits for
/// them. Each successful call's latency is the dendrite's `process_time`; a call whose status is
/// not 200 counts as a failure under its status and message, and its time is not recorded (a
/// refused connect has none; the original loop would have appended Python's None).
/// The synapse sent is a copy of `proto`. Instantiated for bt::synapse, payload_synapse and
/// plain_ping (whose calls are epistula_call or btauth_call, timed the same way).
template <class T>
ping_run drive(caller_set& callers, const axon_info& target, const T& proto,
               const drive_options& opt);

}  // namespace bt::perf
