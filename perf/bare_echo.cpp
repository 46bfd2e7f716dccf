#include "bare_echo.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <sstream>
#include <thread>

namespace bt::perf {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

/// Bytes of a message as Beast writes it: start line, fields, blank line, body.
template <class Message>
std::size_t serialized_size(const Message& m) {
  std::ostringstream os;
  os << m;
  return os.str().size();
}

asio::awaitable<void> serve_one(tcp::socket socket,
                                const http::response<http::string_body>& response) {
  socket.set_option(tcp::no_delay(true));
  beast::flat_buffer buffer;
  for (;;) {
    // A fresh parser per request, without Beast's default 1 MiB body limit (payload runs).
    http::request_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    auto [ec, n] =
        co_await http::async_read(socket, buffer, parser, asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;  // client closed: the run is over
    auto [wec, wn] =
        co_await http::async_write(socket, response, asio::as_tuple(asio::use_awaitable));
    if (wec) co_return;
  }
}

asio::awaitable<void> accept_one(tcp::acceptor& acceptor,
                                 const http::response<http::string_body>& response) {
  auto socket = co_await acceptor.async_accept(asio::use_awaitable);
  co_await serve_one(std::move(socket), response);
}

}  // namespace

bare_echo_result run_bare_echo(const http_exchange& ex, std::size_t count, std::size_t warmup) {
  http::response<http::string_body> response{http::status::ok, 11};
  for (const auto& [k, v] : ex.response_headers) response.insert(k, v);
  response.body() = ex.response_body;
  response.keep_alive(true);
  response.prepare_payload();

  asio::io_context server_ioc{1};
  tcp::acceptor acceptor{server_ioc, {asio::ip::make_address("127.0.0.1"), 0}};
  const auto endpoint = acceptor.local_endpoint();
  asio::co_spawn(server_ioc, accept_one(acceptor, response), asio::detached);
  std::thread server([&] { server_ioc.run(); });

  bare_echo_result result;
  try {
    asio::io_context client_ioc{1};
    tcp::socket socket{client_ioc};
    socket.connect(endpoint);
    socket.set_option(tcp::no_delay(true));

    http::request<http::string_body> req{http::verb::post, ex.target, 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(endpoint.port()));
    for (const auto& [k, v] : ex.request_headers) req.insert(k, v);
    req.body() = ex.request_body;
    req.keep_alive(true);
    req.prepare_payload();

    result.request_bytes = serialized_size(req);
    result.response_bytes = serialized_size(response);

    beast::flat_buffer buffer;
    result.rtt_us.reserve(count);
    cpu_times cpu_start;
    for (std::size_t i = 0; i < warmup + count; ++i) {
      if (i == warmup) cpu_start = self_cpu_times();
      const auto t0 = std::chrono::steady_clock::now();
      http::write(socket, req);
      http::response_parser<http::string_body> res;
      res.body_limit(boost::none);
      http::read(socket, buffer, res);
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= warmup)
        result.rtt_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    result.cpu = self_cpu_times() - cpu_start;
    socket.shutdown(tcp::socket::shutdown_both);
    socket.close();
  } catch (...) {
    server_ioc.stop();
    server.join();
    throw;
  }
  server.join();
  return result;
}

}  // namespace bt::perf
