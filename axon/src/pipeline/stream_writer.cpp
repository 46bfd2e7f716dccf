// bt::stream_writer: one chunk in flight per stream, written straight to the connection's stream
// (the backpressure contract of stream_writer.hpp). Both forms share one write path, the
// coroutine send() on the connection's strand; send_blocking() runs it there and waits.
#include <bt/stream_writer.hpp>

#include "pipeline/pipeline.hpp"
#include "pipeline/response.hpp"
#include "state/axon_impl.hpp"
#include "transport/request_host.hpp"
#include "transport/stream.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <span>
#include <stdexcept>
#include <string>

// GCC 12 reports -Wmismatched-new-delete on Asio coroutine frames at -O2 (a false positive: the
// frame's class-specific operator new and operator delete do match).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace bt::detail {

std::size_t stream_state::prepare(const request_host& c, std::string_view payload,
                                  std::array<net::const_buffer, 4>& out) {
  static constexpr std::string_view crlf = "\r\n";
  std::size_t n = 0;
  if (!head_started) {
    head_started = true;
    close = close || c.stop_requested();
    build_stream_head(head, r, s, std::chrono::duration<double>(clock_type::now() - t0).count(),
                      close, answers_signed(c.core()));
    out[n++] = net::buffer(head);
  }
  if (!payload.empty()) {
    body_hash.update(payload);
    char* const begin = size_line.data();
    auto res = std::to_chars(begin, begin + size_line.size() - 2, payload.size(), 16);
    res.ptr[0] = '\r';
    res.ptr[1] = '\n';
    out[n++] = net::buffer(begin, static_cast<std::size_t>(res.ptr + 2 - begin));
    out[n++] = net::buffer(payload.data(), payload.size());
    out[n++] = net::buffer(crlf.data(), crlf.size());
  }
  return n;
}

namespace {

using clock_type = std::chrono::steady_clock;

/// One send_blocking() call: the bytes (copied, so that the caller may give up waiting while the
/// write is still in flight) and its outcome.
struct blocking_send {
  std::string bytes;
  bool done = false;  // under stream_state::m
  bool ok = false;
};

}  // namespace

}  // namespace bt::detail

namespace bt {

boost::asio::awaitable<bool> stream_writer::send(std::string_view bytes) {
  namespace net = boost::asio;
  // A copy of the pointer: the state must outlive this coroutine even if the writer is moved.
  const std::shared_ptr<detail::stream_state> st = state_;
  if (!st || !st->open.load(std::memory_order_relaxed)) co_return false;
  if (st->writing || !st->strand.running_in_this_thread()) {
    // Overlapping sends, or a call from outside the handler's coroutine: refused, stream intact.
    co_return false;
  }
  const auto now = detail::stream_state::clock_type::now();
  // Held while the write is in flight: the connection's socket must outlive it even if the
  // session has ended (it closes the socket, which completes the write with an error).
  const std::shared_ptr<detail::request_host> c = st->conn.lock();
  // The request (and its synapse, which the head is built from) lives at least as long.
  const std::shared_ptr<void> owner = st->owner.lock();
  if (!c || !owner || c->aborted() || now >= st->deadline) {
    st->cut.store(true, std::memory_order_relaxed);
    st->close_writer();
    co_return false;
  }
  std::array<net::const_buffer, 4> buffers{};
  const std::size_t n = st->prepare(*c, bytes, buffers);
  if (n == 0) co_return true;  // empty send, head already out
  // The write may take until the deadline, and at most write_timeout (a client that stopped
  // reading); either way the stream closes the socket, which fails the write.
  c->stream().expires_at(std::min(st->deadline, now + c->core().opts.write_timeout));
  st->writing = true;
  // The connection's byte_stream completes on its strand (a task<>, not this awaitable's
  // executor): run there and awaited here.
  auto [thrown, result] = co_await net::co_spawn(
      st->strand, c->stream().write(std::span<const net::const_buffer>(buffers.data(), n)),
      net::as_tuple(net::use_awaitable));
  auto [ec, written] = result;
  (void)written;
  st->writing = false;
  if (thrown) ec = net::error::operation_aborted;  // a write never throws; if it did: failed
  if (ec) {
    c->core().log->debug("axon: {}:{} stream write failed after {} B: {}", c->peer_ip(),
                         c->peer_port(), st->payload_bytes.load(std::memory_order_relaxed),
                         ec.message());
    st->failed = true;
    st->close_writer();
    co_return false;
  }
  st->payload_bytes.fetch_add(bytes.size(), std::memory_order_relaxed);
  co_return st->open.load(std::memory_order_relaxed);
}

bool stream_writer::send_blocking(std::string_view bytes) {
  namespace net = boost::asio;
  const std::shared_ptr<detail::stream_state> st = state_;
  if (!st) return false;
  if (const auto c = st->conn.lock(); c && c->core().on_io_thread())
    throw std::logic_error("bt::stream_writer::send_blocking called on an I/O thread");
  if (!st->open.load(std::memory_order_relaxed)) return false;
  if (st->blocking_busy.exchange(true)) return false;  // another thread is sending
  struct release {
    detail::stream_state& s;
    ~release() { s.blocking_busy.store(false); }
  } busy{*st};

  auto job = std::make_shared<detail::blocking_send>();
  job->bytes.assign(bytes);
  net::co_spawn(
      st->strand,
      [st, job]() -> net::awaitable<bool> {
        stream_writer w(st);
        co_return co_await w.send(job->bytes);
      },
      [st, job](std::exception_ptr e, bool ok) {
        {
          std::lock_guard lk(st->m);
          job->done = true;
          job->ok = !e && ok;
        }
        st->cv.notify_all();
      });
  std::unique_lock lk(st->m);
  // Woken by the write's completion, or by the session ending the stream (deadline, shutdown);
  // the deadline itself bounds the wait should neither happen (the I/O side stopped by force).
  const bool woken = st->cv.wait_until(
      lk, st->deadline, [&] { return job->done || !st->open.load(std::memory_order_relaxed); });
  lk.unlock();
  if (!woken) {  // the deadline passed: a send still queued must not start after we gave up
    st->cut.store(true, std::memory_order_relaxed);
    st->close_writer();
  }
  return job->done && job->ok;
}

bool stream_writer::is_open() const noexcept {
  return state_ && state_->open.load(std::memory_order_relaxed);
}

std::size_t stream_writer::bytes_sent() const noexcept {
  return state_ ? state_->payload_bytes.load(std::memory_order_relaxed) : 0;
}

}  // namespace bt
