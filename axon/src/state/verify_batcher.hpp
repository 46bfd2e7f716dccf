// Batch verification of request signatures (docs/performance.md "Batch verification in the
// axon"): the sr25519 checks that wait on one event loop at the same time are decided together
// by bt::sr25519::verify_each_with_batch, each request still getting its own verdict.
//
// One batcher per io_context (an Asio service of that context, so the in-memory sessions of the
// tests and the fuzzer batch as the TCP ones do). A session submits its request's (public key,
// message, signature) and suspends; the first submission of a batch posts a drain behind the
// handlers already queued on the loop, so requests whose bytes arrived in the same turn of the
// loop join it; the drain verifies what was collected and completes each submission. A request
// with nothing else waiting is verified alone by the next handler the loop runs (the same
// sr25519::verify as without batching).
//
// Every verification goes through one process-wide sr25519::key_cache: a validator's key, once
// it has signed a valid request, is not decompressed again, and from its second valid request on
// its lone verifications use precomputed tables (0.38x a plain verify for the few keys it uses
// most). A group waiting together too small for a batch equation to pay (batch_pays: 4 items of
// one key, 30 of a hot key, whose lone verify is cheap) is verified one by one.
//
// A batch that fails (a forged or corrupted signature among honest ones) falls back to one
// verify per item inside verify_each_with_batch, so an honest request never fails for its
// neighbour. After such a batch the batcher verifies the next batches item by item for a while
// (doubling with each failed batch, up to max_penalty_batches), so a flood of forged requests
// costs about what it costs without batching, not a batch equation on top of each verify.
#pragma once

#include "transport/net.hpp"

#include <bt/keypair.hpp>
#include <bt/sr25519_key_cache.hpp>

#include <boost/asio/execution_context.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace bt::detail {

class axon_metrics;

/// Called exactly once per submission: `fn(arg, valid)` with the verdict, or `discard(arg)` when
/// the loop shuts down before the verdict (the waiting coroutine is then destroyed, not resumed).
struct verify_completion {
  void (*fn)(void* arg, bool valid) noexcept = nullptr;
  void (*discard)(void* arg) noexcept = nullptr;
  void* arg = nullptr;
};

/// One signature to decide. Owns its bytes: nothing of the request is read after submit().
struct signature_check {
  public_key_bytes key{};
  std::array<std::uint8_t, 64> signature{};
  std::string message;

  std::span<const std::uint8_t> message_bytes() const noexcept {
    return {reinterpret_cast<const std::uint8_t*>(message.data()), message.size()};
  }
};

class verify_batcher final : public net::execution_context::service {
 public:
  using key_type = verify_batcher;
  static inline net::execution_context::id id;

  /// A failed batch makes the next batches verify item by item; at most this many in a row.
  static constexpr unsigned max_penalty_batches = 64;
  /// Whether one batch equation over `signatures` items with `distinct_keys` keys costs less
  /// than verifying each alone through the key cache, where `hot_signatures` of the items are
  /// signed by keys the cache holds hot. The cost model, in µs, from `bt-bench
  /// --benchmark_filter='BM_sr25519_verify_batch_cached(_one_key)?/(1|2|3|4|16)$'`
  /// (docs/performance.md "Batch verification in the axon"): a lone verify costs 10.4 for a hot
  /// key and 20.6 for a key with its comb table (one not yet cached costs more, about 40, but is
  /// priced as a comb key: the rule errs towards verifying alone); a batch costs 29 + 9.2 per
  /// item + 6.9 per distinct key (fitted to its totals at 2, 3, 4 and 16 items, one key and all
  /// distinct). So a batch of one hot key pays from 30 items, of one or two other keys from 4,
  /// of distinct other keys from 7, of distinct hot keys never. Otherwise the items are verified
  /// one by one.
  static constexpr bool batch_pays(std::size_t signatures, std::size_t distinct_keys,
                                   std::size_t hot_signatures) noexcept {
    constexpr std::size_t lone_hot = 104, lone_other = 206;  // tenths of µs
    constexpr std::size_t fixed = 290, per_item = 92, per_key = 69;
    const std::size_t hot = hot_signatures < signatures ? hot_signatures : signatures;
    return lone_hot * hot + lone_other * (signatures - hot) >
           fixed + per_item * signatures + per_key * distinct_keys;
  }
  /// The public keys (decoded, with their tables) remembered across batches and lone verifies,
  /// for the whole process (bt/sr25519_key_cache.hpp).
  static constexpr std::size_t key_cache_capacity = sr25519::key_cache::default_capacity;

  /// Created by of() only, so its context is an io_context.
  explicit verify_batcher(net::execution_context& ctx);
  ~verify_batcher() override;

  /// The process-wide cache every batcher verifies through (for tests and metrics).
  static const sr25519::key_cache& known_keys();

  /// The batcher of `loop` (created on first use).
  static verify_batcher& of(net::io_context& loop) {
    return net::use_service<verify_batcher>(loop);
  }

  /// Queues `check`; `done` is called from the drain, on a thread running the batcher's loop
  /// (never inside submit()). `max_batch` (2 at least) bounds one batch equation: a drain's
  /// batches take the bound of their first item. `stats` (may be null) counts each batch, on its
  /// first item's axon (axons sharing a loop: the tests' in-memory ones). Thread-safe.
  void submit(signature_check check, std::size_t max_batch, axon_metrics* stats,
              verify_completion done);

 private:
  struct item {
    signature_check check;
    std::size_t max_batch;
    axon_metrics* stats;
    verify_completion done;
  };

  void shutdown() override;
  /// Verifies and completes everything queued, in batches of at most the first item's max_batch.
  void drain();
  /// The verdicts of `batch` into `verdicts` (same size): one batch equation, or item by item.
  void decide(std::span<item> batch, std::span<std::error_code> verdicts);

  net::io_context& loop_;
  std::mutex m_;
  std::vector<item> queued_;   // waiting for the posted drain
  bool drain_posted_ = false;  // a drain is posted and has not taken queued_ yet
  unsigned penalty_ = 0;       // batches to verify item by item after the last failed one
  unsigned next_penalty_ = 1;  // doubles with each failed batch, reset by one that passes
};

}  // namespace bt::detail
