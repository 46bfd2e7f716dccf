// The connection coroutine's I/O: keep-alive loop, idle and header deadlines, the PROXY header,
// the head parser, the body read under its watchdog, every write, the idle memory rules and
// closing. One request's course through the stages is session_serve.cpp's.
#include "session/session.hpp"

#include "transport/request_parser.hpp"
#include "transport/stream.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <utility>

// GCC 12 reports -Wmismatched-new-delete on Asio coroutine frames at -O2 (a false positive: the
// frame's class-specific operator new and operator delete do match).
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

/// Bounds the read of a request body: it is due `grace` after the head plus one second per
/// `rate` bytes received, and before the request's deadline. When it falls behind, the pending
/// read is cancelled (the stream stays open for the 408) and `late` says why. Runs on the
/// connection's strand (job_timer_ is bound to it), re-arming itself as the body grows.
struct connection::body_watchdog : std::enable_shared_from_this<body_watchdog> {
  body_watchdog(std::weak_ptr<request_host> c, clock_type::time_point start,
                clock_type::time_point deadline, std::chrono::milliseconds grace,
                std::uint64_t rate)
      : conn(std::move(c)),
        start(start),
        deadline(deadline),
        grace(grace),
        rate(static_cast<double>(std::max<std::uint64_t>(rate, 1))) {}

  clock_type::time_point due(const connection& c) const {
    return start + grace +
           std::chrono::duration_cast<clock_type::duration>(
               std::chrono::duration<double>(static_cast<double>(c.body_.size()) / rate));
  }

  void arm(connection& c) {
    c.job_timer_.expires_at(std::min(due(c), deadline));
    c.job_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) return;  // cancelled: the body arrived, or the read failed
      const auto host = self->conn.lock();
      if (!host) return;
      auto& c = static_cast<connection&>(*host);  // the only request_host
      const auto now = clock_type::now();
      if (now < self->deadline && now < self->due(c)) return self->arm(c);  // caught up
      self->late = now >= self->deadline ? body_lateness::past_deadline : body_lateness::too_slow;
      c.stream_->cancel();
    });
  }

  std::weak_ptr<request_host> conn;
  clock_type::time_point start, deadline;
  std::chrono::milliseconds grace;
  double rate;
  body_lateness late = body_lateness::on_time;
};

connection::connection(axon::impl& core, strand_t strand, std::unique_ptr<byte_stream> stream,
                       std::string peer_ip, std::uint16_t peer_port)
    : request_host(core, std::move(strand), std::move(stream), std::move(peer_ip), peer_port),
      // Bounded: Beast buffers a whole head, chunk-size line or trailer block before parsing it,
      // so without a cap one endless line would grow the buffer without limit. The head is
      // limited to max_header_bytes; the rest is room for one read.
      buffer_(std::size_t{core.opts.max_header_bytes} + read_room) {}

std::shared_ptr<connection> make_tcp_connection(axon::impl& core, socket_t socket) {
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);  // answers are written in one piece; never delay them
  socket.non_blocking(true, ec);               // for the write in place (stream_adapter::write)
  std::string ip;
  std::uint16_t port = 0;
  if (const auto peer = socket.remote_endpoint(ec); !ec) {
    auto addr = peer.address();
    if (addr.is_v6() && addr.to_v6().is_v4_mapped())  // dual-stack: show IPv4 callers as IPv4
      addr = net::ip::make_address_v4(net::ip::v4_mapped, addr.to_v6());
    ip = addr.to_string();
    port = peer.port();
  }
  strand_t strand = socket.get_executor();
  return std::make_shared<connection>(
      core, std::move(strand), std::make_unique<tcp_byte_stream>(stream_t(std::move(socket))),
      std::move(ip), port);
}

connection::~connection() {
  return_kept_buffers();  // none once run() returned (it gives them back after each idle wait)
  if (registered_) core_.unregister_connection(registry_pos_);
}

void connection::reuse(std::string peer_ip, std::uint16_t peer_port) noexcept {
  peer_ip_ = std::move(peer_ip);
  peer_port_ = peer_port;
  stop_requested_ = false;
  aborted_ = false;
  // Freed, not only cleared: the size of a read follows the buffer's capacity (read_more), and
  // Beast's parser can answer a malformed head differently when it arrives in one piece (it
  // parses fields at once) than in several (it waits for the end of the head), so a reused
  // connection must read in the pieces a new one does.
  buffer_.clear();
  buffer_.shrink_to_fit();
  waiting_job_ = nullptr;
  view_ = synapse{};
  target_.clear();
  body_.clear();
  out_.head.clear();
  out_.body.clear();
  out_.scratch.clear();
  session_ = connection_session{};
  idle_ = false;
  linger_ = false;
  bytes_read_ = 0;
}

void connection::notify_stop() {
  stop_requested_ = true;
  if (idle_) stream_->cancel();
}

void connection::abort() {
  aborted_ = true;
  stop_requested_ = true;
  stream_->cancel();
  job_timer_.cancel();
}

task<bool> connection::write_response(clock_type::time_point now) {
  stream_->expires_at(now + core_.opts.write_timeout);
  const std::array<net::const_buffer, 2> buffers{net::buffer(out_.head), net::buffer(out_.body)};
  auto [ec, n] = co_await stream_->write(buffers);
  (void)n;
  if (ec) {
    core_.log->debug("axon: {}:{} write failed: {}", peer_ip_, peer_port_, ec.message());
    co_return false;
  }
  co_return true;
}

task<bool> connection::write_continue() {
  stream_->expires_after(core_.opts.write_timeout);
  const std::array<net::const_buffer, 1> buffers{
      net::buffer(continue_response.data(), continue_response.size())};
  auto [ec, n] = co_await stream_->write(buffers);
  (void)n;
  co_return !ec;
}

void connection::release_request_memory() noexcept {
  // swap, not assignment: a moved-in short string would keep the old heap buffer.
  synapse empty;
  std::swap(view_, empty);
  std::string().swap(target_);
  keep_or_free(body_);
  std::string().swap(out_.head);
  keep_or_free(out_.body);
  std::string().swap(out_.scratch);
}

void connection::keep_or_free(std::string& s) noexcept {
  const std::size_t size = s.capacity();
  const std::size_t limit = core_.opts.idle_buffer_bytes;
  if (size >= keep_idle_from_bytes && size <= keep_body_bytes && size <= limit) {
    std::size_t now = core_.idle_buffer_bytes.load(std::memory_order_relaxed);
    while (now <= limit - size) {
      if (core_.idle_buffer_bytes.compare_exchange_weak(now, now + size,
                                                        std::memory_order_relaxed)) {
        s.clear();
        kept_bytes_ += size;
        return;
      }
    }
  }
  std::string().swap(s);
}

void connection::return_kept_buffers() noexcept {
  if (kept_bytes_ == 0) return;
  core_.idle_buffer_bytes.fetch_sub(kept_bytes_, std::memory_order_relaxed);
  kept_bytes_ = 0;
}

task<void> connection::close_gracefully() {
  stream_->shutdown_send();
  if (linger_ && !aborted_) co_await drain_before_close();
  stream_->close();
}

task<void> connection::drain_before_close() {
  std::array<char, 4096> sink;
  std::size_t total = 0;
  stream_->expires_after(linger_time);
  while (total < linger_bytes) {
    auto [rec, n] = co_await stream_->read_some(net::buffer(sink));
    if (rec) break;
    total += n;
  }
}

task<beast::error_code> connection::read_more(std::size_t at_least) {
  std::size_t room = beast::read_size(buffer_, read_room);
  if (room == 0) co_return http::error::buffer_overflow;
  room = std::max(room, std::min({at_least, read_room, buffer_.max_size() - buffer_.size()}));
  auto [ec, n] = co_await stream_->read_some(buffer_.prepare(room));
  buffer_.commit(n);
  bytes_read_ += n;
  co_return ec;
}

task<beast::error_code> connection::read_until_done(request_parser& p, bool header_only) {
  for (;;) {
    beast::error_code ec;
    if (p.parse_buffered(buffer_, header_only, ec) || ec) co_return ec;
    ec = co_await read_more();
    if (ec == net::error::eof) {
      if (!p.got_some()) co_return http::error::end_of_stream;
      p.put_eof(ec);
      if (!ec) ec = http::error::partial_message;  // put_eof only completes bodiless responses
      co_return ec;
    }
    if (ec) co_return ec;
  }
}

task<stage_result> connection::read_body(request_state& st, bool& alive) {
  alive = true;
  request_parser& p = st.parser;
  if (p.expect_continue()) {  // (no co_await inside a condition: see session_serve.cpp)
    if (!co_await write_continue()) {
      alive = false;
      co_return stage_result{};
    }
  }
  const axon_options& opts = core_.opts;
  p.max_body(opts.max_body_bytes);
  p.body_limit(opts.max_body_bytes);
  beast::error_code ec;
  body_lateness late = body_lateness::on_time;
  if (!p.parse_buffered(buffer_, false, ec) && !ec) {
    // The watchdog, not the stream's own expiry, bounds the read: a stream that times out
    // closes, and the 408 could then not be written.
    stream_->expires_never();
    auto watch = std::make_shared<body_watchdog>(weak_from_this(), clock_type::now(), st.deadline,
                                                 opts.body_timeout, opts.body_min_rate);
    watch->arm(*this);
    // (A watchdog that fires just as a read completes finds no read to cancel: hence the check
    // of `late` before each read.)
    while (watch->late == body_lateness::on_time) {
      ec = co_await read_more();
      if (ec == net::error::eof) {
        if (!p.got_some()) {
          ec = http::error::end_of_stream;
        } else {
          p.put_eof(ec);
          if (!ec) ec = http::error::partial_message;
        }
      }
      if (ec || p.parse_buffered(buffer_, false, ec) || ec) break;
    }
    late = watch->late;
    job_timer_.cancel();
  }
  if (!ec && late == body_lateness::on_time) co_return stage_result{};
  stage_result rej = body_read_failure(st, ec, late, body_.size());
  if (!rej) {
    core_.log->debug("axon: {}:{} body read failed: {}", peer_ip_, peer_port_, ec.message());
    alive = false;
  }
  co_return rej;
}

task<bool> connection::read_proxy_header() {
  namespace pp = proxy_protocol;
  const auto refuse = [&](pp::reject_reason why, std::string_view detail) {
    core_.proxy_rejections[static_cast<std::size_t>(why)].fetch_add(1, std::memory_order_relaxed);
    core_.log->debug("axon: {}:{} closed before any request: PROXY header {}: {}", peer_ip_,
                     peer_port_, pp::to_string(why), detail);
    return false;
  };
  // No address: the peer reset the connection before it was looked at (a balancer's TCP check).
  const auto peer = pp::ip_address::parse(peer_ip_);
  if (!peer)
    co_return refuse(pp::reject_reason::incomplete, "the peer had gone before it was accepted");
  if (std::none_of(core_.trusted_proxies.begin(), core_.trusted_proxies.end(),
                   [&](const pp::cidr& c) { return c.contains(*peer); }))
    co_return refuse(pp::reject_reason::untrusted_source, "the peer is not in trusted_proxies");
  stream_->expires_after(core_.opts.proxy_header_timeout);
  for (;;) {
    const auto data = buffer_.data();
    const pp::parse_result r =
        pp::parse(std::string_view(static_cast<const char*>(data.data()), data.size()),
                  core_.opts.proxy_max_header_bytes);
    if (r.status == pp::parse_status::invalid)
      co_return refuse(r.not_a_header ? pp::reject_reason::missing : pp::reject_reason::malformed,
                       r.error);
    if (r.status == pp::parse_status::complete) {
      buffer_.consume(r.hdr.size);
      if (!r.hdr.local) {  // LOCAL / UNKNOWN: the proxy speaks for itself; keep its address
        peer_ip_ = r.hdr.source.ip.unmapped().to_string();
        peer_port_ = r.hdr.source.port;
      }
      co_return true;
    }
    const beast::error_code ec = co_await read_more();
    if (ec) co_return refuse(pp::reject_reason::incomplete, ec.message());
  }
}

task<void> connection::run(std::shared_ptr<connection> self) {
  connection& c = *self;
  const axon_options& opts = c.core_.opts;
  bool first = true;
  try {
    if (opts.proxy_protocol) {
      c.idle_ = true;  // nothing asked yet: stop() may cut the wait for the header
      const bool ok = co_await c.read_proxy_header();
      c.idle_ = false;
      if (!ok) {
        c.stream_->close();
        co_return;
      }
    }
    for (;;) {
      if (c.stop_requested_ || c.core_.stopping.load(std::memory_order_relaxed)) break;

      // Wait for the next request. A new connection gets header_timeout to send its first byte,
      // a kept-alive one idle_timeout; the stop signal interrupts this wait only.
      if (c.buffer_.size() == 0) {
        if (!first) c.release_request_memory();
        c.idle_ = true;
        c.stream_->expires_after(first ? opts.header_timeout : opts.idle_timeout);
        const beast::error_code ec = co_await c.read_more(std::exchange(c.bytes_read_, 0));
        c.idle_ = false;
        c.return_kept_buffers();
        if (ec) break;  // EOF, reset, idle timeout or stop: nothing to answer
      }
      first = false;

      // The head, with a fresh parser and the header deadline counted from the first byte.
      c.view_ = synapse{};
      c.body_.clear();
      request_parser parser(c.view_, c.target_, c.body_, opts.max_header_bytes);
      beast::error_code ec;
      if (!parser.parse_buffered(c.buffer_, true, ec) && !ec) {  // usually whole in one read
        c.stream_->expires_after(opts.header_timeout);
        ec = co_await c.read_until_done(parser, true);
      }
      if (ec) {
        if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
          const rejection rej = reject(axon_errc::header_too_large, true);
          co_await c.answer(rej, nullptr);
        } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
                   ec != http::error::end_of_stream && ec != http::error::partial_message) {
          const rejection rej = reject(axon_errc::bad_http, true, ec.message());
          co_await c.answer(rej, nullptr);
        } else if (ec == beast::error::timeout) {
          c.core_.log->debug("axon: {}:{} sent no complete header in time; closing", c.peer_ip_,
                             c.peer_port_);
        }
        break;
      }

      const bool keep = co_await c.serve(parser);
      if (!keep || c.aborted_) break;

      if (c.buffer_.size() == 0 && c.buffer_.capacity() > keep_buffer_bytes)
        c.buffer_.shrink_to_fit();
      if (c.body_.capacity() > keep_body_bytes) std::string().swap(c.body_);
      if (c.out_.body.capacity() > keep_body_bytes) std::string().swap(c.out_.body);
    }
  } catch (const std::exception& e) {
    c.core_.log->warn("axon: connection {}:{} failed: {}", c.peer_ip_, c.peer_port_, e.what());
  }
  co_await c.close_gracefully();
}

}  // namespace bt::detail
