// The admin listener (admin_listener.hpp): its acceptor and every admin connection share one
// strand of the axon's first io_context, so its state needs no lock; each connection serves one
// request under a whole-request timer and closes.
#include "ops/admin_listener.hpp"

#include <bt/axon_options.hpp>
#include <bt/metrics.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <array>
#include <charconv>
#include <list>
#include <stdexcept>

namespace bt::detail {

namespace http = beast::http;

tcp::endpoint parse_admin_endpoint(const std::string& host_port) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("admin_listen '" + host_port + "': " + why);
  };
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size())
    throw bad("expected HOST:PORT (e.g. 127.0.0.1:9100)");
  std::string host = host_port.substr(0, colon);
  const std::string port_text = host_port.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const auto r = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (r.ec != std::errc{} || r.ptr != port_text.data() + port_text.size() || port > 65535)
    throw bad("the port must be a number from 0 to 65535");
  beast::error_code ec;
  const auto address = net::ip::make_address(host, ec);
  if (ec) throw bad("the host must be a numeric IPv4 or IPv6 address");
  return {address, static_cast<std::uint16_t>(port)};
}

struct admin_listener::state : std::enable_shared_from_this<state> {
  state(net::io_context& ioc, const axon_options& o, hooks h)
      : strand(net::make_strand(ioc)),
        acceptor(strand),
        listen(o.admin_listen),
        timeout(o.admin_timeout),
        max_header(o.admin_max_header_bytes),
        max_connections(o.admin_max_connections),
        fns(std::move(h)) {}

  strand_t strand;
  acceptor_t acceptor;
  std::string listen;
  std::chrono::milliseconds timeout;
  std::uint32_t max_header;
  std::size_t max_connections;
  hooks fns;
  bool stopped = false;                      // strand only
  std::list<std::weak_ptr<socket_t>> conns;  // strand only
};

namespace {

using admin_state = admin_listener::state;

http::response<http::string_body> make_answer(http::status s, std::string body,
                                              std::string_view type = "text/plain; charset=utf-8") {
  http::response<http::string_body> res{s, 11};
  res.set(http::field::content_type, type);
  res.set(http::field::cache_control, "no-store");
  res.keep_alive(false);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

http::response<http::string_body> answer_admin_request(
    admin_state& st, const http::request<http::string_body>& req) {
  const std::string_view target(req.target().data(), req.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  const bool known = path == "/metrics" || path == "/healthz" || path == "/readyz";
  if (!known) return make_answer(http::status::not_found, "not found\n");
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    auto res = make_answer(http::status::method_not_allowed, "method not allowed\n");
    res.set(http::field::allow, "GET, HEAD");
    return res;
  }
  if (path == "/healthz") return make_answer(http::status::ok, "ok\n");
  if (path == "/readyz") {
    std::string why = st.fns.readiness ? st.fns.readiness() : std::string();
    if (why.empty()) return make_answer(http::status::ok, "ready\n");
    return make_answer(http::status::service_unavailable, "not ready: " + why + "\n");
  }
  return make_answer(http::status::ok, st.fns.metrics ? st.fns.metrics() : std::string(),
                     metrics::registry::content_type);
}

/// Arms `timer` to fire `after` from now: it then sets the flag it returns and cancels the
/// socket's operations (`close` false: the socket stays open for an answer) or closes it.
std::shared_ptr<bool> arm_watchdog(net::steady_timer& timer, std::chrono::milliseconds after,
                                   const std::shared_ptr<socket_t>& sock, bool close) {
  auto fired = std::make_shared<bool>(false);
  timer.expires_after(after);
  timer.async_wait([sock, fired, close](beast::error_code ec) {
    if (ec) return;
    *fired = true;
    beast::error_code ignored;
    if (close) {
      sock->close(ignored);
    } else {
      sock->cancel(ignored);
    }
  });
  return fired;
}

task<void> serve_one(std::shared_ptr<admin_state> st, std::shared_ptr<socket_t> sock) {
  // The whole request is due within `timeout`; past it the read is cancelled (the socket stays
  // open for the 408). A flat_buffer capped a little above the head limit bounds memory.
  beast::flat_buffer buffer(std::size_t{st->max_header} + 1024);
  http::request_parser<http::string_body> parser;
  parser.header_limit(st->max_header);
  parser.body_limit(0);
  net::steady_timer timer(st->strand);
  const auto timed_out = arm_watchdog(timer, st->timeout, sock, false);
  auto [ec, n] = co_await http::async_read(*sock, buffer, parser, use_task);
  (void)n;
  timer.cancel();

  http::response<http::string_body> res;
  if (*timed_out) {
    res = make_answer(http::status::request_timeout, "request timeout\n");
  } else if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    res = make_answer(http::status::request_header_fields_too_large, "request header too large\n");
  } else if (ec == http::error::body_limit) {
    res = make_answer(http::status::payload_too_large, "no request body is accepted here\n");
  } else if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
             ec == net::error::eof || ec == net::error::connection_reset ||
             ec == net::error::operation_aborted) {
    beast::error_code ignored;
    sock->close(ignored);
    co_return;  // the peer left (or the listener stopped): nothing to answer
  } else if (ec) {
    res = make_answer(http::status::bad_request, "bad request: " + ec.message() + "\n");
  } else {
    res = answer_admin_request(*st, parser.get());
    if (parser.get().method() == http::verb::head) {
      const auto length = res.body().size();
      res.body().clear();
      res.content_length(length);
    }
  }

  // The write is bounded by the same timeout: a peer that does not read is cut off.
  const auto closed = arm_watchdog(timer, st->timeout, sock, true);
  http::response_serializer<http::string_body> sr(res);
  auto [wec, wn] = co_await http::async_write(*sock, sr, use_task);
  (void)wn;
  if (!wec && !*closed) {
    // Lingering close: unread input (a refused oversized head) would make the kernel reset the
    // connection and could destroy the answer before the client reads it. Discard a little, for
    // at most the rest of the timeout.
    beast::error_code ignored;
    sock->shutdown(tcp::socket::shutdown_send, ignored);
    std::array<char, 4096> sink;
    std::size_t total = 0;
    while (total < 256 * 1024 && !*closed) {
      auto [rec, got] = co_await sock->async_read_some(net::buffer(sink), use_task);
      if (rec) break;
      total += got;
    }
  }
  timer.cancel();
  beast::error_code ignored;
  sock->close(ignored);
}

task<void> accept_loop(std::shared_ptr<admin_state> st) {
  for (;;) {
    auto [ec, socket] = co_await st->acceptor.async_accept(use_task);
    if (ec) {
      if (st->stopped || !st->acceptor.is_open() || ec == net::error::operation_aborted) co_return;
      if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space ||
          ec == net::error::no_memory) {
        net::steady_timer pause(st->strand, std::chrono::milliseconds(50));
        co_await pause.async_wait(use_task);
      }
      continue;
    }
    st->conns.remove_if([](const std::weak_ptr<socket_t>& w) { return w.expired(); });
    if (st->conns.size() >= st->max_connections) {
      beast::error_code ignored;
      socket.close(ignored);  // shed: an admin client has no business opening many
      continue;
    }
    auto sock = std::make_shared<socket_t>(std::move(socket));
    st->conns.push_back(sock);
    net::co_spawn(st->strand, serve_one(st, std::move(sock)), net::detached);
  }
}

}  // namespace

admin_listener::admin_listener(net::io_context& ioc, const axon_options& opts, hooks h)
    : state_(std::make_shared<state>(ioc, opts, std::move(h))) {}

admin_listener::~admin_listener() = default;

void admin_listener::start(std::error_code& ec) {
  ec.clear();
  auto& st = *state_;
  tcp::endpoint endpoint;
  try {
    endpoint = parse_admin_endpoint(st.listen);
  } catch (const std::invalid_argument&) {
    ec = std::make_error_code(std::errc::invalid_argument);
    return;
  }
  beast::error_code bec;
  st.acceptor.open(endpoint.protocol(), bec);
  if (!bec) st.acceptor.set_option(net::socket_base::reuse_address(true), bec);
  if (!bec) st.acceptor.bind(endpoint, bec);
  if (!bec) st.acceptor.listen(net::socket_base::max_listen_connections, bec);
  tcp::endpoint local;
  if (!bec) local = st.acceptor.local_endpoint(bec);
  if (bec) {
    ec = bec;
    beast::error_code ignored;
    st.acceptor.close(ignored);
    return;
  }
  port_ = local.port();
  net::co_spawn(st.strand, accept_loop(state_), net::detached);
}

void admin_listener::stop() {
  auto st = state_;
  net::post(st->strand, [st] {
    st->stopped = true;
    beast::error_code ignored;
    st->acceptor.close(ignored);
    for (auto& w : st->conns)
      if (auto s = w.lock()) {
        s->cancel(ignored);
        s->close(ignored);
      }
    st->conns.clear();
  });
}

}  // namespace bt::detail
