// bt-axon's chain metagraph refresher (chain_policy.hpp).
#include "chain_policy.hpp"

#include <utility>

namespace bt::miner {

neuron_map to_neuron_map(const bt::metagraph& m) {
  neuron_map out;
  out.reserve(m.neurons.size());
  for (const auto& n : m.neurons)
    out.emplace(n.hotkey, neuron{static_cast<double>(n.stake_rao), n.validator_permit});
  return out;
}

metagraph_refresher::metagraph_refresher(bt::endpoint ep, bt::rpc_client_options opt,
                                         std::uint16_t netuid, std::chrono::milliseconds interval,
                                         std::shared_ptr<spdlog::logger> log)
    : netuid_(netuid),
      interval_(interval),
      log_(std::move(log)),
      chain_(std::make_unique<bt::subtensor>(std::move(ep), opt)) {}

metagraph_refresher::~metagraph_refresher() {
  stop();
}

bt::metagraph metagraph_refresher::read_now() {
  bt::metagraph m = chain_->get_metagraph(netuid_);
  last_block_ = m.block;
  return m;
}

void metagraph_refresher::start(callback on_refresh) {
  thread_ = std::thread([this, cb = std::move(on_refresh)] { run(cb); });
}

void metagraph_refresher::refresh_now() {
  {
    const std::lock_guard lock(mutex_);
    asked_ = true;
  }
  wake_.notify_all();
}

void metagraph_refresher::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Fails a read still in flight (its completion only touches its own shared state).
  chain_.reset();
}

namespace {

/// One read's outcome, shared with its completion handler (which may run after the refresher
/// stopped waiting for it).
struct read_state {
  bool done = false;
  bt::error err;
  bt::metagraph m;
};

}  // namespace

void metagraph_refresher::run(callback on_refresh) {
  const std::string url = chain_->get_endpoint().url();
  bool failing = false;
  for (;;) {
    auto st = std::make_shared<read_state>();
    bool asked = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, interval_, [this] { return stopping_ || asked_; });
      if (stopping_) return;
      asked = std::exchange(asked_, false);
      // The completion runs on the client's thread; it locks the refresher's mutex, which
      // outlives it: stop() destroys the client (running every pending completion) before the
      // refresher's members go.
      chain_->async_metagraph(netuid_, std::nullopt, [this, st](bt::error e, bt::metagraph m) {
        {
          const std::lock_guard l(mutex_);
          st->err = std::move(e);
          st->m = std::move(m);
          st->done = true;
        }
        wake_.notify_all();
      });
      wake_.wait(lock, [&] { return stopping_ || st->done; });
      if (stopping_) return;
    }
    if (st->err) {
      log_->warn(
          "metagraph refresh of subnet {} from {} failed; keeping the last good metagraph "
          "(block {}): {}",
          netuid_, url, last_block_, st->err.message());
      failing = true;
      continue;
    }
    try {
      on_refresh(st->m);
    } catch (const std::exception& e) {
      // Out of memory building the new policy: the thread (and the process) goes on, and the
      // policy keeps the last good metagraph, as for a failed read.
      log_->warn(
          "metagraph refresh of subnet {} from {}: block {} not applied ({}); keeping the "
          "last good metagraph (block {})",
          netuid_, url, st->m.block, e.what(), last_block_);
      failing = true;
      continue;
    }
    last_block_ = st->m.block;
    if (failing) {
      log_->info("metagraph refresh of subnet {} succeeded again: block {}, {} neurons", netuid_,
                 st->m.block, st->m.neurons.size());
    } else {
      log_->info("metagraph refreshed{}: subnet {} at block {}, {} neurons",
                 asked ? " on request" : "", netuid_, st->m.block, st->m.neurons.size());
    }
    failing = false;
  }
}

}  // namespace bt::miner
