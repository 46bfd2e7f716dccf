// The connection coroutine: keep-alive loop, idle and header deadlines, the head parser, and
// closing. The per-request stages live in pipeline.cpp.
#include "session.hpp"

#include "pipeline.hpp"
#include "request_parser.hpp"
#include "response.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <utility>

// GCC 12 reports -Wmismatched-new-delete on Asio coroutine frames at -O2 (a false positive, GCC
// PR 109224: the frame's class-specific operator new and operator delete do match).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace bt::detail {

namespace http = beast::http;

namespace {

// After a keep-alive request, buffers that grew for a large message are released so that idle
// connections stay small (the 10,000-connection memory goal).
constexpr std::size_t keep_buffer_bytes = 64 * 1024;
// Closing with unread input makes the kernel send RST, which can destroy the answer before the
// client reads it; so after rejecting a request whose body was not read, the axon reads and
// discards a little for a short while before closing ("lingering close"), bounded both ways.
constexpr std::size_t linger_bytes = 256 * 1024;
constexpr auto linger_time = std::chrono::milliseconds(500);
// What a connection's read buffer may hold beyond a maximal head: one read's worth.
constexpr std::size_t read_room = 64 * 1024;

}  // namespace

connection::connection(axon::impl& core, socket_t socket)
    : core_(core),
      strand_(socket.get_executor()),
      stream_(std::move(socket)),
      // Bounded: Beast buffers a whole head, chunk-size line or trailer block before parsing it,
      // so without a cap one endless line would grow the buffer without limit. The head is
      // limited to max_header_bytes; the rest is room for one read.
      buffer_(std::size_t{core.opts.max_header_bytes} + read_room),
      job_timer_(strand_) {
  beast::error_code ec;
  auto& sock = stream_.socket();
  sock.set_option(tcp::no_delay(true), ec);  // answers are written in one piece; never delay them
  const auto peer = sock.remote_endpoint(ec);
  if (!ec) {
    auto addr = peer.address();
    if (addr.is_v6() && addr.to_v6().is_v4_mapped())  // dual-stack: show IPv4 callers as IPv4
      addr = net::ip::make_address_v4(net::ip::v4_mapped, addr.to_v6());
    peer_ip_ = addr.to_string();
    peer_port_ = peer.port();
  }
}

connection::~connection() {
  if (registered_) core_.unregister_connection(registry_pos_);
}

void connection::notify_stop() {
  stop_requested_ = true;
  if (idle_) stream_.cancel();
}

void connection::abort() {
  aborted_ = true;
  stop_requested_ = true;
  stream_.cancel();
  job_timer_.cancel();
}

task<bool> connection::write_response() {
  stream_.expires_after(core_.opts.write_timeout);
  const std::array<net::const_buffer, 2> buffers{net::buffer(out_head_), net::buffer(out_body_)};
  auto [ec, n] = co_await net::async_write(stream_, buffers, use_task);
  (void)n;
  if (ec) {
    core_.log->debug("axon: {}:{} write failed: {}", peer_ip_, peer_port_, ec.message());
    co_return false;
  }
  co_return true;
}

task<bool> connection::write_continue() {
  stream_.expires_after(core_.opts.write_timeout);
  auto [ec, n] = co_await net::async_write(
      stream_, net::buffer(continue_response.data(), continue_response.size()), use_task);
  (void)n;
  co_return !ec;
}

void connection::release_request_memory() noexcept {
  // swap, not assignment: a moved-in short string would keep the old heap buffer.
  synapse empty;
  std::swap(view_, empty);
  std::string().swap(target_);
  std::string().swap(body_);
  std::string().swap(out_head_);
  std::string().swap(out_body_);
  std::string().swap(scratch_);
}

task<void> connection::close_gracefully() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (linger_ && !aborted_ && !ec) {
    std::array<char, 4096> sink;
    std::size_t total = 0;
    stream_.expires_after(linger_time);
    while (total < linger_bytes) {
      auto [rec, n] = co_await stream_.async_read_some(net::buffer(sink), use_task);
      if (rec) break;
      total += n;
    }
  }
  stream_.close();
}

task<void> connection::run(std::shared_ptr<connection> self) {
  connection& c = *self;
  const axon_options& opts = c.core_.opts;
  bool first = true;
  try {
    for (;;) {
      if (c.stop_requested_ || c.core_.stopping.load(std::memory_order_relaxed)) break;

      // Wait for the next request. A new connection gets header_timeout to send its first byte,
      // a kept-alive one idle_timeout; the stop signal interrupts this wait only.
      if (c.buffer_.size() == 0) {
        if (!first) c.release_request_memory();
        c.idle_ = true;
        c.stream_.expires_after(first ? opts.header_timeout : opts.idle_timeout);
        auto [ec, n] = co_await c.stream_.async_read_some(
            c.buffer_.prepare(beast::read_size(c.buffer_, 65536)), use_task);
        c.idle_ = false;
        if (ec) break;  // EOF, reset, idle timeout or stop: nothing to answer
        c.buffer_.commit(n);
      }
      first = false;

      // The head, with a fresh parser and the header deadline counted from the first byte.
      c.view_ = synapse{};
      c.body_.clear();
      request_parser parser(c.view_, c.target_, c.body_, opts.max_header_bytes);
      beast::error_code ec;
      if (!parser.parse_buffered(c.buffer_, true, ec) && !ec) {
        c.stream_.expires_after(opts.header_timeout);
        auto [rec, n] = co_await http::async_read_header(c.stream_, c.buffer_, parser, use_task);
        (void)n;
        ec = rec;
      }
      if (ec) {
        if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
          co_await reject_unparsed(c, 431, "Request Header Fields Too Large");
        } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
                   ec != http::error::end_of_stream && ec != http::error::partial_message) {
          const std::string message = "Bad Request: " + ec.message();  // named: see pipeline.cpp
          co_await reject_unparsed(c, 400, message);
        } else if (ec == beast::error::timeout) {
          c.core_.log->debug("axon: {}:{} sent no complete header in time; closing", c.peer_ip_,
                             c.peer_port_);
        }
        break;
      }

      const bool keep = co_await serve_request(c, parser);
      if (!keep || c.aborted_) break;

      if (c.buffer_.size() == 0 && c.buffer_.capacity() > keep_buffer_bytes)
        c.buffer_.shrink_to_fit();
      if (c.body_.capacity() > keep_body_bytes) std::string().swap(c.body_);
      if (c.out_body_.capacity() > keep_body_bytes) std::string().swap(c.out_body_);
    }
  } catch (const std::exception& e) {
    c.core_.log->warn("axon: connection {}:{} failed: {}", c.peer_ip_, c.peer_port_, e.what());
  }
  co_await c.close_gracefully();
}

}  // namespace bt::detail
