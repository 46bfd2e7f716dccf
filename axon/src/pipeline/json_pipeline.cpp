// A PLAIN JSON ROUTE'S PIPELINE (axon::route, PROTOCOL 12 and 14): one authentication scheme of
// the route's set (json_route_options::auth: Epistula v2 or btauth/1, each behind
// schemes/auth_scheme.hpp's interface), then the same policy, admission and forward as a synapse
// (pipeline.cpp). The session (connection::admit_json) calls these stages in order; each is
// cheaper than the next, and everything the head alone decides is decided before a byte of the
// body is read:
//
//   #   stage                           on failure (HTTP status, {"message": ...})
//   1   method, Host, exact path        405 / 400 / 404, as stage 1 of pipeline.cpp
//   J1  the route's method              405 Method Not Allowed
//       the scheme (choose_plain_scheme: 400 Ambiguous authentication: ... (X-Bittensor-* and
//       X-Bittensor-* or Epistula-*)        Epistula-* on one request)
//   Epistula (epistula_scheme.cpp's plain descriptor, this file's stages):
//   J1e Epistula head, in this order:   400 Malformed Epistula headers: <which and why>
//       no field twice, Version 2,        (missing, repeated, or not of its form)
//       Timestamp window, Signed-By       401 Not Verified with error: <why>
//       SS58-42, Signed-For ours,         (outside the window; signed for another hotkey)
//       Uuid a uuid4, the signature's
//       form (0x + 128 hex)
//   btauth/1 (schemes/btauth_scheme.cpp, on libsynapse's bt/btauth.hpp):
//   J1b X-Bittensor-* head: no field    400 Malformed btauth/1 headers: MalformedAuth: <why>
//       twice, Version 1, Hotkey SS58-42, 401 WrongReceiver: ... (another's, or none while
//       Nonce canonical decimal, Crypto,      required)
//       Signature's form, Receiver ours,  401 StaleRequest: ... (outside [now - max_age,
//       Nonce window                          now + allowed_skew])
//   7a  Content-Length                  413 (before reading), as pipeline.cpp
//   7b  body read                       413 / 431 / 408, as pipeline.cpp
//   J2  Epistula: SHA-256 of the body,  401 Not Verified with error: Epistula-Request-Signature
//       sr25519 over the signed text        does not verify ...
//   J2b btauth/1: the signature over    401 BadSignature: ...
//       method, target as sent, body
//   J3  replay store: (Signed-By,       401 ... Epistula-Uuid was already used by this signer
//       "epistula:" + uuid)             503 store full / unavailable (nothing recorded)
//   J3b replay store: (Hotkey,          401 ReplayedRequest: ...
//       btauth::replay_key(nonce))      503 store full / unavailable (nothing recorded)
//   J4  blacklist on the verified       403 Forbidden. Key is blacklisted: <reason>.
//       signer, priority, queue         503 queue full (Retry-After)
//   J5  the body as JSON                400 Malformed body: <why>
//   9   forward under the deadline      408 / 500 / a forward_error's status, as pipeline.cpp
//  10   response                        the handler's status and JSON body
//
// Rejections before the body was read close the connection (as pipeline.cpp's, for the same
// reason); later ones keep it when the client asked to. The signature covers the body, so unlike
// a synapse request the body (up to max_body_bytes) is read before the signature can be
// checked; everything the head says is checked first. From the signature's check on, answers are
// signed over the verified caller and the request's id (PROTOCOL 5.15: the Epistula-Uuid, or the
// X-Bittensor-Nonce text as received).
#include "pipeline/pipeline.hpp"

#include "state/axon_impl.hpp"

#include <bt/detail/uuid.hpp>
#include <bt/epistula.hpp>
#include <bt/json_body.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

namespace bt::detail {

namespace {

rejection refusal(const epistula_failure& f, bool close) {
  return f.malformed ? reject(axon_errc::epistula_malformed, close, f.why)
                     : reject(axon_errc::not_verified, close, f.why);
}

/// Calls a policy function; what it throws becomes a 500 with an id in the log.
template <class Fn>
auto guarded(request_state& st, std::string_view what, Fn&& fn, std::optional<rejection>& failed)
    -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& e) {
    const std::string id = make_uuid4();
    st.core.log->warn("axon: {} function of {} threw: {} (#{})", what, st.r->name(), e.what(), id);
    failed = reject(axon_errc::internal_error, !st.keep_alive, id);
  } catch (...) {
    const std::string id = make_uuid4();
    st.core.log->warn("axon: {} function of {} threw a non-exception (#{})", what, st.r->name(),
                      id);
    failed = reject(axon_errc::internal_error, !st.keep_alive, id);
  }
  return {};
}

}  // namespace

stage_result check_json_head(request_state& st) {
  const axon_options& opts = st.core.opts;
  const route& r = *st.r;
  // The deadline: the route's timeout (an Epistula request carries none), under the cap.
  const double cap_s = std::chrono::duration<double>(opts.max_request_timeout).count();
  const double route_s = std::chrono::duration<double>(r.spec.json_policy.timeout).count();
  st.timeout_s = route_s > 0 && route_s < cap_s ? route_s : cap_s;
  st.deadline = st.t0 + std::chrono::duration_cast<clock_type::duration>(
                            std::chrono::duration<double>(st.timeout_s));

  auto job = std::make_shared<request_job>();
  job->r = st.r;
  request_context& ctx = job->ctx;
  ctx.ip = st.peer_ip;
  ctx.port = st.peer_port;
  ctx.synapse_name = r.name();
  ctx.deadline = st.deadline;
  ctx.cancel_flag = &job->cancel;
  st.job = std::move(job);  // from here on, refusals are answered as the plain route's

  const auto method = st.parser.method();
  if (method != (r.spec.json_get ? beast::http::verb::get : beast::http::verb::post))
    return reject(axon_errc::method_not_allowed, close_early);
  return {};
}

stage_result check_epistula_request_head(request_state& st) {
  const axon_options& opts = st.core.opts;
  request_context& ctx = st.job->ctx;
  const epistula_headers& h = st.parser.epistula();
  const epistula_policy policy{std::chrono::milliseconds(opts.epistula_past_window).count(),
                               std::chrono::milliseconds(opts.epistula_future_window).count(),
                               opts.epistula_require_signed_for, st.core.verifier.my_hotkey()};
  if (const epistula_result failed = check_epistula_head(h, epistula::now_ms(), policy, st.claim))
    return refusal(*failed, close_early);

  request_job& j = *st.job;
  j.signer = h.value(epistula_headers::signed_by);
  j.request_uuid = h.value(epistula_headers::uuid);
  ctx.hotkey = j.signer;  // a claim until verify_epistula passes (ctx.verified says which)
  ctx.uuid = j.request_uuid;
  ctx.nonce = st.claim.timestamp_ms * 1'000'000;  // the timestamp, in the nonce's nanoseconds
  // No request carrying this timestamp passes the window after this: the store may forget.
  j.replay_expiry = ctx.nonce + std::chrono::nanoseconds(opts.epistula_past_window).count();
  return {};
}

stage_result check_synapse_epistula_head(request_state& st) {
  stage_result rej = check_json_head(st);
  if (!st.job) return rej;
  if (!rej) rej = check_epistula_request_head(st);
  // The header synapse, also for a refusal's answer (its bt headers echo it): the request's
  // headers as sent, with the caller as the Epistula head names it (verified by J2).
  request_job& j = *st.job;
  j.headers = std::move(st.view);
  synapse& h = j.headers;
  h.dendrite.ip = std::string(st.peer_ip);
  h.dendrite.port = st.peer_port;
  if (!rej) {
    h.dendrite.hotkey = j.signer;
    h.dendrite.uuid = j.request_uuid;
    h.dendrite.nonce = j.ctx.nonce;
  }
  return rej;
}

stage_result verify_epistula(request_state& st, std::string_view body, std::string& scratch) {
  st.body_bytes = body.size();
  if (st.core.opts.insecure_skip_verification) return {};
  const scoped_timer timer([&st](double s) { st.core.stats->on_verify(st.r, s); });
  if (const epistula_result failed =
          check_epistula_signature(st.parser.epistula(), st.claim, body, scratch))
    return refusal(*failed, !st.keep_alive);
  st.verified = true;
  st.job->ctx.verified = true;
  // Signed-By's key signed the uuid: from here on, answers name this signer and this request
  // (PROTOCOL 5.15), refusals included.
  st.identity.set(st.job->signer, st.job->request_uuid);
  return {};
}

stage_result record_epistula(request_state& st) {
  if (st.core.opts.insecure_skip_verification) return {};
  const request_job& j = *st.job;
  const clock_type::time_point t0 = clock_type::now();
  const nonce_verdict v = st.core.nonces->record(j.signer, epistula_replay_key(j.request_uuid), 0,
                                                 epistula::now_ms() * 1'000'000, j.replay_expiry);
  st.core.stats->on_store(v, seconds_since(t0));
  return epistula_outcome(v, !st.keep_alive);
}

void start_record_epistula(const request_state& st, nonce_completion done) noexcept {
  const request_job& j = *st.job;
  std::string key;
  try {
    key = epistula_replay_key(j.request_uuid);
  } catch (...) {
    done(nonce_verdict::unavailable);
    return;
  }
  // Every record of one (signer, uuid) carries the same nonce, 0: whatever the store's rule
  // (window, unique, strictly_increasing), a second request with that uuid is refused while the
  // first one's record lives, so a uuid is accepted once per signer within the window.
  st.core.nonces->async_record(j.signer, key, 0, epistula::now_ms() * 1'000'000, j.replay_expiry,
                               done);
}

stage_result epistula_outcome(nonce_verdict v, bool close) {
  // `stale` is strictly_increasing's answer for the one nonce, 0, seen again: a replay too.
  return replay_outcome(v, axon_errc::epistula_replayed, axon_errc::epistula_replayed, close);
}

stage_result check_json_policy(request_state& st) {
  const json_route_options& policy = st.r->spec.json_policy;
  const request_context& ctx = st.job->ctx;
  std::optional<rejection> failed;
  if (policy.blacklist) {
    const verdict v = guarded(
        st, "blacklist", [&] { return policy.blacklist(ctx); }, failed);
    if (failed) return failed;
    if (!v.allowed) return reject(axon_errc::blacklisted, !st.keep_alive, v.reason);
  }
  if (policy.priority) {
    st.priority = guarded(
        st, "priority", [&] { return policy.priority(ctx); }, failed);
    if (failed) return failed;
  }
  st.needs_slot = true;  // plain routes run on the worker pool
  return {};
}

stage_result parse_json_request(request_state& st, std::string& body) {
  request_job& j = *st.job;
  if (!body.empty()) {
    if (const error e = parse_json(body, j.parsed))
      return reject(axon_errc::malformed_body, !st.keep_alive, e.message());
  }
  j.raw_body = std::move(body);
  body.clear();
  return {};
}

}  // namespace bt::detail
