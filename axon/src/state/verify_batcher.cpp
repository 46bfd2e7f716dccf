#include "state/verify_batcher.hpp"

#include "ops/axon_metrics.hpp"

#include <bt/sr25519_batch.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <utility>

namespace bt::detail {

namespace {

// One cache for every loop of the process: the validators calling an axon are the same on all of
// its I/O threads, and one bound holds for the whole process (sr25519_key_cache.hpp: about
// 9.5 KiB per key, so about 2.4 MiB at most, and 1.5 MiB of tables of the base point).
sr25519::key_cache& process_keys() {
  static sr25519::key_cache cache(verify_batcher::key_cache_capacity);
  return cache;
}

// What a batch equation over `batch` would cost against lone verifies (batch_pays): how many
// different keys sign its items, and how many items are signed by a key `keys` holds hot.
struct batch_shape {
  std::size_t distinct_keys = 0;
  std::size_t hot_signatures = 0;
};

template <class Item>
batch_shape shape_of(std::span<Item> batch, const sr25519::key_cache& keys) {
  std::vector<const public_key_bytes*> sorted;
  sorted.reserve(batch.size());
  for (const Item& it : batch) sorted.push_back(&it.check.key);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return *a < *b; });
  batch_shape shape;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && *sorted[j] == *sorted[i]) ++j;
    ++shape.distinct_keys;
    if (keys.is_hot(*sorted[i])) shape.hot_signatures += j - i;  // one lookup per key
    i = j;
  }
  return shape;
}

}  // namespace

const sr25519::key_cache& verify_batcher::known_keys() {
  return process_keys();
}

verify_batcher::verify_batcher(net::execution_context& ctx)
    : net::execution_context::service(ctx), loop_(static_cast<net::io_context&>(ctx)) {}

verify_batcher::~verify_batcher() {
  shutdown();
}

void verify_batcher::shutdown() {
  // The loop is going away with submissions still queued (their drain was posted and will never
  // run): their coroutines are destroyed, as Asio destroys the handlers of its own pending
  // operations.
  std::vector<item> left;
  {
    std::lock_guard lk(m_);
    left.swap(queued_);
    drain_posted_ = false;
  }
  for (item& it : left) it.done.discard(it.done.arg);
}

void verify_batcher::submit(signature_check check, std::size_t max_batch, axon_metrics* stats,
                            verify_completion done) {
  bool post = false;
  {
    std::lock_guard lk(m_);
    queued_.push_back(item{std::move(check), std::max<std::size_t>(max_batch, 2), stats, done});
    post = !std::exchange(drain_posted_, true);
  }
  // Behind every handler already queued on the loop: the requests that arrived with this one
  // are parsed and submitted before the drain runs.
  if (post) net::post(loop_, [this] { drain(); });
}

void verify_batcher::drain() {
  std::vector<item> batch;
  {
    std::lock_guard lk(m_);
    batch.swap(queued_);
    drain_posted_ = false;  // a submission from now on (a completion's next request) posts again
  }
  std::vector<std::error_code> verdicts(batch.size());
  const std::size_t step = batch.empty() ? 1 : batch.front().max_batch;
  for (std::size_t at = 0; at < batch.size(); at += step) {
    const std::size_t n = std::min(step, batch.size() - at);
    decide(std::span(batch).subspan(at, n), std::span(verdicts).subspan(at, n));
  }
  // Completed after every verdict is known: a completion may resume its request at once, and
  // the batch's later items should not wait for that request's next stages.
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].done.fn(batch[i].done.arg, !verdicts[i]);
}

void verify_batcher::decide(std::span<item> batch, std::span<std::error_code> verdicts) {
  sr25519::key_cache& keys = process_keys();
  const auto verify_alone = [&keys](const signature_check& c) {
    return keys.verify(c.key, c.message_bytes(), c.signature);
  };
  const bool pays = batch.size() > 1 && [&] {
    const batch_shape shape = shape_of(batch, keys);
    return batch_pays(batch.size(), shape.distinct_keys, shape.hot_signatures);
  }();
  bool penalised = false;
  if (pays) {
    std::lock_guard lk(m_);
    if (penalty_ > 0) {
      --penalty_;
      penalised = true;
    }
  }
  if (penalised || !pays) {
    bool all_valid = true;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      verdicts[i] = verify_alone(batch[i].check);
      all_valid = all_valid && !verdicts[i];
    }
    if (penalised && all_valid) {  // the forgeries stopped: batch the next one again
      std::lock_guard lk(m_);
      penalty_ = 0;
    }
    return;
  }
  std::vector<sr25519::batch_item> items;
  items.reserve(batch.size());
  for (const item& it : batch)
    items.push_back(
        sr25519::batch_item{it.check.key, it.check.message_bytes(), it.check.signature});
  keys.verify_each_with_batch(items, verdicts);
  const bool all_valid = std::none_of(verdicts.begin(), verdicts.end(),
                                      [](const std::error_code& e) { return bool(e); });
  {
    std::lock_guard lk(m_);
    if (all_valid) {
      next_penalty_ = 1;
    } else {
      penalty_ = next_penalty_;
      next_penalty_ = std::min(next_penalty_ * 2, max_penalty_batches);
    }
  }
  if (axon_metrics* stats = batch.front().stats) stats->on_verify_batch(batch.size());
}

}  // namespace bt::detail
