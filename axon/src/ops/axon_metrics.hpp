// The axon's own Prometheus metrics (bt_axon_*), in the registry axon::metrics() exposes (a
// miner adds its own there) and the admin listener serves (admin_listener.hpp). The list, with
// types and labels, is in docs/deployment.md "Metrics and health".
//
// Hot path: the pipeline holds pre-resolved children (per route, made once routes are final; per
// rejection reason, made at construction), so a request costs relaxed atomic adds and no lock or
// allocation. The one exception is the first answer with a given status on a route: its counter
// is resolved then (once) and kept. Gauges that mirror state kept elsewhere (connections, queue,
// workers, PROXY refusals) are read by a collect hook at scrape time (axon_impl.cpp registers
// them), never per request.
#pragma once

#include <bt/axon.hpp>
#include <bt/metrics.hpp>
#include <bt/nonce_store.hpp>

#include "errors/axon_errc.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bt::detail {

struct route;

/// The label value of a refusal reason ("unknown_route", "not_verified", ...).
std::string_view errc_name(axon_errc e) noexcept;

class axon_metrics {
 public:
  using clock = std::chrono::steady_clock;

  /// Registers the axon's families in `reg`. The gauges that mirror the axon's shared state
  /// (connections, queue, workers, PROXY refusals) are registered by that state's owner
  /// (axon_impl.cpp), so this layer never sees it.
  explicit axon_metrics(metrics::registry& reg);
  ~axon_metrics();
  axon_metrics(const axon_metrics&) = delete;
  axon_metrics& operator=(const axon_metrics&) = delete;

  /// Once the routes are final (before the first request): one set of children per route,
  /// `key` its identity in the calls below (compared, never dereferenced), `name` its label
  /// value; `queued` when its handler runs on the worker pool (a queue wait to observe).
  void add_route(const route* key, const std::string& name, bool queued);

  /// One answered request (any status; `r` null when no route matched). `seconds` since its head.
  void on_answer(const route* r, int status, double seconds) noexcept;
  /// A refused request, by the pipeline stage's reason.
  void on_rejection(axon_errc e) noexcept { rejections_[static_cast<std::size_t>(e)]->inc(); }
  /// Stage 3 (signature, freshness, the route's verify function) took `seconds`.
  void on_verify(const route* r, double seconds) noexcept;
  /// A worker picked the request up `wait` after it was queued; its handler ran `run` seconds.
  void on_worker_job(const route* r, double wait, double run) noexcept;
  /// A coroutine or inline handler ran `run` seconds (no queue wait to speak of).
  void on_handler(const route* r, double run) noexcept;
  /// The replay store answered `v` after `seconds` (counted around the store call).
  void on_store(nonce_verdict v, double seconds) noexcept;
  /// One batch equation decided `n` request signatures (state/verify_batcher.cpp).
  void on_verify_batch(std::size_t n) noexcept;

 private:
  struct per_route;
  per_route* find(const route* r) noexcept;

  metrics::family<metrics::counter>& requests_;
  metrics::family<metrics::histogram>& request_seconds_;
  metrics::family<metrics::histogram>& verify_seconds_;
  metrics::family<metrics::histogram>& queue_wait_seconds_;
  metrics::family<metrics::histogram>& handler_seconds_;
  metrics::histogram* unrouted_seconds_;
  std::array<metrics::counter*, axon_errc_count> rejections_{};
  std::array<metrics::counter*, 5> store_ops_{};  // by nonce_verdict
  metrics::counter* store_errors_;
  metrics::histogram* store_seconds_;
  metrics::counter* verify_batches_;
  metrics::counter* verified_in_batches_;
  std::vector<std::pair<const route*, std::unique_ptr<per_route>>> routes_;
  std::unique_ptr<per_route> unrouted_;
};

/// Observes the seconds from construction to destruction into `fn` (a stage with many exits).
template <class Fn>
struct scoped_timer {
  explicit scoped_timer(Fn f) : fn(std::move(f)) {}
  ~scoped_timer() {
    fn(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  scoped_timer(const scoped_timer&) = delete;
  scoped_timer& operator=(const scoped_timer&) = delete;
  Fn fn;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
};

}  // namespace bt::detail
