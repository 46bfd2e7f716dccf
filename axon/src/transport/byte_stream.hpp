// The connection's transport, type-erased: a connection (session.hpp) reads and writes through a
// byte_stream and never names a socket type, so the whole session runs over a TCP socket in
// production (tcp_byte_stream, made by the accept loop), over any other Asio stream
// (stream_adapter), and in tests and the fuzzer over two strings (memory_session.cpp).
//
// Contract of every implementation:
//   - All calls are made on the connection's strand; the operations complete on it.
//   - read_some/write report EOF, reset, timeout and cancellation as error codes, never throw.
//     write writes the whole buffer sequence or fails.
//   - expires_after/expires_at/expires_never bound the next operations (beast::error::timeout,
//     and the stream is closed, as beast::basic_stream does). A stream with no clock of its own
//     ignores them: an in-memory peer must close its end instead, so nothing waits on wall time.
//   - cancel() completes the pending operations with operation_aborted and keeps the stream
//     usable for writing (the body watchdog's 408 is written after it); a stream that cannot
//     cancel one operation closes instead.
//   - shutdown_send() ends the sending side (errors ignored); close() closes both.
#pragma once

#include "transport/net.hpp"

#include <bt/detail/write_in_place.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>

#include <chrono>
#include <cstddef>
#include <span>
#include <tuple>
#include <utility>

namespace bt::detail {

/// The outcome of one read or write: the error (if any) and the bytes transferred.
using io_result = std::tuple<beast::error_code, std::size_t>;

class byte_stream {
 public:
  using clock_type = std::chrono::steady_clock;

  virtual ~byte_stream() = default;
  byte_stream() = default;
  byte_stream(const byte_stream&) = delete;
  byte_stream& operator=(const byte_stream&) = delete;

  virtual task<io_result> read_some(net::mutable_buffer buffer) = 0;
  virtual task<io_result> write(std::span<const net::const_buffer> buffers) = 0;
  virtual void expires_after(clock_type::duration d) = 0;
  virtual void expires_at(clock_type::time_point t) = 0;
  virtual void expires_never() = 0;
  virtual void cancel() = 0;
  virtual void shutdown_send() = 0;
  virtual void close() = 0;
};

/// A byte_stream over any Asio stream whose executor is strand_t. Deadlines, cancel and
/// shutdown use the stream's own when it has them (beast::basic_stream: all of them); otherwise
/// see the contract at the top.
template <class Stream>
class stream_adapter final : public byte_stream {
 public:
  explicit stream_adapter(Stream s) : s_(std::move(s)) {}

  Stream& next_layer() noexcept { return s_; }

  task<io_result> read_some(net::mutable_buffer buffer) override {
    co_return co_await s_.async_read_some(buffer, use_task);
  }
  /// On a socket in non-blocking mode, writes in place first (bt/detail/write_in_place.hpp);
  /// whatever is left goes by an asynchronous write, under the deadline.
  task<io_result> write(std::span<const net::const_buffer> buffers) override {
    if constexpr (requires { s_.socket().non_blocking(); }) {
      beast::error_code ec;
      const auto rest = write_in_place(s_.socket(), buffers, ec);
      const std::size_t written = net::buffer_size(buffers) - net::buffer_size(rest);
      if (ec || net::buffer_size(rest) == 0) co_return io_result{ec, written};
      auto [wec, wn] = co_await net::async_write(s_, rest, use_task);
      co_return io_result{wec, written + wn};
    } else {
      co_return co_await net::async_write(s_, buffers, use_task);
    }
  }
  // As expires_at(now + d): one clock read where beast's expires_after reads it once for each
  // direction's timer.
  void expires_after(clock_type::duration d) override {
    if constexpr (requires { s_.expires_at(clock_type::now() + d); })
      s_.expires_at(clock_type::now() + d);
    else if constexpr (requires { s_.expires_after(d); })
      s_.expires_after(d);
  }
  void expires_at(clock_type::time_point t) override {
    if constexpr (requires { s_.expires_at(t); }) s_.expires_at(t);
  }
  void expires_never() override {
    if constexpr (requires { s_.expires_never(); }) s_.expires_never();
  }
  void cancel() override {
    if constexpr (requires { s_.cancel(); })
      s_.cancel();
    else
      s_.close();
  }
  void shutdown_send() override {
    if constexpr (requires { s_.socket(); }) {
      beast::error_code ignored;
      s_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }
  void close() override { s_.close(); }

 private:
  Stream s_;
};

/// The production transport: a TCP socket with Beast's per-operation timeouts.
using tcp_byte_stream = stream_adapter<stream_t>;

}  // namespace bt::detail
