// The admin listener: a second, small HTTP server on the axon's first io_context, off unless
// axon_options::admin_listen names an address. It answers
//   GET /metrics  200, the registry in the Prometheus text format (text/plain; version=0.0.4)
//   GET /healthz  200 "ok" (it is answered by the event loop, so an answer proves the loop runs)
//   GET /readyz   200 "ready" while the public port listens, the replay store answers
//                 (nonce_store::unavailable_reason() empty) and the axon is not draining;
//                 else 503 with the reason
//   HEAD of those the same without a body; another method 405, another path 404.
// One request per connection (Connection: close). The head is bounded (admin_max_header_bytes:
// 431), a body is refused (413), the whole request is due within admin_timeout (408), and at most
// admin_max_connections are open at once (more are closed at accept). Nothing here touches the
// public acceptor, its connections or the worker pool: bad input on the admin port cannot slow
// the public one beyond the little I/O-thread time it takes to refuse.
#pragma once

#include "transport/net.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

namespace bt {
struct axon_options;
}

namespace bt::detail {

/// "HOST:PORT" or "[V6]:PORT" (a numeric address; port 0 lets the system choose) as an endpoint.
/// Throws std::invalid_argument naming what is wrong.
tcp::endpoint parse_admin_endpoint(const std::string& host_port);

class admin_listener {
 public:
  /// `readiness()` returns "" when ready, else the reason; `metrics()` renders the registry.
  struct hooks {
    std::function<std::string()> readiness;
    std::function<std::string()> metrics;
  };
  admin_listener(net::io_context& ioc, const axon_options& opts, hooks h);
  ~admin_listener();
  admin_listener(const admin_listener&) = delete;
  admin_listener& operator=(const admin_listener&) = delete;

  /// Binds and listens on opts.admin_listen; serving starts once the io_context runs.
  void start(std::error_code& ec);
  /// Closes the acceptor and every open admin connection (posted to the listener's strand).
  /// Idempotent; the owner keeps the listener alive until the io_context is done.
  void stop();
  /// The bound port (0 before start()).
  std::uint16_t port() const noexcept { return port_; }

  struct state;

 private:
  std::shared_ptr<state> state_;
  std::uint16_t port_ = 0;
};

}  // namespace bt::detail
