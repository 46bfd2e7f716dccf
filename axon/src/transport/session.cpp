// The connection coroutine: keep-alive loop, idle and header deadlines, the head parser, the
// body read under its watchdog, the wait for the handler, every write, and closing. The stages
// it calls between its reads live in pipeline.cpp; the answers are built by response.cpp.
#include "transport/session.hpp"

#include "transport/request_parser.hpp"
#include "transport/stream.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
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

std::string_view or_dash(const std::optional<std::string>& s) {
  return s && !s->empty() ? std::string_view(*s) : std::string_view("-");
}

/// What a request claims as its caller, for the access line only (never signed, never shown as
/// the caller): Epistula-Signed-By on a plain route or Epistula's path, else the header
/// synapse's dendrite.hotkey.
std::string_view claimed_caller(const request_state& st) {
  if ((st.r && st.r->plain()) || st.epistula)
    return st.parser.epistula().value(epistula_headers::signed_by);
  const synapse& h = st.job ? st.job->headers : st.view;
  return h.dendrite.hotkey ? std::string_view(*h.dendrite.hotkey) : std::string_view();
}

// Stage 5 with a store that answers asynchronously (nonce_store::answers_inline() false): the
// coroutine suspends, and the store's completion, from whatever thread it answers on, resumes
// it on the connection's strand. The in-memory store never comes here (no allocation, no
// suspension on its path).
//
// A completion on the connection's own strand (the store answered inside async_record) is
// posted: the coroutine has not finished suspending. Any other completion is dispatched: on
// the thread of the connection's event loop (the Redis store's reply, read on that loop) the
// coroutine resumes at once instead of one turn of the loop later, which saves an epoll_wait
// per request; from any other thread, dispatch posts.
template <class Handler>
struct nonce_wait {
  Handler handler;
  static void complete(void* arg, nonce_verdict v) noexcept {
    std::unique_ptr<nonce_wait> self(static_cast<nonce_wait*>(arg));
    const auto ex = net::get_associated_executor(self->handler);
    auto resume = [h = std::move(self->handler), v]() mutable { std::move(h)(v); };
    if (ex.running_in_this_thread())
      net::post(ex, std::move(resume));
    else
      net::dispatch(ex, std::move(resume));
  }
};

/// `start`: start_record_nonce (synapses) or start_record_epistula (plain routes).
task<nonce_verdict> await_nonce_verdict(const request_state& st,
                                        void (*start)(const request_state&,
                                                      nonce_completion) noexcept) {
  return net::async_initiate<const net::use_awaitable_t<strand_t>, void(nonce_verdict)>(
      [&st, start](auto handler) {
        using wait = nonce_wait<decltype(handler)>;
        auto* w = new wait{std::move(handler)};
        start(st, nonce_completion{&wait::complete, w});
      },
      net::use_awaitable_t<strand_t>{});
}

}  // namespace

/// Bounds the read of a request body: it is due `grace` after the head plus one second per
/// `rate` bytes received, and before the request's deadline. When it falls behind, the pending
/// read is cancelled (the stream stays open for the 408) and `late` says why. Runs on the
/// connection's strand (job_timer_ is bound to it), re-arming itself as the body grows.
struct connection::body_watchdog : std::enable_shared_from_this<body_watchdog> {
  body_watchdog(std::weak_ptr<connection> c, clock_type::time_point start,
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
      const auto cp = self->conn.lock();
      if (!cp) return;
      const auto now = clock_type::now();
      if (now < self->deadline && now < self->due(*cp)) return self->arm(*cp);  // caught up
      self->late = now >= self->deadline ? body_lateness::past_deadline : body_lateness::too_slow;
      cp->stream_->cancel();
    });
  }

  std::weak_ptr<connection> conn;
  clock_type::time_point start, deadline;
  std::chrono::milliseconds grace;
  double rate;
  body_lateness late = body_lateness::on_time;
};

connection::connection(axon::impl& core, strand_t strand, std::unique_ptr<byte_stream> stream,
                       std::string peer_ip, std::uint16_t peer_port)
    : core_(core),
      strand_(std::move(strand)),
      stream_(std::move(stream)),
      peer_ip_(std::move(peer_ip)),
      peer_port_(peer_port),
      // Bounded: Beast buffers a whole head, chunk-size line or trailer block before parsing it,
      // so without a cap one endless line would grow the buffer without limit. The head is
      // limited to max_header_bytes; the rest is room for one read.
      buffer_(std::size_t{core.opts.max_header_bytes} + read_room),
      job_timer_(strand_) {}

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

void connection::job_finished(const request_job* job) noexcept {
  if (waiting_job_ == job) job_timer_.cancel();
}

task<bool> connection::write_response() {
  stream_->expires_after(core_.opts.write_timeout);
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

task<bool> connection::answer(const rejection& refusal, request_state* st) {
  // The session's last request closes the connection whatever its answer (PROTOCOL 13).
  rejection rej = refusal;
  if (st && st->session.last) rej.close = true;
  const clock_type::time_point t0 = st ? st->t0 : clock_type::now();
  const double elapsed = seconds_since(t0);
  const bool known = st && st->job;            // the header synapse exists: it is echoed, stamped
  const bool plain = known && st->r->plain();  // a plain route's answer: JSON, no bt headers
  if (plain) {
    write_message_body(out_.body, rej.message);
    build_json_response(out_, rej.status, rej.close, rej.retry_after_s);
  } else {
    build_error_response(core_, out_, rej.status, rej.message, known ? st->r : nullptr,
                         known ? &st->job->headers : nullptr, st && st->verified, elapsed,
                         rej.close, rej.retry_after_s);
  }
  // Signed over the identity the request was verified under, if any (PROTOCOL 5.15); a request
  // whose head could not be read at all (st null) is not signed.
  authenticate_answer(core_, out_, rej.status, st);
  core_.stats->on_rejection(rej.code);
  core_.stats->on_answer(st ? st->r : nullptr, rej.status, elapsed);
  log_access(core_, peer_ip_, peer_port_, st ? st->body_bytes : 0,
             known ? std::string_view(st->r->name()) : request_path(target_),
             st ? st->identity.view().caller_hotkey : std::string_view(),
             st ? claimed_caller(*st) : std::string_view(), rej.status, rej.message, elapsed);
  if (rej.close) linger_ = true;
  const bool written = co_await write_response();
  co_return written && !rej.close;
}

task<stage_result> connection::read_body(request_state& st, bool& alive) {
  alive = true;
  request_parser& p = st.parser;
  if (p.expect_continue() && !co_await write_continue()) {
    alive = false;
    co_return stage_result{};
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

task<void> connection::wait_for_handler(request_state& st) {
  if (st.job->done) co_return;
  waiting_job_ = st.job.get();
  job_timer_.expires_at(st.deadline);
  auto [ec] = co_await job_timer_.async_wait(use_task);
  (void)ec;
  waiting_job_ = nullptr;
}

task<bool> connection::finish_stream(request_state& st) {
  // Before the head went out, failures are answered as for any route; after it, anything but a
  // normal return before the deadline cuts the stream (the connection closes without the final
  // chunk).
  request_job& job = *st.job;
  stream_state& s = *job.stream;
  const route& r = *st.r;
  const auto access = [&](std::string_view what) {
    const double elapsed = seconds_since(st.t0);
    core_.stats->on_answer(&r, 200, elapsed);
    log_access(core_, peer_ip_, peer_port_, st.body_bytes, r.name(),
               st.identity.view().caller_hotkey, claimed_caller(st), 200, what, elapsed);
  };
  s.close_writer();  // whatever happens next, the handler's sends are over
  const bool close = !st.keep_alive || stop_requested_ || st.session.last;
  // The handler may also have returned normally just after the deadline, before the job timer
  // ran (a send refused for the deadline, or a strand busy until then): that stream is cut too.
  const bool late =
      !job.error && (s.cut.load(std::memory_order_relaxed) || clock_type::now() >= s.deadline);
  if (!job.done || late) {
    const rejection rej = cancel_at_deadline(st, close);
    if (aborted_) {
      core_.log->warn("axon: stream {} to {}:{} cut at shutdown (drain deadline passed)", r.name(),
                      peer_ip_, peer_port_);
      co_return false;
    }
    if (!s.head_started) co_return co_await answer(rej, &st);
    access("stream cut at the deadline");
    co_return false;
  }
  if (job.error) {
    if (!s.head_started) {
      const rejection rej = forward_failure(core_, r, job.error, close);
      co_return co_await answer(rej, &st);
    }
    try {
      std::rethrow_exception(job.error);
    } catch (const std::exception& e) {
      core_.log->warn("axon: stream {} cut: the forward threw after streaming began: {}", r.name(),
                      e.what());
    } catch (...) {
      core_.log->warn("axon: stream {} cut: the forward threw a non-exception", r.name());
    }
    access("stream cut: the forward threw");
    co_return false;
  }
  if (s.failed) {
    access("stream cut: write failed");
    co_return false;
  }
  // The handler returned: the final chunk (signed over every chunk in a trailer), with the head
  // if nothing was sent.
  std::array<net::const_buffer, 4> buffers{};
  const std::size_t n = s.prepare(*this, {}, buffers);
  const std::string end = build_stream_end(core_, st.identity.view(), s.body_hash.finish());
  buffers[n] = net::buffer(end.data(), end.size());
  stream_->expires_after(core_.opts.write_timeout);
  auto [ec, written] = co_await stream_->write(std::span(buffers.data(), n + 1));
  (void)written;
  access(or_dash(job.body->axon.status_message));
  co_return !ec && !s.close && !stop_requested_;
}

task<bool> connection::serve(request_parser& p) {
  request_state st(core_, p, view_, target_, peer_ip_, peer_port_);
  st.session.conn = &session_;
  // The answer when a stage refuses. Always a named object passed by reference: GCC 12
  // mishandles non-trivial temporaries inside co_await expressions (they can be destroyed twice).
  stage_result rej;

  // ---- stages 1-7a: the head alone decides; every refusal closes (nothing of the body read) ----
  if ((rej = check_request_line(st))) co_return co_await answer(*rej, &st);
  if (st.r->plain()) co_return co_await serve_json(st);
  if ((rej = choose_auth(st))) co_return co_await answer(*rej, &st);
  if (st.epistula) {
    // Epistula's path (PROTOCOL 12.4): the head, then the body its signature covers.
    if ((rej = check_synapse_epistula_head(st)) || (rej = check_declared_length(st)))
      co_return co_await answer(*rej, &st);
  } else {
    if ((rej = parse_header_synapse(st)) || (rej = verify(st, out_.scratch)) ||
        (rej = check_blacklist(st)))
      co_return co_await answer(*rej, &st);
    if (core_.opts.insecure_skip_verification || core_.nonces->answers_inline()) {
      rej = record_nonce(st);
    } else {
      const clock_type::time_point store_t0 = clock_type::now();
      const nonce_verdict v = co_await await_nonce_verdict(st, &start_record_nonce);
      core_.stats->on_store(v, seconds_since(store_t0));
      rej = nonce_outcome(v);
    }
    if (rej || (rej = prioritize(st)) || (rej = check_declared_length(st)))
      co_return co_await answer(*rej, &st);
  }

  // ---- 7b. the body, under the watchdog ----
  if (st.body_pending) {
    bool alive = true;
    rej = co_await read_body(st, alive);
    if (rej) co_return co_await answer(*rej, &st);
    if (!alive) co_return false;
  }
  if (st.epistula) {
    // ---- J2, J3, then 3b, 4 and 6 on the verified signer ----
    rej = co_await authenticate_epistula(st);
    if (rej || (rej = check_route_verify(st)) || (rej = check_blacklist(st)) ||
        (rej = prioritize(st)))
      co_return co_await answer(*rej, &st);
  }

  // ---- 7c, 8: admission, then the body synapse ----
  if ((rej = admit(st)) || (rej = check_body(st, body_))) co_return co_await answer(*rej, &st);
  // A large body's bytes are not needed once parsed: freeing them now means a running handler
  // costs its synapse, not also the raw body (the connection keeps small buffers for reuse).
  if (body_.capacity() > keep_body_bytes) std::string().swap(body_);

  // ---- 9. forward, under the request's deadline ----
  const clock_type::time_point forward_t0 = clock_type::now();
  if ((rej = start_forward(st, *this))) co_return co_await answer(*rej, &st);
  co_await wait_for_handler(st);
  // Worker-pool handlers are timed on their worker (request_job::run); the others here.
  if (st.job->done && !st.job->stats) core_.stats->on_handler(st.r, seconds_since(forward_t0));
  if (st.job->stream) co_return co_await finish_stream(st);
  const bool close = !st.keep_alive || stop_requested_ || st.session.last;
  rej = forward_outcome(st, close);
  if (aborted_ && !st.job->done) {
    core_.log->warn("axon: {} from {}:{} abandoned at shutdown (drain deadline passed)",
                    st.r->name(), peer_ip_, peer_port_);
    co_return false;
  }
  if (rej) co_return co_await answer(*rej, &st);

  // ---- 10. response: the body synapse echoed with its outputs ----
  synapse& s = *st.job->body;
  const double elapsed = seconds_since(st.t0);
  const int status = build_synapse_response(out_, *st.r, s, elapsed, close, st.job->request_hash);
  authenticate_answer(core_, out_, status, &st);
  core_.stats->on_answer(st.r, status, elapsed);
  log_access(core_, peer_ip_, peer_port_, st.body_bytes, st.r->name(),
             st.identity.view().caller_hotkey, claimed_caller(st), status,
             or_dash(s.axon.status_message), elapsed);
  const bool written = co_await write_response();
  co_return written && !close;
}

task<stage_result> connection::authenticate_epistula(request_state& st) {
  stage_result rej;  // a named object: see serve()
  if ((rej = verify_epistula(st, body_, out_.scratch))) co_return rej;
  if (core_.opts.insecure_skip_verification || core_.nonces->answers_inline()) {
    rej = record_epistula(st);
  } else {
    const clock_type::time_point store_t0 = clock_type::now();
    const nonce_verdict v = co_await await_nonce_verdict(st, &start_record_epistula);
    core_.stats->on_store(v, seconds_since(store_t0));
    rej = epistula_outcome(v, !st.keep_alive);
  }
  co_return rej;
}

task<bool> connection::serve_json(request_state& st) {
  stage_result rej;  // a named object: see serve()

  // ---- J1, 7a: the Epistula head and the declared length; refusals close ----
  if ((rej = check_json_head(st)) || (rej = check_declared_length(st)))
    co_return co_await answer(*rej, &st);

  // ---- 7b. the body, under the watchdog ----
  if (st.body_pending) {
    bool alive = true;
    rej = co_await read_body(st, alive);
    if (rej) co_return co_await answer(*rej, &st);
    if (!alive) co_return false;
  }

  // ---- J2, J3: the signature over the body, then the replay store ----
  rej = co_await authenticate_epistula(st);
  if (rej) co_return co_await answer(*rej, &st);

  // ---- J4, 7c, J5: policy, admission, the body as JSON ----
  if ((rej = check_json_policy(st)) || (rej = admit(st)) || (rej = parse_json_request(st, body_)))
    co_return co_await answer(*rej, &st);

  // ---- 9. forward on the worker pool, under the deadline ----
  if ((rej = start_forward(st, *this))) co_return co_await answer(*rej, &st);
  co_await wait_for_handler(st);
  const bool close = !st.keep_alive || stop_requested_;
  rej = forward_outcome(st, close);
  if (aborted_ && !st.job->done) {
    core_.log->warn("axon: {} from {}:{} abandoned at shutdown (drain deadline passed)",
                    st.r->name(), peer_ip_, peer_port_);
    co_return false;
  }
  if (rej) co_return co_await answer(*rej, &st);

  // ---- 10. the handler's status and JSON ----
  json_reply& reply = st.job->reply;
  const int status = reply.status >= 100 && reply.status <= 599 ? reply.status : 500;
  out_.body = reply.body.dump(-1, ' ', false, json::error_handler_t::replace);
  build_json_response(out_, status, close);
  sign_response(core_, out_, status, st.identity.view());
  const double elapsed = seconds_since(st.t0);
  core_.stats->on_answer(st.r, status, elapsed);
  log_access(core_, peer_ip_, peer_port_, st.body_bytes, st.r->name(),
             st.identity.view().caller_hotkey, claimed_caller(st), status, "-", elapsed);
  const bool written = co_await write_response();
  co_return written && !close;
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
