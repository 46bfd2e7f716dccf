// bt-axon --netuid: the policy metagraph read from the chain, and kept fresh off the request path.
//
//   bt::miner::metagraph_refresher r(endpoint, client_options, netuid, 300s, log);
//   bt::metagraph first = r.read_now();        // blocking; throws bt::subtensor_error
//   r.start([&](const bt::metagraph& m) { holder.update(...); });
//   r.refresh_now();                           // e.g. on SIGHUP: one read now, not blocking
//   ...
//   r.stop();                                  // prompt, even with a read in flight
//
// Contract:
//  * read_now() reads the metagraph of `netuid` at the head (bt::subtensor::get_metagraph) on
//    the caller's thread; a failure throws bt::subtensor_error naming the step and the endpoint.
//  * start() runs one thread of its own: every `interval` it reads the metagraph at the head and
//    hands a complete one to the callback (on that thread). A read that fails (endpoint down,
//    JSON-RPC error, decode error, timeout) is logged as a warning naming the error, the callback
//    is not called, and the next read comes one interval later: the caller keeps the last good
//    metagraph. The first read after recovering is logged at info. An exception from the
//    callback (std::bad_alloc) is logged the same way and ends neither the thread nor the
//    process.
//  * refresh_now() (after start()) asks the thread for a read at once, under the same rules (the
//    callback on success, a warning and the last good metagraph kept on failure); it returns
//    without waiting for it, so any thread may call it. Asks that come while a read is in flight
//    or already asked for are merged into one more read. The interval restarts after that read.
//  * Reads never overlap: the next interval starts when a read has completed (a slow node delays
//    refreshes, it never stacks them). Each read is bounded by the client's request timeout.
//  * stop() (and the destructor) returns promptly even while a read is in flight: the thread
//    stops waiting for it, and the chain client is destroyed, which fails the read.
//    The callback is never called after stop() returns.
#pragma once

#include "miner_policy.hpp"

#include <bt/chain/metagraph.hpp>
#include <bt/chain/subtensor.hpp>

#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace bt::miner {

/// The policy's view of a chain metagraph: hotkey (SS58) -> {stake = total stake in rao as a
/// double (only the order matters), validator_permit}.
neuron_map to_neuron_map(const bt::metagraph& m);

class metagraph_refresher {
 public:
  using callback = std::function<void(const bt::metagraph&)>;

  metagraph_refresher(bt::endpoint ep, bt::rpc_client_options opt, std::uint16_t netuid,
                      std::chrono::milliseconds interval, std::shared_ptr<spdlog::logger> log);
  ~metagraph_refresher();
  metagraph_refresher(const metagraph_refresher&) = delete;
  metagraph_refresher& operator=(const metagraph_refresher&) = delete;

  /// One blocking read at the head (see the contract). Before start() only.
  bt::metagraph read_now();
  /// Starts the refresh thread; `on_refresh` receives each metagraph read successfully.
  void start(callback on_refresh);
  /// Asks the thread for one read now (see the contract); does not wait for it.
  void refresh_now();
  /// Stops the thread and the client; idempotent.
  void stop();

 private:
  void run(callback on_refresh);

  std::uint16_t netuid_;
  std::chrono::milliseconds interval_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<bt::subtensor> chain_;
  std::uint64_t last_block_ = 0;  // of the last good read (read_now's, then the thread's)
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool asked_ = false;  // refresh_now() called since the last read began
  std::thread thread_;
};

}  // namespace bt::miner
