// memory_axon: see memory_session.hpp. The connection runs over memory_stream, a byte_stream
// (byte_stream.hpp) over two strings: reads are served from the input and then report EOF, writes
// append to the output. Every operation completes at once, without suspending: the session's
// coroutine runs straight through its reads and writes, so a connection costs no scheduler
// round trip per operation (only the handler's hand-off, timers and the spawn go through the
// io_context). With no clock and no pending operation, deadlines and cancel have nothing to act
// on: an input cannot make the session wait, because EOF always follows it.
#include "memory_session.hpp"

#include "session/session.hpp"
#include "state/axon_impl.hpp"
#include "transport/byte_stream.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace bt::detail {

class memory_stream final : public byte_stream {
 public:
  /// Points the stream at the next exchange's input and output, both sides open again.
  void rebind(std::string_view input, std::string& output) noexcept {
    in_ = input;
    out_ = &output;
    send_closed_ = read_closed_ = false;
  }

  task<io_result> read_some(net::mutable_buffer buffer) override { co_return read_now(buffer); }
  task<io_result> write(std::span<const net::const_buffer> buffers) override {
    co_return write_now(buffers);
  }
  void expires_after(clock_type::duration) override {}
  void expires_at(clock_type::time_point) override {}
  void expires_never() override {}
  void cancel() override {}  // no operation is ever pending
  void shutdown_send() override { send_closed_ = true; }
  void close() override { send_closed_ = read_closed_ = true; }

 private:
  io_result read_now(net::mutable_buffer buffer) noexcept {
    if (read_closed_) return {net::error::operation_aborted, 0};
    if (buffer.size() == 0) return {beast::error_code{}, 0};
    if (in_.empty()) return {net::error::eof, 0};
    const std::size_t n = std::min(buffer.size(), in_.size());
    std::memcpy(buffer.data(), in_.data(), n);
    in_.remove_prefix(n);
    return {beast::error_code{}, n};
  }
  io_result write_now(std::span<const net::const_buffer> buffers) {
    if (send_closed_) return {net::error::broken_pipe, 0};
    std::size_t n = 0;
    for (const net::const_buffer& b : buffers) {
      out_->append(static_cast<const char*>(b.data()), b.size());
      n += b.size();
    }
    return {beast::error_code{}, n};
  }

  std::string_view in_;         // what the client sent and the axon has not read yet
  std::string* out_ = nullptr;  // everything the axon wrote
  bool send_closed_ = true;
  bool read_closed_ = true;
};

memory_axon::memory_axon(axon& ax, connection_mode mode)
    : core_(axon_access::of(ax)), strand_(net::make_strand(ioc_)), mode_(mode) {
  if (core_.started.exchange(true))
    throw std::logic_error("bt::detail::memory_axon: the axon was started");
  core_.prepare_serving();
  if (mode_ == connection_mode::reused) {
    auto stream = std::make_unique<memory_stream>();
    stream_ = stream.get();
    // The caller's address is set by reuse() before each exchange.
    conn_ = std::make_shared<connection>(core_, strand_, std::move(stream), std::string(), 0);
  }
}

memory_axon::~memory_axon() {
  core_.pool->stop(std::chrono::seconds(5));
}

std::string memory_axon::exchange(std::string_view input, std::string peer_ip,
                                  std::uint16_t peer_port) {
  std::string output;
  exchange_into(input, output, std::move(peer_ip), peer_port);
  return output;
}

void memory_axon::exchange_into(std::string_view input, std::string& output, std::string peer_ip,
                                std::uint16_t peer_port) {
  output.clear();
  {
    std::shared_ptr<connection> c;
    if (mode_ == connection_mode::reused) {
      // The previous session ended (run() returned below), so nothing of it is pending.
      conn_->reuse(std::move(peer_ip), peer_port);
      stream_->rebind(input, output);
      c = conn_;
    } else {
      auto stream = std::make_unique<memory_stream>();
      stream->rebind(input, output);
      c = std::make_shared<connection>(core_, strand_, std::move(stream), std::move(peer_ip),
                                       peer_port);
    }
    net::co_spawn(strand_, connection::run(std::move(c)), [](std::exception_ptr) {});
  }
  ioc_.restart();
  ioc_.run();  // until the session ended and nothing else is pending
}

}  // namespace bt::detail
