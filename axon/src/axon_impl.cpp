// bt::axon::impl, the state the axon shares with its connections and stages: its construction
// from the options, the readiness answer, the connection registry and what start() prepares
// once the routes are fixed. The lifecycle itself (start, the accept loop, stop) is axon.cpp's.
#include "state/axon_impl.hpp"

#include "session/session.hpp"

#include <bt/detail/uuid.hpp>
#include <bt/python_str.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <thread>

namespace bt {

namespace {

std::size_t resolve_io_threads(std::size_t requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::shared_ptr<spdlog::logger> quiet_logger() {
  auto l = std::make_shared<spdlog::logger>("bt-axon");  // no sinks
  l->set_level(spdlog::level::off);
  return l;
}

// The gauges that mirror this state (connections, queue, workers, PROXY refusals), read by a
// collect hook at scrape time, never per request. Registered here, by the state's owner, so that
// ops/axon_metrics (a lower layer) never sees axon::impl.
void register_state_gauges(bt::metrics::registry& reg, const axon::impl& core) {
  auto& open = reg.gauge("bt_axon_open_connections", "Connections open on the public port.").get();
  auto& depth =
      reg.gauge("bt_axon_queue_depth", "Requests holding a queue slot (waiting for a worker).")
          .get();
  auto& busy = reg.gauge("bt_axon_busy_workers", "Workers running a forward function now.").get();
  auto& workers = reg.gauge("bt_axon_workers", "Worker threads.").get();
  auto& proxy = reg.counter("bt_axon_proxy_rejections_total",
                            "Connections closed for want of a valid PROXY protocol header, by "
                            "reason.",
                            {"reason"});
  std::array<bt::metrics::counter*, proxy_protocol::reject_reason_count> proxy_children{};
  for (std::size_t i = 0; i < proxy_children.size(); ++i)
    proxy_children[i] = &proxy.with(
        {std::string(proxy_protocol::to_string(static_cast<proxy_protocol::reject_reason>(i)))});
  reg.on_collect([&core, &open, &depth, &busy, &workers, proxy_children] {
    open.set(static_cast<double>(core.conn_count.load(std::memory_order_relaxed)));
    if (core.pool) {
      depth.set(static_cast<double>(core.pool->queued()));
      busy.set(static_cast<double>(core.pool->busy()));
      workers.set(static_cast<double>(core.pool->threads()));
    }
    for (std::size_t i = 0; i < proxy_children.size(); ++i)
      proxy_children[i]->store(core.proxy_rejections[i].load(std::memory_order_relaxed));
  });
}

}  // namespace

axon::impl::impl(keypair key, axon_options o)
    : hotkey(std::move(key)),
      opts(std::move(o)),
      log(opts.logger ? opts.logger : quiet_logger()),
      nonces(opts.nonces ? opts.nonces : std::make_shared<memory_nonce_store>()),
      verifier(hotkey.ss58_address(), std::chrono::nanoseconds(opts.nonce_future_skew).count(),
               std::chrono::nanoseconds(opts.nonce_max_timeout).count()),
      uuid(detail::make_uuid1()) {
  for (const auto& block : opts.trusted_proxies) {
    try {
      trusted_proxies.push_back(proxy_protocol::cidr::parse(block));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("bt::axon: trusted_proxies: ") + e.what());
    }
  }
  const std::size_t n = resolve_io_threads(opts.io_threads);
  for (std::size_t i = 0; i < n; ++i) iocs.push_back(std::make_unique<detail::net::io_context>(1));
  stats = std::make_unique<detail::axon_metrics>(registry);
  register_state_gauges(registry, *this);
}

std::string axon::impl::readiness() const {
  if (stopping.load()) return "draining";
  if (!running.load()) return "not listening";
  std::string why = nonces->unavailable_reason();
  return why.empty() ? why : "replay store: " + why;
}

std::list<std::weak_ptr<detail::connection>>::iterator axon::impl::register_connection(
    const std::shared_ptr<detail::connection>& c) {
  std::lock_guard lk(conns_m);
  conn_count.fetch_add(1, std::memory_order_relaxed);
  return conns.insert(conns.end(), c);
}

void axon::impl::unregister_connection(std::list<std::weak_ptr<detail::connection>>::iterator pos) {
  std::lock_guard lk(conns_m);
  conns.erase(pos);
  conn_count.fetch_sub(1, std::memory_order_relaxed);
  conns_cv.notify_all();
}

bool axon::impl::on_io_thread() const noexcept {
  const auto me = std::this_thread::get_id();
  return std::find(thread_ids.begin(), thread_ids.end(), me) != thread_ids.end();
}

void axon::impl::prepare_serving() {
  synapse_list = "[";
  bool first = true;
  for (const auto& r : routes) {
    if (r->plain()) continue;  // "Available synapses": plain routes are not synapses
    if (!first) synapse_list += ", ";
    first = false;
    append_python_repr(r->name(), synapse_list);
  }
  synapse_list += "]";
  pool = std::make_unique<detail::worker_pool>(opts.max_workers, opts.max_queued_requests);
  for (const auto& r : routes)
    stats->add_route(r.get(), r->name(),
                     !r->spec.run_inline && !r->spec.forward_async && !r->spec.stream_async);
}

}  // namespace bt
