// One request's course through the session: the stages in their order (pipeline.hpp), the
// authentication scheme's stages where auth_scheme.hpp puts them, the body read between them,
// the wait for the handler and the one answer, with its stats and access line. The connection's
// I/O itself (reads, writes, timers, closing) is session.cpp's.
#include "schemes/auth_scheme.hpp"
#include "session/session.hpp"
#include "transport/request_parser.hpp"
#include "transport/stream.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <memory>
#include <span>
#include <utility>

// GCC 12 reports -Wmismatched-new-delete on Asio coroutine frames at -O2 (a false positive: the
// frame's class-specific operator new and operator delete do match).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace bt::detail {

namespace {

std::string_view or_dash(const std::optional<std::string>& s) {
  return s && !s->empty() ? std::string_view(*s) : std::string_view("-");
}

/// What a request claims as its caller, for the access line only (never signed, never shown as
/// the caller): X-Bittensor-Hotkey on a plain route that carries it, Epistula-Signed-By on
/// another plain route or Epistula's path, else the header synapse's dendrite.hotkey.
std::string_view claimed_caller(const request_state& st) {
  if (st.r && st.r->plain() && st.parser.btauth().any())
    return st.parser.btauth().value(btauth::header_fields::hotkey_f);
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

/// `start`: the authentication scheme's start_record.
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

// Stage 3's signature with batch verification: the coroutine suspends while its loop's
// verify_batcher collects the signatures waiting with it; the drain completes it on a thread of
// that loop, outside any strand, so dispatch resumes it there at once (a strand busy elsewhere
// queues it). The wait owns the coroutine (and so the connection): a connection cannot be freed
// while its signature waits, and a loop that shuts down first discards the wait, destroying the
// coroutine without resuming it.
template <class Handler>
struct signature_wait {
  Handler handler;
  static void complete(void* arg, bool valid) noexcept {
    std::unique_ptr<signature_wait> self(static_cast<signature_wait*>(arg));
    const auto ex = net::get_associated_executor(self->handler);
    net::dispatch(ex, [h = std::move(self->handler), valid]() mutable { std::move(h)(valid); });
  }
  static void discard(void* arg) noexcept { delete static_cast<signature_wait*>(arg); }
};

/// Submits st.pending_signature to the batcher of `strand`'s loop; the verdict (valid or not).
task<bool> await_signature(request_state& st, const strand_t& strand) {
  return net::async_initiate<const net::use_awaitable_t<strand_t>, void(bool)>(
      [&st, &strand](auto handler) {
        using wait = signature_wait<decltype(handler)>;
        auto w = std::make_unique<wait>(wait{std::move(handler)});
        verify_batcher::of(strand.get_inner_executor().context())
            .submit(std::move(st.pending_signature), st.core.opts.verify_batch_max,
                    st.core.stats.get(),
                    verify_completion{&wait::complete, &wait::discard, w.get()});
        w.release();  // the batcher's now: completed or discarded exactly once
      },
      net::use_awaitable_t<strand_t>{});
}

}  // namespace

task<bool> connection::answer(const rejection& refusal, request_state* st) {
  // The session's last request closes the connection whatever its answer (PROTOCOL 13).
  rejection rej = refusal;
  if (st && st->session.last) rej.close = true;
  const clock_type::time_point now = clock_type::now();  // the answer's one clock read
  const double elapsed = st ? seconds_between(st->t0, now) : 0.0;
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
  const bool written = co_await write_response(now);
  co_return written && !rej.close;
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
  const auto access = [&](std::string_view what) { account(st, 200, what, seconds_since(st.t0)); };
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
  bool alive = true;  // false: the peer vanished while its body was read (nothing to answer)

  // ---- stages 1-7a: the head alone decides; every refusal closes (nothing of the body read) ----
  if ((rej = check_request_line(st))) co_return co_await answer(*rej, &st);
  if (st.r->plain()) {
    rej = co_await admit_json(st, alive);
  } else {
    // A synapse route's stages run in this frame: the most common request (a synapse, a store
    // that answers inline) costs no coroutine frame but this one and the body read's.
    const auth_scheme* scheme = &choose_scheme(st);
    if ((rej = scheme->check_head(st, out_.scratch))) co_return co_await answer(*rej, &st);
    if (st.signature_pending) {  // batch verification: the verdict is awaited in a statement
      const bool valid = co_await await_signature(st, strand_);
      if ((rej = signature_outcome(st, valid))) co_return co_await answer(*rej, &st);
    }
    st.job->ctx.scheme = scheme->name;
    if (scheme->verify_body == nullptr) {
      // Verified on the head: 4, 5 and 6 before a byte of the body is read.
      if ((rej = check_blacklist(st))) co_return co_await answer(*rej, &st);
      if (replay_answers_inline())
        rej = scheme->record(st);
      else
        rej = co_await await_replay(st, *scheme);
      if (rej || (rej = prioritize(st))) co_return co_await answer(*rej, &st);
    }
    if ((rej = check_declared_length(st))) co_return co_await answer(*rej, &st);

    // ---- 7b. the body, under the watchdog ----
    if (st.body_pending) {
      rej = co_await read_body(st, alive);
      if (rej) co_return co_await answer(*rej, &st);
      if (!alive) co_return false;
    }
    // ---- the signature over the body and its replay record, then 3b, 4 and 6 on the signer ----
    // No co_await inside a condition: GCC 12 evaluated the co_await of `a && co_await b` even
    // when `a` was false, and so authenticated a signed head's request a second time, through
    // its scheme's null verify_body (clang and the sanitizer builds were right).
    if (scheme->verify_body != nullptr) {
      rej = co_await authenticate_body(st, *scheme);
      if (!rej && !(rej = check_route_verify(st)) && !(rej = check_blacklist(st)))
        rej = prioritize(st);
    }

    // ---- 7c, 8: admission, then the body synapse ----
    if (!rej && !(rej = admit(st))) rej = check_body(st, body_);
    // A large body's bytes are not needed once parsed: freeing them now means a running handler
    // costs its synapse, not also the raw body (the connection keeps small buffers for reuse).
    if (body_.capacity() > keep_body_bytes) std::string().swap(body_);
  }
  if (!alive) co_return false;
  if (rej) co_return co_await answer(*rej, &st);

  // ---- 9. forward, under the request's deadline ----
  const clock_type::time_point forward_t0 = clock_type::now();
  if ((rej = start_forward(st, *this))) co_return co_await answer(*rej, &st);
  co_await wait_for_handler(st);
  // One clock read ends the handler stage: the handler's time and the request's elapsed time
  // (process_time) both end here. Worker-pool handlers (every plain route's) are timed on their
  // worker (request_job::run); the others here.
  const clock_type::time_point handled_at = clock_type::now();
  if (st.job->done && !st.job->stats)
    core_.stats->on_handler(st.r, seconds_between(forward_t0, handled_at));
  if (st.job->stream) co_return co_await finish_stream(st);
  // (A plain route has no session: st.session.last is false there.)
  const bool close = !st.keep_alive || stop_requested_ || st.session.last;
  rej = forward_outcome(st, close);
  if (aborted_ && !st.job->done) {
    core_.log->warn("axon: {} from {}:{} abandoned at shutdown (drain deadline passed)",
                    st.r->name(), peer_ip_, peer_port_);
    co_return false;
  }
  if (rej) co_return co_await answer(*rej, &st);

  // ---- 10. the success answer ----
  std::string_view message = "-";
  int status = 0;
  const double elapsed = seconds_between(st.t0, handled_at);
  if (st.r->plain()) {  // the handler's status and JSON
    json_reply& reply = st.job->reply;
    status = reply.status >= 100 && reply.status <= 599 ? reply.status : 500;
    out_.body = reply.body.dump(-1, ' ', false, json::error_handler_t::replace);
    build_json_response(out_, status, close);
    sign_response(core_, out_, status, st.identity.view());
  } else {  // the body synapse echoed with its outputs
    synapse& s = *st.job->body;
    status = build_synapse_response(out_, *st.r, s, elapsed, close, st.job->request_hash);
    authenticate_answer(core_, out_, status, &st);
    message = or_dash(s.axon.status_message);
  }
  account(st, status, message, elapsed);
  const bool written = co_await write_response(handled_at);
  co_return written && !close;
}

task<stage_result> connection::admit_json(request_state& st, bool& alive) {
  stage_result rej;  // a named object: see serve()

  // ---- J1, the scheme's head, 7a: the declared length; refusals close ----
  const auth_scheme* scheme = nullptr;
  if ((rej = check_json_head(st)) || (rej = choose_plain_scheme(st, scheme)) ||
      (rej = scheme->check_head(st, out_.scratch)))
    co_return rej;
  st.job->ctx.scheme = scheme->name;
  if ((rej = check_declared_length(st))) co_return rej;

  // ---- 7b. the body, under the watchdog ----
  if (st.body_pending) {
    rej = co_await read_body(st, alive);
    if (rej || !alive) co_return rej;
  }

  // ---- J2, J3: the signature over the body, then the replay store ----
  if ((rej = co_await authenticate_body(st, *scheme))) co_return rej;

  // ---- J4, 7c, J5: policy, admission, the body as JSON ----
  if (!(rej = check_json_policy(st)) && !(rej = admit(st))) rej = parse_json_request(st, body_);
  co_return rej;
}

task<stage_result> connection::authenticate_body(request_state& st, const auth_scheme& scheme) {
  stage_result rej;  // a named object: see serve()
  if ((rej = scheme.verify_body(st, body_, out_.scratch))) co_return rej;
  if (replay_answers_inline()) co_return scheme.record(st);
  co_return co_await await_replay(st, scheme);
}

bool connection::replay_answers_inline() const noexcept {
  return core_.opts.insecure_skip_verification || core_.nonces->answers_inline();
}

task<stage_result> connection::await_replay(request_state& st, const auth_scheme& scheme) {
  const clock_type::time_point store_t0 = clock_type::now();
  const nonce_verdict v = co_await await_nonce_verdict(st, scheme.start_record);
  core_.stats->on_store(v, seconds_since(store_t0));
  co_return scheme.record_outcome(st, v);
}

void connection::account(const request_state& st, int status, std::string_view message,
                         double elapsed) {
  core_.stats->on_answer(st.r, status, elapsed);
  log_access(core_, peer_ip_, peer_port_, st.body_bytes, st.r->name(),
             st.identity.view().caller_hotkey, claimed_caller(st), status, message, elapsed);
}

}  // namespace bt::detail
