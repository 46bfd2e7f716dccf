// bt::axon's lifecycle: routes, start (bind, listen, threads), the accept loop, and the graceful
// stop (a task-group style drain with a deadline, then escalation; never ioc.stop() first).
#include <bt/axon.hpp>
#include <bt/detail/uuid.hpp>

#include "auth/btauth_policy.hpp"
#include "session/session.hpp"
#include "state/axon_impl.hpp"

#include <bt/python_str.hpp>
#include <bt/version.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <sodium.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <stdexcept>

namespace bt {

namespace net = detail::net;
namespace beast = detail::beast;
using detail::tcp;

namespace {

std::string strip_brackets(std::string ip) {
  if (ip.size() >= 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  return ip;
}

int ip_type_of(const std::string& ip) {
  beast::error_code ec;
  const auto a = net::ip::make_address(ip, ec);
  return !ec && a.is_v6() ? 6 : 4;
}

void run_io_thread(axon::impl& s, net::io_context& ioc) {
  for (;;) {
    try {
      ioc.run();
      break;
    } catch (const std::exception& e) {  // handlers catch their own; this is a bug, keep serving
      s.log->warn("axon: I/O thread caught: {}", e.what());
    } catch (...) {
      s.log->warn("axon: I/O thread caught a non-exception");
    }
  }
  std::lock_guard lk(s.threads_m);
  --s.threads_running;
  s.threads_cv.notify_all();
}

/// The completion of a detached coroutine of the axon: logs at `level` what ended it, if it
/// threw. `what` names it in the line (a literal: it outlives the coroutine).
auto log_failure(axon::impl& s, spdlog::level::level_enum level, const char* what) {
  return [&s, level, what](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      s.log->log(level, "axon: {} ended with: {}", what, x.what());
    } catch (...) {
      s.log->log(level, "axon: {} ended with a non-exception", what);
    }
  };
}

detail::task<void> accept_loop(axon::impl& s) {
  auto& acceptor = *s.acceptor;
  for (;;) {
    net::io_context& home = *s.iocs[s.next_ioc++ % s.iocs.size()];
    auto [ec, socket] = co_await acceptor.async_accept(net::make_strand(home), detail::use_task);
    if (ec) {
      if (s.stopping.load() || ec == net::error::operation_aborted || !acceptor.is_open())
        co_return;
      s.log->warn("axon: accept failed: {}", ec.message());
      if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space ||
          ec == net::error::no_memory) {
        // Out of file descriptors: pause instead of spinning; connections closing will free some.
        net::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(50));
        co_await pause.async_wait(detail::use_task);
      }
      continue;
    }
    if (s.conn_count.load(std::memory_order_relaxed) >= s.opts.max_connections) {
      beast::error_code ignored;
      socket.close(ignored);  // shed load: the client sees a disconnect
      continue;
    }
    auto c = detail::make_tcp_connection(s, std::move(socket));
    c->registered_at(s.register_connection(c));
    net::co_spawn(c->strand(), detail::connection::run(c),
                  log_failure(s, spdlog::level::warn, "connection"));
  }
}

/// A synapse route takes any non-empty set of the known schemes (PROTOCOL 12.4); an empty set
/// or an unknown bit is refused.
void check_synapse_auth(auth_mode mode, std::string_view caller) {
  if (mode == auth_mode{} || !accepts(auth_mode::either, mode))
    throw std::invalid_argument("bt::axon::" + std::string(caller) + ": unknown auth_mode");
}

}  // namespace

template <class Fn>
void axon::impl::for_each_connection(Fn fn) {
  std::vector<std::shared_ptr<detail::connection>> live;
  {
    std::lock_guard lk(conns_m);
    live.reserve(conns.size());
    for (auto& w : conns)
      if (auto c = w.lock()) live.push_back(std::move(c));
  }
  // Posted outside the lock: a connection released here may unregister itself.
  for (auto& c : live) {
    const detail::strand_t ex = c->strand();
    net::post(ex, [c, fn] { fn(*c); });
  }
}

// ---- axon ----

axon::axon(keypair hotkey, axon_options opts)
    : impl_(std::make_unique<impl>(std::move(hotkey), std::move(opts))) {
  // Python's Axon.__init__ attaches the ping: a forward that returns its input. It runs inline on
  // the I/O thread because it is ours and does nothing; attach<bt::synapse>() replaces it.
  detail::route_spec ping;
  ping.type =
      std::shared_ptr<const synapse_descriptor>(std::shared_ptr<void>(), &descriptor_of<synapse>());
  ping.make = [] { return detail::synapse_ptr(new synapse(), [](synapse* p) { delete p; }); };
  ping.forward = [](synapse&, const request_context&) {};
  ping.run_inline = true;
  impl_->routes.push_back(std::make_unique<detail::route>(detail::route{std::move(ping)}));
}

axon::~axon() {
  stop();
  // Threads stop() abandoned still run handlers that touch the routes, the metrics and the
  // pool: they take the state over, and the last of them destroys it (never this thread).
  if (impl_->pool) {
    std::shared_ptr<void> state(impl_.release(), [](void* p) { delete static_cast<impl*>(p); });
    auto* pool = static_cast<impl*>(state.get())->pool.get();
    pool->hand_over_to_abandoned(state);  // else `state` is destroyed here
  }
}

void axon::add_route(detail::route_spec r) {
  auto& s = *impl_;
  if (s.started.load())
    throw std::logic_error("bt::axon::attach: routes are fixed once the axon has started");
  check_synapse_auth(r.policy.auth, "attach");
  for (auto& existing : s.routes)
    if (existing->plain() && existing->path() == r.type->route())
      throw std::logic_error("bt::axon::attach: path '" + r.type->route() +
                             "' is already served by a plain route");
  for (auto& existing : s.routes) {
    if (existing->plain() || existing->name() != r.type->name()) continue;
    if (existing->spec.run_inline) {  // the built-in ping may be replaced once
      if (!r.policy.blacklist && !r.policy.priority && !r.policy.verify)
        r.policy = std::move(existing->spec.policy);  // keep a policy set with set_route_options
      existing->spec = std::move(r);
      return;
    }
    throw std::logic_error("bt::axon::attach: synapse '" + r.type->name() +
                           "' is already attached");
  }
  s.routes.push_back(std::make_unique<detail::route>(detail::route{std::move(r)}));
}

axon& axon::route(std::string_view method, std::string_view path, json_handler handler,
                  json_route_options options) {
  auto& s = *impl_;
  if (s.started.load())
    throw std::logic_error("bt::axon::route: routes are fixed once the axon has started");
  if (method != "POST" && method != "GET")
    throw std::invalid_argument("bt::axon::route: method must be \"POST\" or \"GET\", not \"" +
                                std::string(method) + "\"");
  const bool bad_char = std::any_of(path.begin(), path.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u >= 0x7f || c == '?' || c == '#';
  });
  if (path.size() < 2 || path.front() != '/' || bad_char)
    throw std::invalid_argument(
        "bt::axon::route: path must be '/' and printable ASCII without "
        "spaces, '?' or '#': \"" +
        std::string(path) + "\"");
  if (!handler) throw std::invalid_argument("bt::axon::route: null handler");
  // A bittensor signature covers a body only through a synapse's required hash fields
  // (PROTOCOL 5.5); a plain route has no synapse, so it would leave the body unsigned.
  if (options.auth == auth_mode{} ||
      !accepts(auth_mode::epistula | auth_mode::btauth, options.auth))
    throw std::invalid_argument(
        "bt::axon::route: plain routes accept a non-empty set of auth_mode::epistula and "
        "auth_mode::btauth (a bittensor signature would not cover a plain body)");
  for (const auto& w : {options.btauth_max_age, options.btauth_allowed_skew})
    if (w && !detail::valid_btauth_window(*w))
      throw std::invalid_argument(
          "bt::axon::route: btauth_max_age and btauth_allowed_skew must be 0 to 24 hours");
  for (const auto& existing : s.routes)
    if (existing->path() == path)
      throw std::logic_error("bt::axon::route: path '" + std::string(path) + "' is already served");
  detail::route_spec r;
  r.json_forward = std::move(handler);
  r.json_path = std::string(path);
  r.json_get = method == "GET";
  r.json_policy = std::move(options);
  s.routes.push_back(std::make_unique<detail::route>(detail::route{std::move(r)}));
  return *this;
}

axon& axon::set_route_options(std::string_view synapse_name, route_options policy) {
  auto& s = *impl_;
  if (s.started.load())
    throw std::logic_error(
        "bt::axon::set_route_options: routes are fixed once the axon has started");
  check_synapse_auth(policy.auth, "set_route_options");
  for (auto& r : s.routes) {
    if (!r->plain() && r->name() == synapse_name) {
      r->spec.policy = std::move(policy);
      return *this;
    }
  }
  throw std::logic_error("bt::axon::set_route_options: no synapse named '" +
                         std::string(synapse_name) + "'");
}

void axon::start() {
  std::error_code ec;
  start(ec);
  if (ec) throw std::system_error(ec, "bt::axon::start");
}

void axon::start(std::error_code& ec) {
  ec.clear();
  auto& s = *impl_;
  if (s.started.exchange(true)) {
    ec = std::make_error_code(std::errc::operation_in_progress);
    return;
  }
  const auto fail = [&](std::error_code e) {
    ec = e;
    if (s.acceptor) {
      beast::error_code ignored;
      s.acceptor->close(ignored);
    }
  };

  const std::string ip = strip_brackets(s.opts.ip);
  beast::error_code bec;
  auto address = net::ip::make_address(ip, bec);
  if (bec) return fail(std::make_error_code(std::errc::invalid_argument));
  if (s.opts.insecure_skip_verification && !address.is_loopback()) {
    s.log->error("axon: insecure_skip_verification refused: {} is not a loopback address", ip);
    return fail(std::make_error_code(std::errc::operation_not_permitted));
  }
  if (s.opts.insecure_skip_verification)
    s.log->warn(
        "axon: SIGNATURE AND NONCE VERIFICATION IS OFF (insecure_skip_verification); loopback "
        "only");
  // Epistula's window bounds the timestamp arithmetic (ms, and ns for the replay store): a day
  // each way is far beyond any clock skew and keeps every sum inside 64 bits.
  constexpr auto epistula_window_cap = std::chrono::hours(24);
  for (const auto w : {s.opts.epistula_past_window, s.opts.epistula_future_window}) {
    if (w.count() < 0 || w > epistula_window_cap) {
      s.log->error("axon: epistula_past_window and epistula_future_window must be 0 to 24 h");
      return fail(std::make_error_code(std::errc::invalid_argument));
    }
  }
  if (!detail::valid_btauth_window(s.opts.btauth_max_age) ||
      !detail::valid_btauth_window(s.opts.btauth_allowed_skew)) {
    s.log->error("axon: btauth_max_age and btauth_allowed_skew must be 0 to 24 h");
    return fail(std::make_error_code(std::errc::invalid_argument));
  }
  if (s.opts.proxy_protocol && s.trusted_proxies.empty()) {
    s.log->error("axon: proxy_protocol needs trusted_proxies (every connection would be closed)");
    return fail(std::make_error_code(std::errc::invalid_argument));
  }
  if (s.opts.sign_responses && !s.hotkey.has_secret()) {
    s.log->error("axon: sign_responses needs the hotkey's secret key (or sign_responses = false)");
    return fail(std::make_error_code(std::errc::invalid_argument));
  }
  if (s.opts.accept_sessions && !s.hotkey.has_secret()) {
    s.log->error(
        "axon: accept_sessions needs the hotkey's secret key (or accept_sessions = false)");
    return fail(std::make_error_code(std::errc::invalid_argument));
  }
  if (s.opts.session_max_requests < 1 || s.opts.session_max_seconds < 1 ||
      s.opts.session_max_seconds > 366 * 86400) {
    s.log->error(
        "axon: session_max_requests must be at least 1, session_max_seconds 1 to 31622400 (a "
        "year)");
    return fail(std::make_error_code(std::errc::invalid_argument));
  }
  if (s.opts.sign_error_responses && !s.hotkey.has_secret())
    s.log->warn("axon: the hotkey has no secret; error responses will not be signed");

  s.acceptor.emplace(net::make_strand(*s.iocs.front()));
  tcp::endpoint endpoint(address, s.opts.port);
  s.acceptor->open(endpoint.protocol(), bec);
  if (bec && address.is_v6() && address.is_unspecified()) {
    // No IPv6 on this host: the dual-stack default falls back to IPv4.
    s.log->warn("axon: IPv6 unavailable ({}); listening on 0.0.0.0", bec.message());
    endpoint = tcp::endpoint(net::ip::address_v4::any(), s.opts.port);
    s.acceptor->open(endpoint.protocol(), bec);
  }
  if (bec) return fail(bec);
  if (endpoint.address().is_v6() && endpoint.address().is_unspecified())
    s.acceptor->set_option(net::ip::v6_only(false), bec);  // accept IPv4-mapped peers too
  s.acceptor->set_option(net::socket_base::reuse_address(true), bec);
  if (s.opts.reuse_port) {
#ifdef SO_REUSEPORT
    using reuse_port = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
    s.acceptor->set_option(reuse_port(true), bec);
    if (bec) return fail(bec);
#else
    return fail(std::make_error_code(std::errc::operation_not_supported));
#endif
  }
  s.acceptor->bind(endpoint, bec);
  if (bec) return fail(bec);
  s.acceptor->listen(net::socket_base::max_listen_connections, bec);
  if (bec) return fail(bec);
  const auto local = s.acceptor->local_endpoint(bec);
  if (bec) return fail(bec);
  s.bound_port = local.port();
  s.bound_ip = local.address().to_string();

  if (!s.opts.admin_listen.empty()) {
    s.admin = std::make_unique<detail::admin_listener>(
        *s.iocs.front(), s.opts,
        detail::admin_listener::hooks{[&s] { return s.readiness(); },
                                      [&s] { return s.registry.render(); }});
    std::error_code aec;
    s.admin->start(aec);
    if (aec) {
      s.log->error("axon: admin listener on '{}' failed: {}", s.opts.admin_listen, aec.message());
      s.admin.reset();
      return fail(aec);
    }
  }

  // A store that does I/O (redis_nonce_store) runs on the I/O threads' loops from now until
  // stop() detaches it (nonce_store::attach); nothing below can fail.
  {
    std::vector<net::io_context*> loops;
    for (auto& ioc : s.iocs) loops.push_back(ioc.get());
    s.nonces->attach(loops);
  }
  s.prepare_serving();
  net::co_spawn(s.acceptor->get_executor(), accept_loop(s),
                log_failure(s, spdlog::level::err, "accept loop"));

  const std::size_t n = s.iocs.size();
  for (auto& ioc : s.iocs) {
    s.work.push_back(net::make_work_guard(*ioc));
    s.ticks.push_back(std::make_unique<detail::timer_tick>(*ioc));
    s.ticks.back()->start();
  }
  s.threads_running = n;
  s.threads.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    s.threads.emplace_back([&s, &ioc = *s.iocs[i]] { run_io_thread(s, ioc); });
  for (auto& t : s.threads) s.thread_ids.push_back(t.get_id());
  s.running = true;
  // An IPv6 address in brackets, as in a URL: "[::]:8091", not ":::8091".
  const bool v6 = s.bound_ip.find(':') != std::string::npos;
  s.log->info("axon: listening on {}{}{}:{} as {} ({} I/O threads, {} workers)", v6 ? "[" : "",
              s.bound_ip, v6 ? "]" : "", s.bound_port, s.hotkey.ss58_address(), n,
              s.pool->threads());
  if (s.opts.proxy_protocol) {
    std::string from;
    for (const auto& block : s.trusted_proxies)
      from += (from.empty() ? "" : ", ") + block.to_string();
    s.log->info("axon: PROXY protocol header required, from {} only", from);
  }
  if (s.admin)
    s.log->info("axon: admin listener (/metrics, /healthz, /readyz) on {} port {}",
                s.opts.admin_listen, s.admin->port());
}

void axon::stop() {
  auto& s = *impl_;
  if (!s.started.load() || s.threads.empty()) return;
  if (s.on_io_thread() || detail::worker_pool::on_worker_thread())
    throw std::logic_error("bt::axon::stop must not be called from an I/O thread or a handler");
  if (s.stopping.exchange(true)) return;
  s.running = false;

  // 1. Stop accepting.
  if (s.acceptor) {
    net::post(s.acceptor->get_executor(), [&s] {
      beast::error_code ignored;
      s.acceptor->close(ignored);
    });
  }
  // 2. Idle connections close now; busy ones after answering their current request.
  const auto drain_deadline = std::chrono::steady_clock::now() + s.opts.drain_timeout;
  s.for_each_connection([](detail::connection& c) { c.notify_stop(); });
  bool drained;
  {
    std::unique_lock lk(s.conns_m);
    drained = s.conns_cv.wait_until(lk, drain_deadline, [&] { return s.conn_count.load() == 0; });
  }
  // 3. Past the drain deadline: cut what is left; handlers see cancelled().
  if (!drained) {
    s.log->warn("axon: drain deadline passed with {} connections open; closing them",
                s.conn_count.load());
    s.for_each_connection([](detail::connection& c) { c.abort(); });
    std::unique_lock lk(s.conns_m);
    s.conns_cv.wait_for(lk, std::chrono::seconds(2), [&] { return s.conn_count.load() == 0; });
  }
  // The admin listener answered /readyz "draining" until here; it closes with the connections.
  if (s.admin) s.admin->stop();
  // 4. Workers: nothing new can arrive. A handler whose request is answered (408) or cut may run
  //    until the drain deadline, one told to stop (cancelled()) for a grace period of 1 s;
  //    then it is abandoned (its thread detached, its result dropped) and named in the log.
  if (s.pool) {
    const std::chrono::steady_clock::duration grace =
        drained ? std::max(drain_deadline - std::chrono::steady_clock::now(),
                           std::chrono::steady_clock::duration::zero())
                : std::chrono::seconds(1);
    for (const auto& job : s.pool->stop(grace)) {
      const auto* r = static_cast<const detail::request_job&>(*job).r;
      s.abandoned.push_back(r ? r->name() : std::string("?"));
    }
    if (!s.abandoned.empty()) {
      std::string names;
      for (const auto& n : s.abandoned) names += (names.empty() ? "" : ", ") + n;
      s.log->warn(
          "axon: {} handler(s) still running at the drain deadline were abandoned (their "
          "results are dropped): {}",
          s.abandoned.size(), names);
    }
  }
  // No request is left to record: the store's connections on our loops close now, while the
  // loops still run.
  {
    std::vector<net::io_context*> loops;
    for (auto& ioc : s.iocs) loops.push_back(ioc.get());
    s.nonces->detach(loops);
  }
  // 5. With no connection and no acceptor left the I/O threads run out of work and return. A
  //    coroutine handler ignoring cancellation would keep them busy: escalate after a grace period.
  for (auto& t : s.ticks) t->stop();
  for (auto& w : s.work) w.reset();
  {
    std::unique_lock lk(s.threads_m);
    if (!s.threads_cv.wait_for(lk, std::chrono::seconds(2),
                               [&] { return s.threads_running == 0; })) {
      s.log->warn("axon: I/O still busy after the drain; stopping the event loop");
      for (auto& ioc : s.iocs) ioc->stop();
    }
  }
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  s.ticks.clear();  // their loops have returned: no handler of theirs is left
  s.log->info("axon: stopped");
}

void axon::run(const std::function<void(axon&)>& on_listening) {
  // A private io_context: run() owns the wait and nothing else runs on it.
  net::io_context signal_ioc(1);
  net::signal_set signals(signal_ioc, SIGINT, SIGTERM);
  int received = 0;
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (!ec) received = sig;
  });
  if (!running()) start();
  if (on_listening) on_listening(*this);
  signal_ioc.run();
  impl_->log->info("axon: {} received; draining and stopping",
                   received == SIGINT ? "SIGINT" : "SIGTERM");
  stop();
}

bool axon::running() const noexcept {
  return impl_->running.load();
}

std::vector<std::string> axon::abandoned_handlers() const {
  return impl_->abandoned;
}

axon_info axon::info() const {
  const auto& s = *impl_;
  axon_info a;
  a.version = version_as_int;
  a.ip = !s.opts.external_ip.empty() ? strip_brackets(s.opts.external_ip)
         : !s.bound_ip.empty()       ? s.bound_ip
                                     : strip_brackets(s.opts.ip);
  a.port = s.opts.external_port != 0 ? s.opts.external_port
           : s.bound_port != 0       ? s.bound_port
                                     : s.opts.port;
  a.ip_type = ip_type_of(a.ip);
  a.hotkey = s.hotkey.ss58_address();
  a.coldkey = s.opts.coldkey;
  a.protocol = axon_protocol;
  return a;
}

std::uint16_t axon::port() const noexcept {
  return impl_->bound_port;
}

std::string axon::bound_ip() const {
  return impl_->bound_ip;
}

const keypair& axon::hotkey() const noexcept {
  return impl_->hotkey;
}

std::vector<std::string> axon::synapse_names() const {
  std::vector<std::string> names;
  for (const auto& r : impl_->routes)
    if (!r->plain()) names.push_back(r->name());
  return names;
}

std::size_t axon::connections() const noexcept {
  return impl_->conn_count.load();
}

std::size_t axon::queued_requests() const {
  return impl_->pool ? impl_->pool->queued() : 0;
}

bt::metrics::registry& axon::metrics() noexcept {
  return impl_->registry;
}

std::uint16_t axon::admin_port() const noexcept {
  return impl_->admin ? impl_->admin->port() : 0;
}

}  // namespace bt
