// The axon's metrics: families and per-route children (the gauges of the shared state and their
// scrape-time collect hook are axon_impl.cpp's).
#include "ops/axon_metrics.hpp"

#include <bt/version.hpp>

#include <string>

namespace bt::detail {

namespace {

using enum axon_errc;

// Label values of the refusals, in axon_errc order.
constexpr std::array<std::string_view, axon_errc_count> errc_names{
    "header_too_large",
    "bad_http",
    "method_not_allowed",
    "missing_host",
    "duplicate_host",
    "unknown_route",
    "malformed_headers",
    "epistula_malformed",
    "btauth_malformed",
    "auth_ambiguous",
    "not_verified",
    "btauth_refused",
    "session_unknown",
    "session_expired",
    "session_mac_invalid",
    "session_hotkey",
    "session_established",
    "session_offer_invalid",
    "blacklisted",
    "nonce_stale",
    "nonce_replayed",
    "nonce_store_full",
    "nonce_store_unavailable",
    "epistula_replayed",
    "btauth_replayed",
    "queue_full",
    "body_too_large_declared",
    "body_too_large",
    "trailers_too_large",
    "body_too_slow",
    "malformed_framing",
    "malformed_body",
    "hash_mismatch",
    "request_timeout",
    "internal_error",
    "handler_error",
    "stopping",
};
static_assert(errc_names.size() == axon_errc_count && errc_names.back() == "stopping",
              "one label value per axon_errc, in order");

constexpr std::array<std::string_view, 5> verdict_names{"accepted", "stale", "replayed", "full",
                                                        "unavailable"};
static_assert(static_cast<std::size_t>(nonce_verdict::unavailable) == 4);

std::string version_text() {
  const auto v = version_as_int;
  return std::to_string(v / 1'000'000) + "." + std::to_string(v / 1000 % 1000) + "." +
         std::to_string(v % 1000);
}

}  // namespace

std::string_view errc_name(axon_errc e) noexcept {
  return errc_names[static_cast<std::size_t>(e)];
}

struct axon_metrics::per_route {
  std::string name;
  metrics::histogram* request = nullptr;
  metrics::histogram* verify = nullptr;
  metrics::histogram* queue_wait = nullptr;
  metrics::histogram* handler = nullptr;
  // Counters by status 100..599, resolved at the first answer with that status.
  std::array<std::atomic<metrics::counter*>, 500> by_status{};
};

axon_metrics::axon_metrics(metrics::registry& reg)
    : requests_(
          reg.counter("bt_axon_requests_total",
                      "Requests answered, by synapse (\"-\": no route matched) and HTTP status.",
                      {"synapse", "status"})),
      request_seconds_(reg.histogram("bt_axon_request_duration_seconds",
                                     "From a request's head to its answer, by synapse.",
                                     {"synapse"}, metrics::default_buckets())),
      verify_seconds_(
          reg.histogram("bt_axon_verification_duration_seconds",
                        "Signature, freshness and verify-function checks of a request, by synapse.",
                        {"synapse"}, metrics::fast_buckets())),
      queue_wait_seconds_(reg.histogram(
          "bt_axon_queue_wait_seconds",
          "Time a request waited in the queue for a worker (worker-pool handlers), by synapse.",
          {"synapse"}, metrics::fast_buckets())),
      handler_seconds_(reg.histogram("bt_axon_handler_duration_seconds",
                                     "Time in the synapse's forward function, by synapse.",
                                     {"synapse"}, metrics::default_buckets())),
      unrouted_seconds_(&request_seconds_.with({"-"})) {
  auto& rej =
      reg.counter("bt_axon_rejections_total",
                  "Requests refused, by reason (the pipeline stage's failure).", {"reason"});
  for (std::size_t i = 0; i < axon_errc_count; ++i) rejections_[i] = &rej.with({errc_names[i]});
  auto& ops = reg.counter("bt_axon_replay_store_operations_total",
                          "Replay (nonce) store calls, by verdict.", {"result"});
  for (std::size_t i = 0; i < verdict_names.size(); ++i)
    store_ops_[i] = &ops.with({verdict_names[i]});
  store_errors_ = &reg.counter("bt_axon_replay_store_errors_total",
                               "Replay store calls that got no answer (unavailable: refused 503).")
                       .get();
  store_seconds_ = &reg.histogram("bt_axon_replay_store_duration_seconds",
                                  "Replay store call durations.", {}, metrics::fast_buckets())
                        .get();
  verify_batches_ = &reg.counter("bt_axon_verify_batches_total",
                                 "Batch equations that decided several request signatures at "
                                 "once (verify_batch_max).")
                         .get();
  verified_in_batches_ = &reg.counter("bt_axon_verified_in_batches_total",
                                      "Request signatures decided by those batch equations.")
                              .get();
  reg.gauge("bt_axon_build_info", "Always 1; the labels name the build.",
            {"bittensor_version", "protocol"})
      .with({version_text(), std::to_string(axon_protocol)})
      .set(1);

  unrouted_ = std::make_unique<per_route>();
  unrouted_->name = "-";
  unrouted_->request = unrouted_seconds_;
}

axon_metrics::~axon_metrics() = default;

void axon_metrics::add_route(const route* key, const std::string& name, bool queued) {
  auto p = std::make_unique<per_route>();
  p->name = name;
  p->request = &request_seconds_.with({p->name});
  p->verify = &verify_seconds_.with({p->name});
  p->handler = &handler_seconds_.with({p->name});
  if (queued) p->queue_wait = &queue_wait_seconds_.with({p->name});
  routes_.emplace_back(key, std::move(p));
}

axon_metrics::per_route* axon_metrics::find(const route* r) noexcept {
  if (r == nullptr) return unrouted_.get();
  for (auto& [key, p] : routes_)  // a handful of routes: a pointer comparison each
    if (key == r) return p.get();
  return unrouted_.get();
}

void axon_metrics::on_answer(const route* r, int status, double seconds) noexcept {
  per_route& p = *find(r);
  p.request->observe(seconds);
  if (status < 100 || status > 599) return;  // not an HTTP status: never answered
  auto& slot = p.by_status[static_cast<std::size_t>(status - 100)];
  metrics::counter* c = slot.load(std::memory_order_acquire);
  if (c == nullptr) {
    try {
      c = &requests_.with({p.name, std::to_string(status)});  // once per (route, status)
    } catch (...) {
      return;  // out of memory: one request uncounted rather than a failed answer
    }
    slot.store(c, std::memory_order_release);
  }
  c->inc();
}

void axon_metrics::on_verify(const route* r, double seconds) noexcept {
  if (per_route* p = find(r); p->verify) p->verify->observe(seconds);
}

void axon_metrics::on_worker_job(const route* r, double wait, double run) noexcept {
  per_route* p = find(r);
  if (p->queue_wait) p->queue_wait->observe(wait);
  if (p->handler) p->handler->observe(run);
}

void axon_metrics::on_handler(const route* r, double run) noexcept {
  if (per_route* p = find(r); p->handler) p->handler->observe(run);
}

void axon_metrics::on_store(nonce_verdict v, double seconds) noexcept {
  const auto i = static_cast<std::size_t>(v);
  if (i < store_ops_.size()) store_ops_[i]->inc();
  if (v == nonce_verdict::unavailable) store_errors_->inc();
  store_seconds_->observe(seconds);
}

void axon_metrics::on_verify_batch(std::size_t n) noexcept {
  verify_batches_->inc();
  verified_in_batches_->inc(n);
}

}  // namespace bt::detail
