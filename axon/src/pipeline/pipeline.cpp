// THE AXON'S REQUEST PIPELINE — start here to follow one request.
//
// A connection (session.cpp, the only owner of I/O) reads a request head with a fresh
// request_parser (header size limit, slowloris timeout; 431 / close), then calls the stage
// functions below in order, reads the body between stages 7a and 7c, waits for the handler after
// 9 and writes the one answer. A stage does no I/O: it returns nothing (continue) or a rejection
// whose status and text come from the one table in axon_errc.cpp. Each stage is cheaper than the
// next and decides before the next one costs anything; in particular stages 1-6 run before a
// single body byte is read (PROTOCOL 5.2, made strict by section 10):
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
// A plain JSON route (axon::route) leaves this table after stage 1 for its own, Epistula's
// (json_pipeline.cpp), and rejoins it for the forward (9) under the same deadline rules. A
// synapse route whose auth mode takes Epistula (route_options::auth, PROTOCOL 12.4) runs
// Epistula's head checks instead of 2-6, reads the body, checks the signature and the replay
// store, then 3b (the route's verify function), 4, 6 and 7c-10 of this table.
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
#include "pipeline/pipeline.hpp"

#include "state/axon_impl.hpp"
#include "transport/request_host.hpp"
#include "transport/stream.hpp"

#include <bt/body_hash.hpp>
#include <bt/detail/uuid.hpp>
#include <bt/json_body.hpp>
#include <bt/python_str.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/error.hpp>

#include <sodium.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

namespace bt::detail {

namespace {

namespace http = beast::http;

/// A random uuid4 naming one internal error, so that a client's report can be matched with the
/// server log without the client seeing the details (Python's `Internal Server Error #<uuid4>`).
std::string error_id() {
  return make_uuid4();
}

/// The request's timeout as Python's str(float) renders it ("12.0").
std::string python_seconds(double s) {
  std::string out;
  append_python_float(s, out);
  return out;
}

/// Why a body's hash differs from the signed one, for the 400's text: the route's hash fields,
/// and those the body left out (the axon then hashed their defaults, so the caller signed other
/// values), or, when the body has them all, that their values are not the ones signed. Called on
/// the refusal only: it parses the body a second time.
std::string hash_mismatch_hint(const synapse_descriptor& d, std::string_view body) {
  const auto& indices = d.hash_fields();
  if (indices.empty()) return "; this route has no hash fields, so the body hash is constant";
  const json object = json::parse(body, nullptr, false);
  std::string fields, missing;
  for (const std::size_t i : indices) {
    const std::string& name = d.fields()[i].name;
    fields += (fields.empty() ? "" : ", ") + name;
    if (!object.is_object() || !object.contains(name))
      missing += (missing.empty() ? "'" : ", '") + name + "'";
  }
  std::string hint = "; the hash covers the fields " + fields + " (in that order)";
  if (!missing.empty())
    return hint + ", and the body leaves out " + missing +
           ": send every hash field in the body, with the value that was signed";
  return hint +
         ", all in the body, so one of their values is not the one signed (changed after "
         "signing, or hashed differently: PROTOCOL 3)";
}

/// Calls a route's policy function; what it throws becomes `failure` (never a crash).
template <class Fn>
auto call_policy(Fn&& fn, std::optional<std::string>& failure) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "a non-exception";
  }
  return {};
}

}  // namespace

double seconds_between(clock_type::time_point t0, clock_type::time_point t1) {
  return std::chrono::duration<double>(t1 - t0).count();
}

double seconds_since(clock_type::time_point t0) {
  return seconds_between(t0, clock_type::now());
}

std::string_view request_path(std::string_view target) {
  // origin-form ("/Name?query") or absolute-form ("http://host:port/Name", which RFC 9112 3.2.2
  // requires servers to accept)
  const auto scheme_end = target.find("://");
  if (!target.empty() && target.front() != '/' && scheme_end != std::string_view::npos) {
    const auto path = target.find('/', scheme_end + 3);
    target = path == std::string_view::npos ? std::string_view("/") : target.substr(path);
  }
  const auto q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

void append_log_text(std::string& out, std::string_view text, std::size_t max_bytes, bool claim) {
  const bool cut = text.size() > max_bytes;
  if (cut) {
    // Cut at a character boundary: UTF-8 passes through unescaped outside claims.
    std::size_t n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xc0) == 0x80) --n;
    text = text.substr(0, n);
  }
  out.reserve(out.size() + text.size() + (cut ? 3 : 0));
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    const bool escape =
        u < 0x20 || u == 0x7f || ch == '|' || ch == '\\' || (claim && (ch == '"' || u > 0x7f));
    if (!escape) {
      out.push_back(ch);
      continue;
    }
    constexpr char digits[] = "0123456789abcdef";
    out.append("\\x");
    out.push_back(digits[u >> 4]);
    out.push_back(digits[u & 0xf]);
  }
  if (cut) out.append("...");
}

void log_access(const axon::impl& core, std::string_view peer_ip, std::uint16_t peer_port,
                std::size_t body_bytes, std::string_view name, std::string_view verified_hotkey,
                std::string_view claimed_hotkey, int status, std::string_view message,
                double seconds) {
  // In the spirit of bittensor's
  // `axon | <-- | {size} B | {name} | {hotkey} | {ip}:{port} | {status} | {message}`.
  auto& log = *core.log;
  if (!log.should_log(spdlog::level::debug)) return;
  // Only a verified hotkey is shown as the caller; a claim is labelled as one, quoted, and every
  // text a client chose is escaped, so that none of it reads as another field or line.
  constexpr std::size_t max_claim = 64, max_name = 256, max_message = 1024;
  std::string caller;
  if (!verified_hotkey.empty()) {
    append_log_text(caller, verified_hotkey, max_claim, true);
  } else if (claimed_hotkey.empty()) {
    caller = "unverified";
  } else {
    caller = "unverified, claims \"";
    append_log_text(caller, claimed_hotkey, max_claim, true);
    caller.push_back('"');
  }
  std::string safe_name, safe_message;
  append_log_text(safe_name, name, max_name, false);
  append_log_text(safe_message, message, max_message, false);
  log.debug("axon | <-- | {} B | {} | {} | {}:{} | {} | {} | {:.0f} us", body_bytes, safe_name,
            caller, peer_ip, peer_port, status, safe_message, seconds * 1e6);
}

rejection forward_failure(axon::impl& core, const route& r, std::exception_ptr error, bool close) {
  try {
    std::rethrow_exception(error);
  } catch (const forward_error& e) {
    rejection rej = reject(axon_errc::handler_error, close, e.what());
    if (e.status() >= 100 && e.status() <= 599) rej.status = e.status();
    return rej;
  } catch (const std::exception& e) {
    const std::string id = error_id();
    core.log->warn("axon: forward of {} threw: {} (#{})", r.name(), e.what(), id);
    return reject(axon_errc::internal_error, close, id);
  } catch (...) {
    const std::string id = error_id();
    core.log->warn("axon: forward of {} threw a non-exception (#{})", r.name(), id);
    return reject(axon_errc::internal_error, close, id);
  }
}

// ---- request_job ----

void request_job::run() noexcept {
  if (cancel.load(std::memory_order_relaxed)) return;  // answered 408 while queued
  const scoped_timer timer([this, started = clock_type::now()](double run_s) {
    if (!stats) return;
    stats->on_worker_job(r, std::chrono::duration<double>(started - queued_at).count(), run_s);
  });
  try {
    if (r->plain()) {
      reply = r->spec.json_forward(raw_body, parsed, ctx);
    } else if (r->spec.stream) {
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

void request_job::finish_on_strand(request_host& c) noexcept {
  done = true;
  c.job_finished(this);
}

// ---- the stages ----

stage_result check_request_line(request_state& st) {
  const request_parser& p = st.parser;
  if (p.method() != http::verb::post && p.method() != http::verb::get)
    return reject(axon_errc::method_not_allowed, close_early);
  // RFC 9112 3.2: an HTTP/1.1 request has exactly one Host field (HTTP/1.0 may have none).
  if (p.host_fields() > 1) return reject(axon_errc::duplicate_host, close_early);
  if (p.host_fields() == 0 && p.version() >= 11)
    return reject(axon_errc::missing_host, close_early);
  const std::string_view path = request_path(st.target);
  st.r = st.core.find_route(path);
  if (st.r == nullptr) {
    std::string available;
    if (st.core.opts.list_synapses_on_404)
      available = " Available synapses " + st.core.synapse_list;
    return reject(axon_errc::unknown_route, close_early,
                  path.empty() || path.front() != '/' ? path : path.substr(1), available);
  }
  return {};
}

stage_result parse_header_synapse(request_state& st) {
  const axon_options& opts = st.core.opts;
  if (const error& e = st.parser.header_error())
    return reject(axon_errc::malformed_headers, close_early, e.message());
  if (!st.parser.saw_body_hash())
    return reject(axon_errc::malformed_headers, close_early, "missing computed_body_hash");
  double timeout_s = st.view.timeout.value_or(12.0);
  if (!std::isfinite(timeout_s) || timeout_s < 0)
    return reject(axon_errc::malformed_headers, close_early,
                  "timeout must be a finite, non-negative number");
  // Clamped in seconds before any conversion (a huge double would overflow the clock's integer
  // duration); 0, "no timeout", also means the cap.
  const double cap_s = std::chrono::duration<double>(opts.max_request_timeout).count();
  if (timeout_s == 0 || timeout_s > cap_s) timeout_s = cap_s;
  st.timeout_s = timeout_s;
  st.deadline = st.t0 + std::chrono::duration_cast<clock_type::duration>(
                            std::chrono::duration<double>(timeout_s));

  auto job = std::make_shared<request_job>();
  job->r = st.r;
  job->headers = std::move(st.view);
  synapse& h = job->headers;
  // Python's preprocess: the observed peer replaces the claimed address (PROTOCOL 5.3 step 6).
  h.dendrite.ip = std::string(st.peer_ip);
  h.dendrite.port = st.peer_port;
  request_context& ctx = job->ctx;
  ctx.hotkey = h.dendrite.hotkey ? std::string_view(*h.dendrite.hotkey) : std::string_view();
  ctx.uuid = h.dendrite.uuid ? std::string_view(*h.dendrite.uuid) : std::string_view();
  ctx.nonce = h.dendrite.nonce.value_or(0);
  ctx.ip = *h.dendrite.ip;
  ctx.port = st.peer_port;
  ctx.synapse_name = st.r->name();
  ctx.verified = !opts.insecure_skip_verification;
  ctx.deadline = st.deadline;
  ctx.cancel_flag = &job->cancel;
  st.job = std::move(job);
  return {};
}

namespace {

// 3's tail once a signature or a session MAC covered the head's fields: from here on, answers
// name this caller and this request (PROTOCOL 5.15), refusals included. Then a session offer
// riding on the request, the route's verify function, and error answers may be signed (D29:
// never for an unverified request).
stage_result finish_verify(request_state& st) {
  st.identity.set_synapse(st.job->headers.dendrite);
  if (st.core.opts.accept_sessions && st.parser.session().offers > 0)
    if (stage_result rej = verify_session_offer(st)) return rej;
  if (stage_result rej = check_route_verify(st)) return rej;
  st.verified = true;
  return {};
}

}  // namespace

stage_result verify(request_state& st, std::string& scratch) {
  const scoped_timer timer([&st](double s) {
    if (!st.signature_pending) st.core.stats->on_verify(st.r, s);  // else signature_outcome's
  });
  st.verify_t0 = timer.t0;  // the stage's one clock read at its start
  // Skipped verification: only the route's own function runs, and nothing counts as verified.
  if (st.core.opts.insecure_skip_verification) return check_route_verify(st);
  // The session fields are not this check's: with sessions off they are ignored, as a Python
  // axon ignores them (a request with a MAC and no signature is then refused as unsigned).
  std::string why;
  if (st.core.opts.verify_batch_max > 1) {
    signature_check& c = st.pending_signature;
    if (!st.core.verifier.check_before_verify(st.job->headers, wall_ns(), c.message, why, c.key,
                                              c.signature))
      return reject(axon_errc::not_verified, close_early, why);
    st.signature_pending = true;
    return {};
  }
  if (!st.core.verifier.check(st.job->headers, wall_ns(), scratch, why))
    return reject(axon_errc::not_verified, close_early, why);
  return finish_verify(st);
}

stage_result signature_outcome(request_state& st, bool valid) {
  st.signature_pending = false;
  const stage_result rej = valid ? finish_verify(st)
                                 : reject(axon_errc::not_verified, close_early,
                                          st.core.verifier.mismatch_reason(st.job->headers));
  st.core.stats->on_verify(st.r, seconds_since(st.verify_t0));
  return rej;
}

bool carries_session_mac(const request_state& st) noexcept {
  const axon_options& opts = st.core.opts;
  return opts.accept_sessions && !opts.insecure_skip_verification && st.parser.session().macs > 0;
}

stage_result verify_session(request_state& st, std::string& scratch) {
  const scoped_timer timer([&st](double s) { st.core.stats->on_verify(st.r, s); });
  if (stage_result rej = verify_session_request(st, scratch)) return rej;
  return finish_verify(st);
}

stage_result check_route_verify(request_state& st) {
  synapse& h = st.job->headers;
  if (const auto& fn = st.r->spec.policy.verify) {
    verdict v;
    try {
      v = fn(h, st.job->ctx);
    } catch (const std::exception& e) {  // Python: any exception of verify_fn is the 401 text
      v = verdict::deny(e.what());
    } catch (...) {
      v = verdict::deny("verify function failed");
    }
    if (!v.allowed) return reject(axon_errc::not_verified, close_early, v.reason);
  }
  return {};
}

stage_result check_blacklist(request_state& st) {
  const auto& fn = st.r->spec.policy.blacklist;
  if (!fn) {
    st.session.policy_passed = true;
    return {};
  }
  std::optional<std::string> failure;  // what the function threw (answered outside the handler)
  const verdict v = call_policy([&] { return fn(st.job->headers, st.job->ctx); }, failure);
  if (failure) {
    const std::string id = error_id();
    st.core.log->warn("axon: blacklist function of {} threw: {} (#{})", st.r->name(), *failure, id);
    return reject(axon_errc::internal_error, close_early, id);
  }
  if (!v.allowed) return reject(axon_errc::blacklisted, close_early, v.reason);
  st.session.policy_passed = true;
  return {};
}

stage_result record_nonce(request_state& st) {
  if (st.core.opts.insecure_skip_verification) return {};
  const request_context& ctx = st.job->ctx;
  const clock_type::time_point t0 = clock_type::now();
  const nonce_verdict v = st.core.nonces->record(ctx.hotkey, ctx.uuid, ctx.nonce, wall_ns(),
                                                 st.core.verifier.expiry_of(ctx.nonce));
  st.core.stats->on_store(v, seconds_since(t0));
  return nonce_outcome(v);
}

void start_record_nonce(const request_state& st, nonce_completion done) noexcept {
  const request_context& ctx = st.job->ctx;
  st.core.nonces->async_record(ctx.hotkey, ctx.uuid, ctx.nonce, wall_ns(),
                               st.core.verifier.expiry_of(ctx.nonce), done);
}

stage_result nonce_outcome(nonce_verdict v) {
  return replay_outcome(v, axon_errc::nonce_stale, axon_errc::nonce_replayed, close_early);
}

stage_result replay_outcome(nonce_verdict v, axon_errc stale, axon_errc replayed, bool close) {
  switch (v) {
    case nonce_verdict::accepted:
      return {};
    case nonce_verdict::stale:
      return reject(stale, close);
    case nonce_verdict::replayed:
      return reject(replayed, close);
    case nonce_verdict::full:
      return reject(axon_errc::nonce_store_full, close);
    case nonce_verdict::unavailable:
      return reject(axon_errc::nonce_store_unavailable, close);
  }
  return reject(axon_errc::nonce_store_full, close);  // not reached: every verdict above
}

stage_result prioritize(request_state& st) {
  if (const auto& fn = st.r->spec.policy.priority) {
    std::optional<std::string> failure;
    st.priority = call_policy([&] { return fn(st.job->headers, st.job->ctx); }, failure);
    if (failure) {
      const std::string id = error_id();
      st.core.log->warn("axon: priority function of {} threw: {} (#{})", st.r->name(), *failure,
                        id);
      return reject(axon_errc::internal_error, close_early, id);
    }
  }
  // Every route but the inline ones takes a slot of the bounded queue: plain handlers until a
  // worker picks them up, coroutine handlers for as long as they run. The slot is taken only
  // once the body has arrived (admit), so a client that never finishes its body holds none; a
  // full queue is refused here already, before the client spends its upload on a 503.
  st.needs_slot = !st.r->spec.run_inline;
  if (st.needs_slot && !st.core.pool->has_room()) return reject(axon_errc::queue_full, close_early);
  return {};
}

stage_result check_declared_length(request_state& st) {
  const std::uint64_t limit = st.core.opts.max_body_bytes;
  if (const auto length = st.parser.content_length(); length && *length > limit)
    return reject(axon_errc::body_too_large_declared, true, *length, limit);
  return {};
}

stage_result body_read_failure(const request_state& st, beast::error_code ec, body_lateness late,
                               std::size_t bytes_read) {
  if (ec == http::error::body_limit)
    return reject(axon_errc::body_too_large, true, st.core.opts.max_body_bytes);
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow)
    return reject(axon_errc::trailers_too_large, true);
  if (late == body_lateness::too_slow)
    return reject(axon_errc::body_too_slow, true, bytes_read, seconds_since(st.t0));
  if (late == body_lateness::past_deadline)
    return reject(axon_errc::request_timeout, true, python_seconds(st.timeout_s));
  // Malformed framing (a bad chunk, say) gets an answer; a vanished peer does not.
  if (ec.category() == http::make_error_code(http::error::bad_chunk).category() &&
      ec != http::error::partial_message && ec != http::error::end_of_stream)
    return reject(axon_errc::malformed_framing, true, ec.message());
  return {};
}

stage_result admit(request_state& st) {
  if (!st.needs_slot) return {};
  if (!st.core.pool->try_reserve()) return reject(axon_errc::queue_full, !st.keep_alive);
  st.job->slot = st.core.pool.get();  // returned when the job ends, unless the pool takes it
  return {};
}

stage_result check_body(request_state& st, std::string& body) {
  request_job& job = *st.job;
  const route& r = *st.r;
  job.body = r.spec.make();
  synapse& s = *job.body;
  const synapse& h = job.headers;
  st.body_bytes = body.size();
  const error parsed = read_json_body(*r.spec.type, body, s);
  if (parsed) return reject(axon_errc::malformed_body, !st.keep_alive, parsed.message());
  if (st.epistula) {
    // Epistula's signature covers every byte of the body, so there is no body hash to check.
    // D5 in its form: a body that names a caller names the signer; the handler sees the signer.
    if (s.dendrite.hotkey && s.dendrite.hotkey != h.dendrite.hotkey)
      return reject(axon_errc::malformed_body, !st.keep_alive,
                    "dendrite.hotkey differs from the signed Epistula-Signed-By");
    s.dendrite.hotkey = h.dendrite.hotkey;
  } else if (st.verified && s.dendrite.hotkey != h.dendrite.hotkey) {
    // D5: the handler must not see a body that claims another caller than the signed headers
    // (a body whose dendrite.hotkey is null or missing claims no one: refused too).
    return reject(axon_errc::malformed_body, !st.keep_alive,
                  "dendrite.hotkey differs from the signed bt_header_dendrite_hotkey");
  } else if (const std::string& computed = job.request_hash.compute(*r.spec.type, s);
             computed != h.computed_body_hash) {
    return reject(axon_errc::hash_mismatch, !st.keep_alive, h.computed_body_hash, computed,
                  hash_mismatch_hint(*r.spec.type, body));
  }
  // D23: status fields are the axon's to set; whatever the client put there is dropped.
  s.axon.status_code.reset();
  s.axon.status_message.reset();
  s.axon.process_time.reset();
  return {};
}

stage_result start_forward(request_state& st, request_host& c) {
  const std::shared_ptr<request_job>& job = st.job;
  const route& r = *st.r;
  // Null for a plain JSON route, whose handler runs on the worker pool (request_job::run) and
  // takes the body bytes instead; only the synapse paths below dereference it.
  synapse* const s = job->body.get();
  job->conn = c.weak_from_this();
  if (r.spec.streaming()) {
    job->stream = std::make_shared<stream_state>(c.weak_from_this(), job, c.strand(), r, *s, st.t0,
                                                 st.deadline, !st.keep_alive || st.session.last);
    job->writer = stream_writer(job->stream);
  }
  if (r.spec.run_inline) {
    try {
      r.spec.forward(*s, job->ctx);
    } catch (...) {
      job->error = std::current_exception();
    }
    job->done = true;
  } else if (r.spec.forward_async || r.spec.stream_async) {
    net::co_spawn(
        c.strand(),
        r.spec.stream_async ? r.spec.stream_async(*s, job->writer, job->ctx)
                            : r.spec.forward_async(*s, job->ctx),
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
    job->stats = st.core.stats.get();
    job->queued_at = clock_type::now();
    if (!st.core.pool->submit(st.priority, job)) return reject(axon_errc::stopping, !st.keep_alive);
  }
  return {};
}

rejection cancel_at_deadline(request_state& st, bool close) {
  request_job& job = *st.job;
  job.cancel.store(true, std::memory_order_relaxed);
  if (!job.done) job.coro_cancel.emit(net::cancellation_type::terminal);
  return reject(axon_errc::request_timeout, close, python_seconds(st.timeout_s));
}

stage_result forward_outcome(request_state& st, bool close) {
  // Not done: answered without the handler, which is told to stop. Its result, if it ever
  // comes, is dropped: the request is answered exactly once.
  if (!st.job->done) return cancel_at_deadline(st, close);
  if (st.job->error) return forward_failure(st.core, *st.r, st.job->error, close);
  return {};
}

}  // namespace bt::detail
