// The state behind bt::axon: options, identity, routes, and the running server (I/O threads,
// acceptor, connection registry, worker pool). Shared by axon.cpp (lifecycle), session.cpp
// (connections), pipeline.cpp (requests) and memory_session.cpp (sessions in memory).
#pragma once

#include <bt/axon.hpp>
#include <bt/detail/timer_tick.hpp>
#include <bt/proxy_protocol.hpp>

#include "transport/net.hpp"

#include "ops/admin_listener.hpp"
#include "ops/axon_metrics.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include "auth/verifier.hpp"
#include "state/worker_pool.hpp"

#include <spdlog/logger.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace bt::detail {

class connection;

/// One attached synapse type, or a plain JSON route (axon::route; no synapse type).
struct route {
  route_spec spec;
  bool plain() const noexcept { return !spec.type; }
  /// The synapse's name, or a plain route's path ("/echo": no synapse name starts with '/').
  const std::string& name() const noexcept {
    return spec.type ? spec.type->name() : spec.json_path;
  }
  const std::string& path() const noexcept {
    return spec.type ? spec.type->route() : spec.json_path;
  }
};

}  // namespace bt::detail

namespace bt {

struct axon::impl {
  impl(keypair key, axon_options o);

  // ---- configuration (immutable once started) ----
  keypair hotkey;
  axon_options opts;
  std::shared_ptr<spdlog::logger> log;  // never null
  std::shared_ptr<nonce_store> nonces;  // never null
  detail::verifier verifier;
  std::string uuid;  // this axon's uuid1 text (axon.uuid in error responses)
  std::vector<std::unique_ptr<detail::route>> routes;
  std::string synapse_list;  // "['Synapse', 'Dummy']", Python's repr of the names, for 404s
  /// opts.trusted_proxies parsed (the constructor throws std::invalid_argument on a bad entry).
  std::vector<proxy_protocol::cidr> trusted_proxies;
  /// Connections closed before their first request for want of a valid PROXY header, by
  /// proxy_protocol::reject_reason (for metrics).
  std::array<std::atomic<std::uint64_t>, proxy_protocol::reject_reason_count> proxy_rejections{};
  /// axon::metrics(), and the axon's own families in it (set up by the constructor; per-route
  /// children by prepare_serving()).
  bt::metrics::registry registry;
  std::unique_ptr<detail::axon_metrics> stats;

  /// Once the routes are final, before the first connection: the 404 list and the worker pool
  /// (start(), or the in-memory driver of memory_session.hpp).
  void prepare_serving();

  /// Exact match of the path (query string already removed) against the routes (D24).
  /// Linear: a miner serves a handful of types and comparing a few short strings beats hashing.
  const detail::route* find_route(std::string_view path) const noexcept {
    for (const auto& r : routes)
      if (r->path() == path) return r.get();
    return nullptr;
  }

  // ---- running server ----
  // Member order matters: whatever a connection or a coroutine frame touches when the
  // io_context destroys it (the pool's reservations, the registry, the logger) is declared
  // before `ioc`, so it is destroyed after it.
  std::unique_ptr<detail::worker_pool> pool;
  std::vector<std::thread> threads;
  std::vector<std::thread::id> thread_ids;
  std::uint16_t bound_port = 0;
  std::string bound_ip;
  std::atomic<bool> started{false};
  std::atomic<bool> running{false};
  std::atomic<bool> stopping{false};
  // Routes of the handlers stop() abandoned (axon::abandoned_handlers()); written by stop().
  std::vector<std::string> abandoned;

  // I/O threads that have not returned from ioc.run() yet (stop() waits on it with a deadline).
  std::mutex threads_m;
  std::condition_variable threads_cv;
  std::size_t threads_running = 0;

  // Connection registry: only touched on connect, disconnect and stop, never per request.
  std::mutex conns_m;
  std::condition_variable conns_cv;
  std::list<std::weak_ptr<detail::connection>> conns;
  std::atomic<std::size_t> conn_count{0};
  // Capacity of the body buffers idle connections keep (connection::keep_or_free); at most
  // opts.idle_buffer_bytes.
  std::atomic<std::size_t> idle_buffer_bytes{0};

  // One io_context per I/O thread, each run by exactly that thread: a connection lives on one
  // of them (round robin at accept), so its completions never wake another thread and the
  // scheduler needs no cross-thread hand-offs.
  std::vector<std::unique_ptr<detail::net::io_context>> iocs;
  std::size_t next_ioc = 0;  // accept loop only
  // Keep each context's run() going while it has no connection; released by stop().
  std::vector<detail::net::executor_work_guard<detail::net::io_context::executor_type>> work;
  // One timer_tick per context, so the per-operation deadlines cost no timerfd system call;
  // started with the threads, stopped by stop() with the work guards.
  std::vector<std::unique_ptr<detail::timer_tick>> ticks;
  std::optional<detail::acceptor_t> acceptor;  // an I/O object: destroyed before the contexts
  // opts.admin_listen's server; owns I/O objects too: destroyed before the contexts.
  std::unique_ptr<detail::admin_listener> admin;
  /// "" while ready to serve (for /readyz), else why not: draining, not listening, or the
  /// replay store's unavailable_reason().
  std::string readiness() const;

  /// Adds a new connection and returns its registry position.
  std::list<std::weak_ptr<detail::connection>>::iterator register_connection(
      const std::shared_ptr<detail::connection>& c);
  void unregister_connection(std::list<std::weak_ptr<detail::connection>>::iterator pos);
  /// Runs `fn(connection&)` on each open connection's strand.
  template <class Fn>
  void for_each_connection(Fn fn);

  /// Whether the calling thread is one of this axon's I/O threads.
  bool on_io_thread() const noexcept;
};

}  // namespace bt
