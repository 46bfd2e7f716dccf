// bt::rpc_client (rpc_client.hpp): one websocket, a map id -> pending call, a write queue, and the
// connect/read/write coroutines, all on one strand.
#include <bt/chain/rpc_client.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <openssl/ssl.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <variant>

namespace bt {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;

rpc_call_error::rpc_call_error(bt::error e, bt::json error_object)
    : std::runtime_error(e.message()), error_(std::move(e)), object_(std::move(error_object)) {}

namespace detail {

namespace {
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
using plain_ws = websocket::stream<beast::tcp_stream>;
using tls_ws = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;
}  // namespace

/// One websocket connection (plain or TLS). Shared by the coroutines that use it; `open` turns
/// false when it is closed, so late completions on it are ignored.
struct rpc_connection {
  std::variant<std::unique_ptr<plain_ws>, std::unique_ptr<tls_ws>> ws;
  bool open = true;
  void close() {
    open = false;
    std::visit([](auto& w) { beast::get_lowest_layer(*w).close(); }, ws);
  }
};

namespace {

/// Whether a call to `method` only reads the chain, so that sending it twice is harmless: the
/// getters of the chain_ and state_ namespaces, runtime API calls (state_call runs on a state
/// snapshot and changes nothing) and the system_ queries. Anything else (author_submitExtrinsic,
/// subscriptions, methods unknown here) may act, and is never sent again.
bool only_reads(std::string_view method) {
  static constexpr std::string_view reads[] = {
      "state_call",        "state_queryStorageAt", "system_accountNextIndex",
      "system_chain",      "system_health",        "system_name",
      "system_properties", "system_version",       "rpc_methods"};
  if (method.starts_with("chain_get") || method.starts_with("state_get")) return true;
  return std::find(std::begin(reads), std::end(reads), method) != std::end(reads);
}

}  // namespace

struct rpc_state : std::enable_shared_from_this<rpc_state> {
  struct pending {
    std::string method;
    std::string frame;  // the request as written
    rpc_client::handler_type handler;
    std::unique_ptr<net::steady_timer> timer;
    std::shared_ptr<rpc_connection> sent_on;  // null until written
    bool sent_again = false;                  // a read is sent at most twice
  };

  rpc_state(net::any_io_executor ex, endpoint e, rpc_client_options o)
      : strand(net::make_strand(ex)),
        ep(std::move(e)),
        opt(o),
        ssl_ctx(net::ssl::context::tls_client),
        backoff_timer(strand),
        resolver(strand),
        rng(std::random_device{}()) {
    if (ep.tls) {
      ssl_ctx.set_default_verify_paths();
      ssl_ctx.set_verify_mode(net::ssl::verify_peer);
    }
  }

  net::strand<net::any_io_executor> strand;
  endpoint ep;
  rpc_client_options opt;
  net::ssl::context ssl_ctx;
  net::steady_timer backoff_timer;
  tcp::resolver resolver;
  std::mt19937_64 rng;

  std::uint64_t next_id = 1;
  std::map<std::uint64_t, pending> calls;
  std::deque<std::uint64_t> unsent;            // ids of calls waiting for a connection, in order
  std::shared_ptr<rpc_connection> conn;        // the open connection, if any
  std::shared_ptr<rpc_connection> connecting;  // the one being set up, if any
  bool connector_running = false;
  bool writing = false;
  bool shut = false;
  rpc_client_stats stats;
  mutable std::mutex stats_mutex;

  // --- completing calls (on the strand) ---

  void complete(std::uint64_t id, bt::error e, bt::json result) {
    auto it = calls.find(id);
    if (it == calls.end()) return;
    pending p = std::move(it->second);
    calls.erase(it);
    if (p.timer) p.timer->cancel();
    if (e && e.what.empty()) e.what = p.method;
    {
      std::lock_guard lock(stats_mutex);
      ++stats.responses;
    }
    // Runs the handler on its associated executor (the strand's if it has none), never inside
    // this function, which may be iterating the map.
    net::post(strand, net::append(std::move(p.handler), std::move(e), std::move(result)));
  }

  void fail_where(const std::function<bool(const pending&)>& pred, chain_errc code,
                  const std::string& detail) {
    std::vector<std::uint64_t> ids;
    for (auto& [id, p] : calls) {
      if (pred(p)) ids.push_back(id);
    }
    for (auto id : ids) complete(id, bt::error{code, {}, detail}, nullptr);
  }

  // --- submitting ---

  void submit(std::string method, bt::json params, rpc_client::handler_type handler) {
    const std::uint64_t id = next_id++;
    bt::json req = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    req["params"] = params.is_null() ? bt::json::array() : std::move(params);
    pending p{method, req.dump(), std::move(handler), std::make_unique<net::steady_timer>(strand),
              nullptr};
    p.timer->expires_after(opt.request_timeout);
    p.timer->async_wait([self = shared_from_this(), id](boost::system::error_code ec) {
      if (ec) return;
      self->complete(id,
                     bt::error{chain_errc::timeout,
                               {},
                               "no answer from " + self->ep.url() + " within " +
                                   std::to_string(self->opt.request_timeout.count()) + " ms"},
                     nullptr);
    });
    calls.emplace(id, std::move(p));
    if (shut) {
      complete(id, bt::error{chain_errc::closed, {}, "the client is shutting down"}, nullptr);
      return;
    }
    unsent.push_back(id);
    if (conn) {
      start_writer();
    } else {
      start_connector();
    }
  }

  // --- connecting ---

  void start_connector() {
    if (connector_running || shut) return;
    connector_running = true;
    net::co_spawn(strand, connector(shared_from_this()), net::detached);
  }

  std::chrono::milliseconds backoff(unsigned attempt) {
    // attempt >= 1: the wait before attempt number attempt+1.
    auto d = opt.backoff_initial;
    for (unsigned i = 1; i < attempt && d < opt.backoff_max; ++i) d *= 2;
    d = std::min(d, opt.backoff_max);
    std::uniform_int_distribution<std::int64_t> dist(d.count() / 2,
                                                     std::max<std::int64_t>(d.count(), 0));
    return std::chrono::milliseconds(dist(rng));
  }

  static net::awaitable<void> connector(std::shared_ptr<rpc_state> self) {
    std::string last_error;
    const unsigned attempts = std::max(1u, self->opt.max_connect_attempts);
    for (unsigned attempt = 0; attempt < attempts; ++attempt) {
      if (self->shut || self->unsent.empty()) break;
      if (attempt > 0) {
        self->backoff_timer.expires_after(self->backoff(attempt));
        co_await self->backoff_timer.async_wait(use_ec);
        if (self->shut || self->unsent.empty()) break;
      }
      auto c = co_await connect_once(self, last_error);
      if (c) {
        self->connector_running = false;
        if (self->shut) {
          c->close();
          co_return;
        }
        self->conn = c;
        {
          std::lock_guard lock(self->stats_mutex);
          ++self->stats.connections_opened;
        }
        net::co_spawn(self->strand, reader(self, c), net::detached);
        self->start_writer();
        co_return;
      }
    }
    self->connector_running = false;
    if (self->shut) co_return;
    // Every request still waiting for a connection fails.
    const std::string detail = "cannot connect to " + self->ep.url() + " (" +
                               std::to_string(attempts) + " attempts): " + last_error;
    std::vector<std::uint64_t> ids(self->unsent.begin(), self->unsent.end());
    self->unsent.clear();
    for (auto id : ids) self->complete(id, bt::error{chain_errc::closed, {}, detail}, nullptr);
  }

  template <class Ws>
  static void configure(Ws& ws, const rpc_client_options& opt, const endpoint& ep) {
    ws.read_message_max(opt.max_frame_bytes);
    ws.auto_fragment(false);
    websocket::stream_base::timeout t =
        websocket::stream_base::timeout::suggested(beast::role_type::client);
    t.idle_timeout = websocket::stream_base::none();  // the per-request timers bound calls
    t.handshake_timeout = opt.connect_timeout;
    ws.set_option(t);
    ws.set_option(websocket::stream_base::decorator([](websocket::request_type& req) {
      req.set(beast::http::field::user_agent, "bittensor-cpp");
    }));
    (void)ep;
  }

  static net::awaitable<std::shared_ptr<rpc_connection>> connect_once(
      std::shared_ptr<rpc_state> self, std::string& last_error) {
    const endpoint& ep = self->ep;
    // Resolve under a timer: getaddrinfo cannot be interrupted, but the attempt stops waiting.
    net::steady_timer guard(self->strand);
    guard.expires_after(self->opt.connect_timeout);
    guard.async_wait([self](boost::system::error_code ec) {
      if (!ec) self->resolver.cancel();
    });
    auto [rec, results] =
        co_await self->resolver.async_resolve(ep.host, std::to_string(ep.port), use_ec);
    guard.cancel();
    if (rec) {
      last_error = "resolve " + ep.host + ": " + rec.message();
      co_return nullptr;
    }
    auto c = std::make_shared<rpc_connection>();
    beast::tcp_stream* tcp_layer = nullptr;
    if (ep.tls) {
      auto ws = std::make_unique<tls_ws>(self->strand, self->ssl_ctx);
      tcp_layer = &beast::get_lowest_layer(*ws);
      c->ws = std::move(ws);
    } else {
      auto ws = std::make_unique<plain_ws>(self->strand);
      tcp_layer = &beast::get_lowest_layer(*ws);
      c->ws = std::move(ws);
    }
    self->connecting = c;
    tcp_layer->expires_after(self->opt.connect_timeout);
    auto [cec, endpoint_used] = co_await tcp_layer->async_connect(results, use_ec);
    if (cec || self->shut || !c->open) {
      last_error = "connect: " + (cec ? cec.message() : std::string("cancelled"));
      self->connecting.reset();
      co_return nullptr;
    }
    boost::system::error_code ec;
    // Requests are small frames written back to back (the metagraph's two state_calls): without
    // TCP_NODELAY the second waits for the first one's ACK, which the peer may delay by 40 ms.
    tcp_layer->socket().set_option(tcp::no_delay(true), ec);
    if (auto* tls = std::get_if<std::unique_ptr<tls_ws>>(&c->ws)) {
      auto& ssl = (*tls)->next_layer();
      if (!SSL_set_tlsext_host_name(ssl.native_handle(), ep.host.c_str())) {
        last_error = "TLS: cannot set SNI host name";
        self->connecting.reset();
        co_return nullptr;
      }
      ssl.set_verify_callback(net::ssl::host_name_verification(ep.host));
      std::tie(ec) = co_await ssl.async_handshake(net::ssl::stream_base::client, use_ec);
      if (ec) {
        last_error = "TLS handshake: " + ec.message();
        self->connecting.reset();
        co_return nullptr;
      }
    }
    tcp_layer->expires_never();  // the websocket timeout option takes over
    std::visit([&](auto& ws) { configure(*ws, self->opt, ep); }, c->ws);
    std::tie(ec) = co_await std::visit(
        [&](auto& ws) { return ws->async_handshake(ep.host_header(), ep.target, use_ec); }, c->ws);
    self->connecting.reset();
    if (ec || self->shut || !c->open) {
      last_error = "websocket handshake: " + (ec ? ec.message() : std::string("cancelled"));
      co_return nullptr;
    }
    // Requests are answered well within request_timeout; no idle timeout on an open connection.
    std::visit(
        [&](auto& ws) {
          websocket::stream_base::timeout t{};
          t.handshake_timeout = self->opt.connect_timeout;
          t.idle_timeout = websocket::stream_base::none();
          t.keep_alive_pings = false;
          ws->set_option(t);
        },
        c->ws);
    co_return c;
  }

  // --- losing a connection ---

  /// Ends connection `c`. The calls sent on it and not yet answered fail with `code`, except
  /// that when it was lost (closed), a read sent once goes first in line for the next connection:
  /// the node may never have seen it (a node restarted, or a proxy that closed the connection
  /// while it idled, is only noticed when a request meets the closed socket).
  void lose(const std::shared_ptr<rpc_connection>& c, chain_errc code, const std::string& detail) {
    if (!c || c != conn) return;
    conn.reset();
    c->close();
    std::vector<std::uint64_t> again;
    if (code == chain_errc::closed) {
      for (auto& [id, p] : calls) {
        if (p.sent_on != c || p.sent_again || !only_reads(p.method)) continue;
        p.sent_on.reset();
        p.sent_again = true;
        again.push_back(id);
      }
    }
    unsent.insert(unsent.begin(), again.begin(), again.end());  // ids ascend: call order
    if (!again.empty()) {
      std::lock_guard lock(stats_mutex);
      stats.requests_sent_again += again.size();
    }
    fail_where([&](const pending& p) { return p.sent_on == c; }, code, detail);
    if (!unsent.empty()) start_connector();
  }

  // --- writing ---

  void start_writer() {
    if (writing || !conn || unsent.empty()) return;
    writing = true;
    net::co_spawn(strand, writer(shared_from_this(), conn), net::detached);
  }

  static net::awaitable<void> writer(std::shared_ptr<rpc_state> self,
                                     std::shared_ptr<rpc_connection> c) {
    while (c->open && self->conn == c && !self->unsent.empty()) {
      const std::uint64_t id = self->unsent.front();
      self->unsent.pop_front();
      auto it = self->calls.find(id);
      if (it == self->calls.end()) continue;  // timed out before it was sent
      it->second.sent_on = c;
      // A copy: the call may end (time out) while its frame is being written, and a read keeps
      // its frame in case it must be sent again.
      const std::string frame = it->second.frame;
      auto [ec, n] = co_await std::visit(
          [&](auto& ws) {
            ws->text(true);
            return ws->async_write(net::buffer(frame), use_ec);
          },
          c->ws);
      if (ec) {
        self->lose(c, chain_errc::closed,
                   "connection to " + self->ep.url() + " lost while sending: " + ec.message());
        break;
      }
      std::lock_guard lock(self->stats_mutex);
      ++self->stats.requests_sent;
    }
    self->writing = false;
    // A new connection may have queued work while this one was ending (its writer could not
    // start while this one was writing).
    self->start_writer();
  }

  // --- reading ---

  static net::awaitable<void> reader(std::shared_ptr<rpc_state> self,
                                     std::shared_ptr<rpc_connection> c) {
    beast::flat_buffer buf;
    for (;;) {
      buf.clear();
      auto [ec, n] =
          co_await std::visit([&](auto& ws) { return ws->async_read(buf, use_ec); }, c->ws);
      if (!c->open || self->conn != c) co_return;
      if (ec == websocket::error::message_too_big) {
        self->lose(c, chain_errc::frame_too_large,
                   "a frame from " + self->ep.url() + " exceeds the limit of " +
                       std::to_string(self->opt.max_frame_bytes) +
                       " bytes (rpc_client_options::max_frame_bytes); connection closed");
        co_return;
      }
      if (ec) {
        self->lose(c, chain_errc::closed,
                   "connection to " + self->ep.url() + " lost: " + ec.message());
        co_return;
      }
      const auto data = buf.cdata();
      std::string_view text(static_cast<const char*>(data.data()), data.size());
      try {
        self->on_frame(c, text);
      } catch (const std::exception& e) {
        // Out of memory while parsing or completing (the frame is within the limits, the
        // process is not): this connection's answers are lost, the client goes on.
        self->lose(c, chain_errc::malformed_frame,
                   "cannot process a frame of " + std::to_string(text.size()) + " bytes from " +
                       self->ep.url() + ": " + e.what() + "; connection closed");
        co_return;
      }
      if (!c->open) co_return;
    }
  }

  void on_frame(const std::shared_ptr<rpc_connection>& c, std::string_view text) {
    auto malformed = [&](const std::string& why) {
      lose(c, chain_errc::malformed_frame,
           "malformed frame from " + ep.url() + " (" + why +
               "): " + std::string(text.substr(0, 80)) + (text.size() > 80 ? "..." : ""));
    };
    std::string over_limit;
    bt::json msg = parse_bounded(text, over_limit);
    if (!over_limit.empty()) return malformed(over_limit);
    if (msg.is_discarded()) return malformed("not JSON");
    if (!msg.is_object()) return malformed("not a JSON object");
    const auto id_it = msg.find("id");
    if (id_it == msg.end() || id_it->is_null()) {
      // A notification (a subscription's): none is requested, so it is dropped.
      if (msg.contains("method")) return;
      return malformed("no id");
    }
    if (!id_it->is_number_unsigned()) return malformed("id is not one of ours");
    const std::uint64_t id = id_it->get<std::uint64_t>();
    if (!calls.count(id)) return;  // answered late (timed out) or never asked: dropped
    if (auto e = msg.find("error"); e != msg.end()) {
      std::string detail = "JSON-RPC error";
      if (e->is_object()) {
        if (auto code = e->find("code"); code != e->end() && code->is_number_integer()) {
          detail += " " + std::to_string(code->get<std::int64_t>());
        }
        if (auto m = e->find("message"); m != e->end() && m->is_string()) {
          detail += ": " + m->get<std::string>();
        }
      }
      return complete(id, bt::error{chain_errc::rpc_error, {}, detail + " (from " + ep.url() + ")"},
                      std::move(*e));
    }
    if (auto r = msg.find("result"); r != msg.end()) return complete(id, {}, std::move(*r));
    complete(id,
             bt::error{chain_errc::malformed_frame,
                       {},
                       "response from " + ep.url() + " has neither result nor error"},
             nullptr);
  }

  /// Parses a frame, stopping as soon as it holds more than opt.max_frame_values values or
  /// nests deeper than opt.max_frame_depth (then `over_limit` says which): the tree is never
  /// built past the bound. A frame that is not JSON gives a discarded value.
  bt::json parse_bounded(std::string_view text, std::string& over_limit) const {
    struct limit_reached {};
    std::size_t values = 0;
    const auto cb = [&](int depth, bt::json::parse_event_t ev, bt::json&) {
      using event = bt::json::parse_event_t;
      if (ev == event::value || ev == event::object_start || ev == event::array_start) {
        if (++values > opt.max_frame_values) {
          over_limit = "more than " + std::to_string(opt.max_frame_values) +
                       " JSON values (rpc_client_options::max_frame_values)";
          throw limit_reached{};
        }
      }
      if (depth >= 0 && static_cast<std::size_t>(depth) > opt.max_frame_depth) {
        over_limit = "nested deeper than " + std::to_string(opt.max_frame_depth) +
                     " levels (rpc_client_options::max_frame_depth)";
        throw limit_reached{};
      }
      return true;
    };
    try {
      return bt::json::parse(text, cb, /*allow_exceptions=*/false);
    } catch (const limit_reached&) {
      return bt::json(bt::json::value_t::discarded);
    }
  }

  // --- shutting down ---

  void shutdown() {
    shut = true;
    backoff_timer.cancel();
    resolver.cancel();
    if (connecting) connecting->close();
    if (conn) conn->close();
    conn.reset();
    unsent.clear();
    fail_where([](const pending&) { return true; }, chain_errc::closed, "the client was destroyed");
  }
};

struct rpc_runner {
  net::io_context ioc{1};
  net::executor_work_guard<net::io_context::executor_type> work = net::make_work_guard(ioc);
  std::thread thread;
  rpc_runner() : thread([this] { run(); }) {}

  // An exception out of run() (a completion handler that threw) would end the thread and,
  // uncaught, the process; the loop is resumed instead, so the other calls still complete.
  void run() {
    for (;;) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bt::rpc_client: exception from a completion handler: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "bt::rpc_client: unknown exception from a completion handler\n");
      }
    }
  }
};

}  // namespace detail

rpc_client::rpc_client(endpoint ep, options opt)
    : runner_(std::make_unique<detail::rpc_runner>()),
      state_(std::make_shared<detail::rpc_state>(runner_->ioc.get_executor(), std::move(ep), opt)) {
}

rpc_client::rpc_client(executor_type ex, endpoint ep, options opt)
    : state_(std::make_shared<detail::rpc_state>(std::move(ex), std::move(ep), opt)) {}

rpc_client::~rpc_client() {
  net::post(state_->strand, [s = state_] { s->shutdown(); });
  if (runner_) {
    runner_->work.reset();
    runner_->thread.join();
  }
}

rpc_client::executor_type rpc_client::get_executor() const noexcept {
  return state_->strand;
}
const endpoint& rpc_client::get_endpoint() const noexcept {
  return state_->ep;
}
const rpc_client::options& rpc_client::get_options() const noexcept {
  return state_->opt;
}
rpc_client_stats rpc_client::stats() const {
  std::lock_guard lock(state_->stats_mutex);
  return state_->stats;
}

void rpc_client::async_call_impl(std::string method, bt::json params, handler_type handler) {
  net::post(state_->strand, [s = state_, m = std::move(method), p = std::move(params),
                             h = std::move(handler)]() mutable {
    s->submit(std::move(m), std::move(p), std::move(h));
  });
}

bt::json rpc_client::call(std::string method, bt::json params) {
  if (state_->strand.running_in_this_thread() ||
      (runner_ && runner_->ioc.get_executor().running_in_this_thread())) {
    throw std::logic_error("bt::rpc_client::call() on the client's own executor would deadlock");
  }
  std::promise<std::pair<bt::error, bt::json>> p;
  auto f = p.get_future();
  async_call(std::move(method), std::move(params),
             [p = std::move(p)](bt::error e, bt::json r) mutable {
               p.set_value({std::move(e), std::move(r)});
             });
  auto [e, r] = f.get();
  if (e) {
    const bool rpc = e.code == chain_errc::rpc_error;
    throw rpc_call_error(std::move(e), rpc ? std::move(r) : bt::json());
  }
  return r;
}

}  // namespace bt
