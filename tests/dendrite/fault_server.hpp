// Test peers for the dendrite: raw Asio servers on 127.0.0.1 port 0 that misbehave on purpose
// (never answer, drip bytes, close mid-response, send garbage), plus helpers to build canned
// responses. Each server runs its own io_context on one thread and stops in its destructor.
#pragma once

#include <bt/axon_info.hpp>
#include <bt/keypair.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/dev_keys.hpp"
#include "support/wait.hpp"

namespace bt::test {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

/// What a server saw: the requests it read, in order.
struct server_log {
  std::mutex mu;
  std::condition_variable added;  ///< notified after each add()
  std::vector<http::request<http::string_body>> requests;
  std::atomic<int> connections{0};

  void add(http::request<http::string_body> r) {
    {
      std::lock_guard lk(mu);
      requests.push_back(std::move(r));
    }
    added.notify_all();
  }
  std::size_t count() {
    std::lock_guard lk(mu);
    return requests.size();
  }
  /// True once at least `n` requests were read; false if `limit` passes first.
  bool wait_count(std::size_t n, std::chrono::steady_clock::duration limit = 10s) {
    std::unique_lock lk(mu);
    return added.wait_for(lk, limit, [&] { return requests.size() >= n; });
  }
};

/// One connection's behaviour: a coroutine given the accepted socket and the server log.
using behaviour = std::function<net::awaitable<void>(tcp::socket&, server_log&)>;

/// Reads one HTTP request (returns false when the peer closed or sent garbage).
inline net::awaitable<bool> read_request(tcp::socket& s, boost::beast::flat_buffer& buf,
                                         server_log& log) {
  http::request<http::string_body> req;
  auto [ec, n] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
  (void)n;
  if (ec) co_return false;
  log.add(std::move(req));
  co_return true;
}

inline net::awaitable<void> write_text(tcp::socket& s, std::string_view text) {
  auto [ec, n] = co_await net::async_write(s, net::buffer(text.data(), text.size()),
                                           net::as_tuple(net::use_awaitable));
  (void)ec;
  (void)n;
}

/// A peer that stays silent (or paces its bytes) for `d`: the fault under test, not a wait.
inline net::awaitable<void> sleep_for(std::chrono::steady_clock::duration d) {
  net::steady_timer t(co_await net::this_coro::executor, d);
  auto [ec] = co_await t.async_wait(net::as_tuple(net::use_awaitable));
  (void)ec;
}

/// A server that reads one request on each connection and then stays silent for `d`, the
/// connection open: the call must end by its deadline or a cancellation.
inline behaviour silent_after_request(std::chrono::steady_clock::duration d = 30s) {
  return [d](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    co_await read_request(s, buf, log);
    co_await sleep_for(d);
  };
}

/// A full HTTP/1.1 response with a JSON body (or any content type).
inline std::string http_response(int status, std::string_view body,
                                 std::string_view extra_headers = {},
                                 std::string_view content_type = "application/json") {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " X\r\n";
  if (!content_type.empty()) r.append("content-type: ").append(content_type).append("\r\n");
  r.append("content-length: ").append(std::to_string(body.size())).append("\r\n");
  r.append(extra_headers);
  r.append("\r\n");
  r.append(body);
  return r;
}

/// A server on 127.0.0.1:<ephemeral> (or on several ports) running `b` for every connection.
class fault_server {
 public:
  explicit fault_server(behaviour b, std::size_t listeners = 1) : b_(std::move(b)) {
    for (std::size_t i = 0; i < listeners; ++i) {
      acceptors_.emplace_back(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
      ports_.push_back(acceptors_.back().local_endpoint().port());
    }
    for (auto& a : acceptors_) net::co_spawn(ioc_, accept_loop(a), net::detached);
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~fault_server() {
    ioc_.stop();
    thread_.join();
  }
  fault_server(const fault_server&) = delete;
  fault_server& operator=(const fault_server&) = delete;

  std::uint16_t port(std::size_t i = 0) const { return ports_.at(i); }
  const std::vector<std::uint16_t>& ports() const { return ports_; }
  server_log& log() { return log_; }

  bt::axon_info axon(std::string hotkey, std::size_t i = 0) const {
    bt::axon_info a;
    a.ip = "127.0.0.1";
    a.port = port(i);
    a.hotkey = std::move(hotkey);
    return a;
  }

 private:
  net::awaitable<void> accept_loop(tcp::acceptor& a) {
    for (;;) {
      auto [ec, sock] = co_await a.async_accept(net::as_tuple(net::use_awaitable));
      if (ec) co_return;
      ++log_.connections;
      net::co_spawn(ioc_, serve(std::move(sock)), net::detached);
    }
  }
  net::awaitable<void> serve(tcp::socket s) { co_await b_(s, log_); }

  behaviour b_;
  server_log log_;
  net::io_context ioc_;
  std::vector<tcp::acceptor> acceptors_;
  std::vector<std::uint16_t> ports_;
  std::thread thread_;
};

/// A port nothing listens on (bound, then closed).
inline std::uint16_t closed_port() {
  net::io_context ioc;
  tcp::acceptor a(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

/// Open file descriptors of this process.
inline std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

/// Raises the soft descriptor limit to the hard one (tests with thousands of sockets).
inline void raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

}  // namespace bt::test
