// THE AXON'S REQUEST PIPELINE — start here to follow one request.
//
// A connection (session.cpp) reads a request head with a fresh request_parser (header size limit,
// slowloris timeout; 431 / close) and calls serve_request() below, which runs these stages in
// order. Each stage is cheaper than the next and decides before the next one costs anything; in
// particular stages 1-6 run before a single body byte is read (PROTOCOL 5.2, made strict by
// section 10):
//
//   #  stage                        on failure (HTTP status, {"message": ...})
//   1  method, Host, exact route    405 Method Not Allowed
//      (D24; absolute-form targets  400 Bad Request: missing Host header / more than one Host
//      are served by their path)    404 Synapse name 'X' not found. Available synapses [...]
//   2  header synapse parse         400 Malformed headers: <what and why>     (Python: 500)
//   3  verification (verifier.cpp)  401 Not Verified with error: <why>       hotkey SS58-42, nonce
//      + route's verify function         freshness on every request, signature required, every
//                                        signed component canonical (D1-D3, D29)
//   4  blacklist (verified caller)  403 Forbidden. Key is blacklisted: <reason>.   (D4)
//   5  nonce store record           401 ... Nonce is too old / Nonce was already used
//                                   503 when the store is full of live records
//   6  priority + a look at the     503 queue full (Retry-After)                   (D15)
//      queue (nothing taken yet)
//   7  body read                    413 (Content-Length judged before reading; enforced while
//                                   reading), 431 (chunk extensions + trailers over the header
//                                   limit), 408 (body too slow: due body_timeout after the head
//                                   plus 1 s per body_min_rate bytes; or the deadline)
//      admission                    503 queue full: the slot is taken only now, so a client
//                                   that never finishes its body holds none
//   8  body parse + hash check      400 Malformed body / Hash mismatch ...      (Python: 500/422)
//   9  forward under the deadline   408 Request timeout after <t> seconds (handler cancelled)
//      (worker pool, or coroutine)  500 Internal Server Error #<id> (handler threw; details logged)
//                                   <status> from a bt::forward_error
//  10  response                     200 + the body synapse echoed with outputs and to_headers()
//      or, for a streaming route      200 text/event-stream, bt headers, the handler's chunks
//      (PROTOCOL 7)                   (sent by its stream_writer as it goes), the final chunk
//
// A streaming route shares stages 1-8 and the deadline of 9. Its head goes out with the first
// chunk (stream_writer.cpp); until then every failure is answered as above. After it, a failure
// (handler threw, deadline, write failed or stalled, shutdown) can only cut the stream: the
// connection closes without the final chunk.
//
// Every rejection in stages 1-7 carries `connection: close` and the connection is closed (with
// the body unread, draining it would cost without bound; and a client refused on its head gets
// no second request on that connection). Later failures keep the connection alive. Error answers
// are signed only once stage 3 passed (D29). The request's deadline (min(timeout header,
// max_request_timeout) after its head arrived; a timeout of 0 means the cap) covers body
// reading, queue wait and the handler (D16). Every answer is written exactly once; the access
// line is logged at debug for each.
#include "pipeline.hpp"

#include "axon_impl.hpp"
#include "response.hpp"
#include "session.hpp"
#include "stream.hpp"

#include <bt/body_hash.hpp>
#include <bt/detail/uuid.hpp>
#include <bt/json_body.hpp>
#include <bt/python_str.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include <fmt/format.h>
#include <sodium.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

// GCC 12 reports -Wmismatched-new-delete on Asio coroutine frames at -O2 (a false positive, GCC
// PR 109224: the frame's class-specific operator new and operator delete do match).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace bt::detail {

namespace {

using clock_type = std::chrono::steady_clock;
namespace http = beast::http;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// A random uuid4 naming one internal error, so that a client's report can be matched with the
/// server log without the client seeing the details (Python's `Internal Server Error #<uuid4>`).
std::string error_id() {
  return make_uuid4();
}

/// The path of a request-target: origin-form ("/Name?query") or absolute-form
/// ("http://host:port/Name", which RFC 9112 3.2.2 requires servers to accept), without the query.
std::string_view request_path(std::string_view target) {
  const auto scheme_end = target.find("://");
  if (!target.empty() && target.front() != '/' && scheme_end != std::string_view::npos) {
    const auto path = target.find('/', scheme_end + 3);
    target = path == std::string_view::npos ? std::string_view("/") : target.substr(path);
  }
  const auto q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

std::string_view or_dash(const std::optional<std::string>& s) {
  return s && !s->empty() ? std::string_view(*s) : std::string_view("-");
}

/// One access line per request, in the spirit of bittensor's
/// `axon | <-- | {size} B | {name} | {hotkey} | {ip}:{port} | {status} | {message}`.
void log_access(const connection& c, std::string_view name, std::string_view hotkey, int status,
                std::string_view message, double seconds) {
  auto& log = *c.core_.log;
  if (!log.should_log(spdlog::level::debug)) return;
  log.debug("axon | <-- | {} B | {} | {} | {}:{} | {} | {} | {:.0f} us", c.body_bytes_, name,
            hotkey, c.peer_ip_, c.peer_port_, status, message, seconds * 1e6);
}

/// What to answer when a request stops at some stage.
struct rejection {
  int status;
  std::string message;
  bool close;           // body not read (or the client asked to close)
  int retry_after = 0;  // seconds, for 503
};

/// Writes an error answer. `r`/`headers` select the header synapse (null: a fresh Synapse).
task<bool> answer(connection& c, const rejection& rej, const route* r, const synapse* headers,
                  clock_type::time_point t0) {
  const double elapsed = seconds_since(t0);
  build_error_response(c, rej.status, rej.message, r, headers, elapsed, rej.close, rej.retry_after);
  log_access(c, r ? std::string_view(r->name()) : request_path(c.target_),
             headers ? or_dash(headers->dendrite.hotkey) : std::string_view("-"), rej.status,
             rej.message, elapsed);
  if (rej.close) c.linger_ = true;
  const bool written = co_await c.write_response();
  co_return written && !rej.close;
}

/// The request's timeout as Python's str(float) renders it ("12.0").
std::string python_seconds(double s) {
  std::string out;
  append_python_float(s, out);
  return out;
}

/// What to answer for the exception a forward function threw.
rejection forward_failure(axon::impl& core, const route& r, std::exception_ptr error, bool close) {
  rejection rej{500, {}, close};
  try {
    std::rethrow_exception(error);
  } catch (const forward_error& e) {
    rej.status = e.status() >= 100 && e.status() <= 599 ? e.status() : 500;
    rej.message = e.what();
  } catch (const std::exception& e) {
    const std::string id = error_id();
    core.log->warn("axon: forward of {} threw: {} (#{})", r.name(), e.what(), id);
    rej.message = "Internal Server Error #" + id;
  } catch (...) {
    const std::string id = error_id();
    core.log->warn("axon: forward of {} threw a non-exception (#{})", r.name(), id);
    rej.message = "Internal Server Error #" + id;
  }
  return rej;
}

/// Bounds the read of a request body: it is due `grace` after the head plus one second per
/// `rate` bytes received, and before the request's deadline. When it falls behind, the pending
/// read is cancelled (the socket stays open for the 408) and `late` says why. Runs on the
/// connection's strand (job_timer_ is bound to it), re-arming itself as the body grows.
struct body_watchdog : std::enable_shared_from_this<body_watchdog> {
  enum verdict { on_time, too_slow, past_deadline };

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
      self->late = now >= self->deadline ? past_deadline : too_slow;
      beast::error_code ignored;
      cp->stream_.socket().cancel(ignored);
    });
  }

  std::weak_ptr<connection> conn;
  clock_type::time_point start, deadline;
  std::chrono::milliseconds grace;
  double rate;
  verdict late = on_time;
};

/// The end of a streamed answer (PROTOCOL 7), once the handler returned or the deadline passed.
/// Before the head went out, failures are answered as for any route; after it, anything but a
/// normal return before the deadline cuts the stream (the connection closes without the final
/// chunk).
task<bool> finish_stream(connection& c, request_job& job, clock_type::time_point t0,
                         bool client_keep_alive, double timeout_s) {
  axon::impl& core = c.core_;
  stream_state& st = *job.stream;
  const route& r = *job.r;
  const std::string_view hotkey = job.ctx.hotkey.empty() ? "-" : job.ctx.hotkey;
  st.close_writer();  // whatever happens next, the handler's sends are over
  const bool close = !client_keep_alive || c.stop_requested_;
  rejection rej{};
  // The handler may also have returned normally just after the deadline, before the job timer
  // ran (a send refused for the deadline, or a strand busy until then): that stream is cut too.
  const bool late =
      !job.error && (st.cut.load(std::memory_order_relaxed) || clock_type::now() >= st.deadline);
  if (!job.done || late) {
    job.cancel.store(true, std::memory_order_relaxed);
    if (!job.done) job.coro_cancel.emit(net::cancellation_type::terminal);
    if (c.aborted_) {
      core.log->warn("axon: stream {} to {}:{} cut at shutdown (drain deadline passed)", r.name(),
                     c.peer_ip_, c.peer_port_);
      co_return false;
    }
    if (!st.head_started) {
      rej = {408, "Request timeout after " + python_seconds(timeout_s) + " seconds", close};
      co_return co_await answer(c, rej, &r, &job.headers, t0);
    }
    log_access(c, r.name(), hotkey, 200, "stream cut at the deadline", seconds_since(t0));
    co_return false;
  }
  if (job.error) {
    if (!st.head_started) {
      rej = forward_failure(core, r, job.error, close);
      co_return co_await answer(c, rej, &r, &job.headers, t0);
    }
    const std::string id = error_id();
    try {
      std::rethrow_exception(job.error);
    } catch (const std::exception& e) {
      core.log->warn("axon: stream {} cut: the forward threw after streaming began: {} (#{})",
                     r.name(), e.what(), id);
    } catch (...) {
      core.log->warn("axon: stream {} cut: the forward threw a non-exception (#{})", r.name(), id);
    }
    log_access(c, r.name(), hotkey, 200, "stream cut: the forward threw", seconds_since(t0));
    co_return false;
  }
  if (st.failed) {
    log_access(c, r.name(), hotkey, 200, "stream cut: write failed", seconds_since(t0));
    co_return false;
  }
  // The handler returned: the final chunk, with the head if nothing was sent.
  std::array<net::const_buffer, 4> buffers{};
  const std::size_t n = st.prepare(c, {}, buffers);
  buffers[n] = net::buffer(last_chunk.data(), last_chunk.size());
  c.stream_.expires_after(core.opts.write_timeout);
  auto [ec, written] = co_await net::async_write(c.stream_, buffers, use_task);
  (void)written;
  log_access(c, r.name(), hotkey, 200, or_dash(job.body->axon.status_message), seconds_since(t0));
  co_return !ec && !st.close && !c.stop_requested_;
}

}  // namespace

// ---- request_job ----

void request_job::run() noexcept {
  if (cancel.load(std::memory_order_relaxed)) return;  // answered 408 while queued
  try {
    if (r->spec.stream) {
      r->spec.stream(*body, writer, ctx);
    } else {
      r->spec.forward(*body, ctx);
    }
  } catch (...) {
    error = std::current_exception();
  }
}

void request_job::complete(std::shared_ptr<pool_job> self) noexcept {
  auto c = conn.lock();
  if (!c) return;  // the connection is gone; nobody waits for this result
  const strand_t ex = c->strand();
  net::post(ex, [c = std::move(c), job = std::static_pointer_cast<request_job>(std::move(self))] {
    job->finish_on_strand(*c);
  });
}

void request_job::finish_on_strand(connection& c) noexcept {
  done = true;
  if (c.waiting_job_ == this) c.job_timer_.cancel();
}

// ---- the pipeline ----

task<bool> reject_unparsed(connection& c, int status, std::string_view message) {
  // Named, not a temporary inside the co_await expression: GCC 12 mishandles the lifetime of
  // non-trivial temporaries there (double destruction).
  const rejection rej{status, std::string(message), true};
  const auto now = clock_type::now();
  co_return co_await answer(c, rej, nullptr, nullptr, now);
}

task<bool> serve_request(connection& c, request_parser& p) {
  axon::impl& core = c.core_;
  const axon_options& opts = core.opts;
  const auto t0 = clock_type::now();
  const bool body_pending = !p.is_done();
  const bool client_keep_alive = p.keep_alive();
  c.verified_ = false;
  c.body_bytes_ = 0;
  // Every answer given before the body was read closes the connection: an unread body would
  // otherwise have to be drained without bound, and a request refused on its head says nothing
  // good about what else the client has pipelined.
  constexpr bool close_early = true;
  // The answer when a stage refuses. Always a named object passed by reference: GCC 12 mishandles
  // non-trivial temporaries inside co_await expressions (they can be destroyed twice).
  rejection rej{};

  // ---- 1. method, Host and exact route (D24: before any other work) ----
  if (p.method() != http::verb::post && p.method() != http::verb::get) {
    rej = {405, "Method Not Allowed", close_early};
    co_return co_await answer(c, rej, nullptr, nullptr, t0);
  }
  // RFC 9112 3.2: an HTTP/1.1 request has exactly one Host field (HTTP/1.0 may have none).
  if (p.host_fields() > 1 || (p.host_fields() == 0 && p.version() >= 11)) {
    rej = {400,
           p.host_fields() > 1 ? "Bad Request: more than one Host header"
                               : "Bad Request: missing Host header",
           close_early};
    co_return co_await answer(c, rej, nullptr, nullptr, t0);
  }
  const std::string_view path = request_path(c.target_);
  const route* r = core.find_route(path);
  if (r == nullptr) {
    std::string msg = fmt::format("Synapse name '{}' not found.",
                                  path.empty() || path.front() != '/' ? path : path.substr(1));
    if (opts.list_synapses_on_404) {
      msg += " Available synapses ";
      msg += core.synapse_list;
    }
    {
      rej = {404, std::move(msg), close_early};
      co_return co_await answer(c, rej, nullptr, nullptr, t0);
    }
  }

  // ---- 2. header synapse ----
  if (const error& e = p.header_error()) {
    rej = {400, "Malformed headers: " + e.message(), close_early};
    co_return co_await answer(c, rej, nullptr, nullptr, t0);
  }
  if (!p.saw_body_hash()) {
    rej = {400, "Malformed headers: missing computed_body_hash", close_early};
    co_return co_await answer(c, rej, nullptr, nullptr, t0);
  }
  double timeout_s = c.view_.timeout.value_or(12.0);
  if (!std::isfinite(timeout_s) || timeout_s < 0) {
    rej = {400, "Malformed headers: timeout must be a finite, non-negative number", close_early};
    co_return co_await answer(c, rej, nullptr, nullptr, t0);
  }
  // Clamped in seconds before any conversion (a huge double would overflow the clock's integer
  // duration); 0, "no timeout", also means the cap.
  const double cap_s = std::chrono::duration<double>(opts.max_request_timeout).count();
  if (timeout_s == 0 || timeout_s > cap_s) timeout_s = cap_s;

  auto job = std::make_shared<request_job>();
  job->r = r;
  job->headers = std::move(c.view_);
  job->conn = c.weak_from_this();
  synapse& h = job->headers;
  // Python's preprocess: the observed peer replaces the claimed address (PROTOCOL 5.3 step 6).
  h.dendrite.ip = c.peer_ip_;
  h.dendrite.port = c.peer_port_;

  const auto deadline = t0 + std::chrono::duration_cast<clock_type::duration>(
                                 std::chrono::duration<double>(timeout_s));
  request_context& ctx = job->ctx;
  ctx.hotkey = h.dendrite.hotkey ? std::string_view(*h.dendrite.hotkey) : std::string_view();
  ctx.uuid = h.dendrite.uuid ? std::string_view(*h.dendrite.uuid) : std::string_view();
  ctx.nonce = h.dendrite.nonce.value_or(0);
  ctx.ip = *h.dendrite.ip;
  ctx.port = c.peer_port_;
  ctx.synapse_name = r->name();
  ctx.verified = !opts.insecure_skip_verification;
  ctx.deadline = deadline;
  ctx.cancel_flag = &job->cancel;
  const route_options& policy = r->spec.policy;

  // ---- 3. verification: who is calling, and is this request fresh and signed for us ----
  if (!opts.insecure_skip_verification) {
    std::string why;
    if (!core.verifier.check(h, wall_ns(), c.scratch_, why)) {
      rej = {401, "Not Verified with error: " + why, close_early};
      co_return co_await answer(c, rej, r, &h, t0);
    }
  }
  if (policy.verify) {
    verdict v;
    try {
      v = policy.verify(h, ctx);
    } catch (const std::exception& e) {  // Python: any exception of verify_fn is the 401 text
      v = verdict::deny(e.what());
    } catch (...) {
      v = verdict::deny("verify function failed");
    }
    if (!v.allowed) {
      rej = {401, "Not Verified with error: " + v.reason, close_early};
      co_return co_await answer(c, rej, r, &h, t0);
    }
  }
  // From here on, error answers may be signed (D29: never for an unverified request).
  c.verified_ = !opts.insecure_skip_verification;

  // ---- 4. blacklist, on the authenticated hotkey ----
  if (policy.blacklist) {
    verdict v;
    std::optional<std::string> failure;  // what the function threw (answered outside the handler)
    try {
      v = policy.blacklist(h, ctx);
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "a non-exception";
    }
    if (failure) {
      const std::string id = error_id();
      core.log->warn("axon: blacklist function of {} threw: {} (#{})", r->name(), *failure, id);
      {
        rej = {500, "Internal Server Error #" + id, close_early};
        co_return co_await answer(c, rej, r, &h, t0);
      }
    }
    if (!v.allowed) {
      rej = {403, fmt::format("Forbidden. Key is blacklisted: {}.", v.reason), close_early};
      co_return co_await answer(c, rej, r, &h, t0);
    }
  }

  // ---- 5. nonce memory: after the blacklist, so refused callers cannot fill the store ----
  if (!opts.insecure_skip_verification) {
    const std::int64_t now = wall_ns();
    switch (core.nonces->record(ctx.hotkey, ctx.uuid, ctx.nonce, now,
                                core.verifier.expiry_of(ctx.nonce))) {
      case nonce_verdict::accepted:
        break;
      case nonce_verdict::stale: {
        rej = {401, "Not Verified with error: Nonce is too old, a newer one was last processed",
               close_early};
        co_return co_await answer(c, rej, r, &h, t0);
      }
      case nonce_verdict::replayed: {
        rej = {401, "Not Verified with error: Nonce was already used", close_early};
        co_return co_await answer(c, rej, r, &h, t0);
      }
      case nonce_verdict::full: {
        rej = {503, "Service unavailable: too many active callers", close_early, 1};
        co_return co_await answer(c, rej, r, &h, t0);
      }
    }
  }

  // ---- 6. priority, and a first look at admission ----
  double priority = 0;
  if (policy.priority) {
    std::optional<std::string> failure;
    try {
      priority = policy.priority(h, ctx);
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "a non-exception";
    }
    if (failure) {
      const std::string id = error_id();
      core.log->warn("axon: priority function of {} threw: {} (#{})", r->name(), *failure, id);
      {
        rej = {500, "Internal Server Error #" + id, close_early};
        co_return co_await answer(c, rej, r, &h, t0);
      }
    }
  }
  // Every route but the inline ones takes a slot of the bounded queue: plain handlers until a
  // worker picks them up, coroutine handlers for as long as they run. The slot is taken only
  // once the body has arrived, so a client that never finishes its body holds none; a full
  // queue is refused here already, before the client spends its upload on a 503.
  const bool needs_slot = !r->spec.run_inline;
  if (needs_slot && !core.pool->has_room()) {
    rej = {503, "Service unavailable: request queue is full", close_early, 1};
    co_return co_await answer(c, rej, r, &h, t0);
  }

  // ---- 7. body: size judged before reading, enforced while reading, at a minimum rate ----
  if (const auto length = p.content_length(); length && *length > opts.max_body_bytes) {
    rej = {413,
           fmt::format("Request body too large: {} bytes, the limit is {}", *length,
                       opts.max_body_bytes),
           true};
    co_return co_await answer(c, rej, r, &h, t0);
  }
  if (body_pending) {
    if (p.expect_continue() && !co_await c.write_continue()) co_return false;
    p.max_body(opts.max_body_bytes);
    p.body_limit(opts.max_body_bytes);
    beast::error_code ec;
    body_watchdog::verdict late = body_watchdog::on_time;
    if (!p.parse_buffered(c.buffer_, false, ec) && !ec) {
      // The watchdog, not the stream's own expiry, bounds the read: a tcp_stream that times out
      // closes its socket, and the 408 could then not be written.
      c.stream_.expires_never();
      auto watch = std::make_shared<body_watchdog>(c.weak_from_this(), clock_type::now(), deadline,
                                                   opts.body_timeout, opts.body_min_rate);
      watch->arm(c);
      // (A watchdog that fires just as a read completes finds no read to cancel: hence the
      // check of `late` before each read.)
      while (!p.is_done() && watch->late == body_watchdog::on_time) {
        auto [rec, n] = co_await http::async_read_some(c.stream_, c.buffer_, p, use_task);
        (void)n;
        if (rec) {
          ec = rec;
          break;
        }
      }
      late = watch->late;
      c.job_timer_.cancel();
    }
    if (ec == http::error::body_limit) {
      rej = {413, fmt::format("Request body too large: the limit is {} bytes", opts.max_body_bytes),
             true};
      co_return co_await answer(c, rej, r, &h, t0);
    }
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      rej = {431,
             "Request Header Fields Too Large: chunk extensions and trailers exceed the header "
             "limit",
             true};
      co_return co_await answer(c, rej, r, &h, t0);
    }
    if (late != body_watchdog::on_time) {
      if (late == body_watchdog::too_slow) {
        rej = {408,
               fmt::format("Request body too slow: {} bytes in {:.1f} seconds", c.body_.size(),
                           seconds_since(t0)),
               true};
      } else {
        rej = {408, "Request timeout after " + python_seconds(timeout_s) + " seconds", true};
      }
      co_return co_await answer(c, rej, r, &h, t0);
    }
    if (ec) {
      // Malformed framing (a bad chunk, say) gets an answer; a vanished peer does not.
      if (ec.category() == http::make_error_code(http::error::bad_chunk).category() &&
          ec != http::error::partial_message && ec != http::error::end_of_stream) {
        rej = {400, "Malformed body: " + ec.message(), true};
        co_return co_await answer(c, rej, r, &h, t0);
      }
      core.log->debug("axon: {}:{} body read failed: {}", c.peer_ip_, c.peer_port_, ec.message());
      co_return false;
    }
  }
  // Admission proper: the slot is taken now that the body is here.
  if (needs_slot) {
    if (!core.pool->try_reserve()) {
      rej = {503, "Service unavailable: request queue is full", !client_keep_alive, 1};
      co_return co_await answer(c, rej, r, &h, t0);
    }
    job->slot = core.pool.get();  // returned when the job ends, unless the pool takes it
  }

  // ---- 8. body synapse and its hash ----
  job->body = r->spec.make();
  synapse& s = *job->body;
  c.body_bytes_ = c.body_.size();
  const error parsed = read_json_body(*r->spec.type, c.body_, s);
  // A large body's bytes are not needed once parsed: freeing them now means a running handler
  // costs its synapse, not also the raw body (the connection keeps small buffers for reuse).
  if (c.body_.capacity() > connection::keep_body_bytes) std::string().swap(c.body_);
  if (parsed) {
    rej = {400, "Malformed body: " + parsed.message(), !client_keep_alive};
    co_return co_await answer(c, rej, r, &h, t0);
  }
  // D5: the handler must not see a body that claims another caller than the signed headers
  // (a body whose dendrite.hotkey is null or missing claims no one: refused too).
  if (c.verified_ && s.dendrite.hotkey != h.dendrite.hotkey) {
    rej = {400, "Malformed body: dendrite.hotkey differs from the signed bt_header_dendrite_hotkey",
           !client_keep_alive};
    co_return co_await answer(c, rej, r, &h, t0);
  }
  {
    const std::string computed = body_hash(*r->spec.type, s);
    if (computed != h.computed_body_hash) {
      rej = {400,
             fmt::format("Hash mismatch between header body hash {} and parsed body hash {}",
                         h.computed_body_hash, computed),
             !client_keep_alive};
      co_return co_await answer(c, rej, r, &h, t0);
    }
  }
  // D23: status fields are the axon's to set; whatever the client put there is dropped.
  s.axon.status_code.reset();
  s.axon.status_message.reset();
  s.axon.process_time.reset();

  // ---- 9. forward, under the request's deadline ----
  if (r->spec.streaming()) {
    job->stream = std::make_shared<stream_state>(c.weak_from_this(), job, c.strand(), *r, s, t0,
                                                 deadline, !client_keep_alive);
    job->writer = stream_writer(job->stream);
  }
  if (r->spec.run_inline) {
    try {
      r->spec.forward(s, ctx);
    } catch (...) {
      job->error = std::current_exception();
    }
    job->done = true;
  } else if (r->spec.forward_async || r->spec.stream_async) {
    net::co_spawn(
        c.strand(),
        r->spec.stream_async ? r->spec.stream_async(s, job->writer, ctx)
                             : r->spec.forward_async(s, ctx),
        net::bind_cancellation_slot(
            job->coro_cancel.slot(),
            net::bind_executor(c.strand(), [job, weak = c.weak_from_this()](std::exception_ptr e) {
              job->error = e;
              if (auto cp = weak.lock()) {
                job->finish_on_strand(*cp);
              } else {
                job->done = true;
              }
            })));
  } else {
    job->slot = nullptr;  // the pool takes the reservation
    if (!core.pool->submit(priority, job)) {
      rej = {503, "Service unavailable: the axon is stopping", !client_keep_alive, 1};
      co_return co_await answer(c, rej, r, &h, t0);
    }
  }
  if (!job->done) {
    c.waiting_job_ = job.get();
    c.job_timer_.expires_at(deadline);
    auto [ec] = co_await c.job_timer_.async_wait(use_task);
    (void)ec;
    c.waiting_job_ = nullptr;
  }
  if (job->stream) co_return co_await finish_stream(c, *job, t0, client_keep_alive, timeout_s);
  if (!job->done) {
    // Deadline (or shutdown abort): answer without the handler and tell it to stop. Its result,
    // if it ever comes, is dropped: the request is answered exactly once.
    job->cancel.store(true, std::memory_order_relaxed);
    job->coro_cancel.emit(net::cancellation_type::terminal);
    if (c.aborted_) {
      core.log->warn("axon: {} from {}:{} abandoned at shutdown (drain deadline passed)", r->name(),
                     c.peer_ip_, c.peer_port_);
      co_return false;
    }
    {
      rej = {408, "Request timeout after " + python_seconds(timeout_s) + " seconds",
             !client_keep_alive || c.stop_requested_};
      co_return co_await answer(c, rej, r, &h, t0);
    }
  }
  if (job->error) {
    rej = forward_failure(core, *r, job->error, !client_keep_alive || c.stop_requested_);
    co_return co_await answer(c, rej, r, &h, t0);
  }

  // ---- 10. response: the body synapse echoed with its outputs ----
  const bool close = !client_keep_alive || c.stop_requested_;
  const double elapsed = seconds_since(t0);
  const int status = build_synapse_response(c, *r, s, elapsed, close);
  log_access(c, r->name(), ctx.hotkey.empty() ? std::string_view("-") : ctx.hotkey, status,
             or_dash(s.axon.status_message), elapsed);
  const bool written = co_await c.write_response();
  co_return written && !close;
}

}  // namespace bt::detail
