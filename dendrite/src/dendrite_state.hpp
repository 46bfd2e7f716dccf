// What a dendrite's running calls share with the dendrite object (dendrite_state), and how a
// call fails (call_failure). Private to the dendrite's sources.
#pragma once

#include <bt/dendrite.hpp>
#include <bt/detail/dendrite_ops.hpp>  // request_identity, make_uuid1 (internal/)
#include <bt/sr25519_key_cache.hpp>

#include "connection_pool.hpp"
#include "signing_pool.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace bt::detail {

class call_exchange;

/// Why a call ended without a merged answer: thrown inside the call's coroutine, recorded once
/// (by the call's dialect, in the caller's result).
struct call_failure {
  dendrite_errc code;
  std::string detail;
};

/// A running call's place in dendrite_state's list of them (register_op): the links live in the
/// call itself, so that registering a call costs no allocation.
struct active_call_link {
  call_exchange* op = nullptr;
  active_call_link* prev = nullptr;
  active_call_link* next = nullptr;
};

/// What running operations share with the dendrite object; kept alive by them.
struct dendrite_state {
  dendrite_options opt;
  keypair key;
  std::string uuid;
  boost::asio::any_io_executor ex;
  /// Threads running ex when the dendrite owns its io_context; 0: the caller's executor.
  unsigned own_threads = 0;
  std::shared_ptr<spdlog::logger> log;
  connection_pool pool;
  /// The hotkeys of the axons whose answers this dendrite checked (bt-response-signature): a
  /// validator asks the same axons again and again, and a known key's next answer costs about a
  /// quarter to a half of a first one's check (bt/sr25519_key_cache.hpp; thread-safe).
  sr25519::key_cache axon_keys;

  std::atomic<std::uint64_t> calls{0}, opened{0}, reused{0}, retries{0};
  std::atomic<std::uint64_t> sessions_offered{0}, sessions_established{0}, sessions_rejected{0},
      session_requests{0};
  // dendrite::metrics(). A call's children are looked up by (synapse, status) when it completes
  // (the family's mutex and a map lookup: small next to a call's own allocations).
  metrics::registry registry;
  metrics::family<metrics::counter>& calls_by =
      registry.counter("bt_dendrite_calls_total", "Calls completed, by synapse and status code.",
                       {"synapse", "status"});
  metrics::family<metrics::histogram>& call_seconds = registry.histogram(
      "bt_dendrite_call_duration_seconds", "Call durations, by synapse and status code.",
      {"synapse", "status"}, metrics::default_buckets());

  std::mutex mu;  // guards everything below
  bool stopped = false;
  /// The running calls (shutdown() cancels them): a circular list through their links, this
  /// being its head.
  active_call_link active{nullptr, &active, &active};
  std::size_t active_count = 0;
  /// dendrite_options::signing_threads' pool, made by the first fan-out that needs it.
  std::unique_ptr<signing_pool> signer;

  dendrite_state(dendrite_options o, keypair k, boost::asio::any_io_executor e)
      : opt(std::move(o)),
        key(std::move(k)),
        uuid(make_uuid1()),
        ex(std::move(e)),
        log(opt.logger),
        pool(connection_pool_limits{.max_idle_per_endpoint = opt.max_idle_per_endpoint,
                                    .max_idle_total = opt.max_idle_total,
                                    .idle_timeout = opt.idle_timeout}) {
    if (opt.insecure_skip_signing && log)
      log->warn(
          "dendrite: REQUEST SIGNING IS OFF (insecure_skip_signing); benchmarks only, loopback "
          "axons only");
  }

  request_identity identity() const {
    return request_identity{.key = opt.insecure_skip_signing ? nullptr : &key,
                            .hotkey = key.ss58_address(),
                            .uuid = uuid,
                            .version = opt.version};
  }

  /// The signing pool a fan-out's calls sign in, or null: signing_threads resolves to one
  /// (sign on the I/O thread running the call), requests are unsigned, or the dendrite is
  /// stopping. The pool is made on first use. By default (signing_threads 0) a dendrite whose
  /// own I/O threads already cover the cores signs on them: a pool would only add two hand-offs
  /// per call (docs/performance.md, "Fan-out: the floor, and the I/O threads").
  signing_pool* fanout_signer() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned n = opt.signing_threads != 0 ? opt.signing_threads
                       : own_threads >= cores   ? 1
                                                : cores;
    if (n < 2 || opt.insecure_skip_signing) return nullptr;
    std::lock_guard lk(mu);
    if (stopped) return nullptr;
    if (!signer) signer = std::make_unique<signing_pool>(key, n, ex);
    return signer.get();
  }

  boost::asio::any_io_executor make_op_executor() const {
    if (own_threads == 1) return ex;  // one thread runs ex: no strands needed
    return boost::asio::make_strand(ex);
  }

  /// Adds a call's `link` (link.op set) to the running calls; false once the dendrite is
  /// stopping (the call must not start).
  bool register_op(active_call_link& link) {
    std::lock_guard lk(mu);
    if (stopped) return false;
    link.prev = active.prev;
    link.next = &active;
    active.prev->next = &link;
    active.prev = &link;
    ++active_count;
    return true;
  }
  /// Removes a registered `link` (before its call is destroyed).
  void unregister_op(active_call_link& link) {
    std::lock_guard lk(mu);
    link.prev->next = link.next;
    link.next->prev = link.prev;
    link.prev = link.next = nullptr;
    --active_count;
  }

  /// Cancels every running call and closes the pool (exchange.cpp).
  void shutdown();
};

}  // namespace bt::detail
