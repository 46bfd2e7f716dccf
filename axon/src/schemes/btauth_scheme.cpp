// The btauth/1 scheme on a plain JSON route (PROTOCOL 14; Bittensor SDK v11's http_auth): the
// X-Bittensor-* headers sign the method, the request target as sent, the body's SHA-256, the
// nonce, the sender and the receiver. libsynapse's verifier (bt/btauth.hpp) decides; this file
// runs it at the session's points and records the nonce:
//   J1b check_head    version, shape, receiver, freshness: before a byte of the body (refusals
//                     close) -> 400 MalformedAuth / 401 WrongReceiver, StaleRequest
//   J2b verify_body   the signature over the request as it arrived -> 401 BadSignature; from
//                     here on answers are signed over (sender, the X-Bittensor-Nonce text)
//   J3b record        (sender, btauth::replay_key(nonce)) in the axon's shared nonce store until
//                     the nonce leaves the window -> 401 ReplayedRequest / 503
#include "auth/btauth_policy.hpp"
#include "schemes/auth_scheme.hpp"
#include "state/axon_impl.hpp"

#include <bt/btauth.hpp>

#include <boost/beast/http/verb.hpp>

namespace bt::detail {

namespace {

using btauth_field = btauth::header_fields::field;

bool carries_btauth_fields(const request_state& st) noexcept {
  return st.parser.btauth().any();
}

/// The verifier's refusal as the axon answers it: 400 for MalformedAuth, else 401; the message
/// starts with the SDK's class name either way.
rejection btauth_refusal(const btauth::refusal& f, bool close) {
  return f.kind == btauth::failure::malformed_auth
             ? reject(axon_errc::btauth_malformed, close, f.why)
             : reject(axon_errc::btauth_refused, close, f.why);
}

stage_result btauth_head(request_state& st, std::string&) {
  const btauth::header_fields& h = st.parser.btauth();
  const btauth::policy policy =
      btauth_policy_of(st.core.opts, st.r->spec.json_policy, st.core.verifier.my_hotkey());
  if (const btauth::result failed =
          btauth::check_head(h, btauth::now_ns(), policy, st.btauth_claim))
    return btauth_refusal(*failed, close_early);

  request_job& j = *st.job;
  j.signer = h.value(btauth_field::hotkey_f);
  j.ctx.hotkey = j.signer;  // a claim until btauth_verify passes (ctx.verified says which)
  j.ctx.nonce = st.btauth_claim.nonce_ns;
  // No request carrying this nonce passes the window after this: the store may forget it.
  // check_head bounded the nonce to now + skew and the window to 24 h: the sum fits an int64.
  j.replay_expiry = st.btauth_claim.nonce_ns + policy.max_age_ns;
  return {};
}

stage_result btauth_verify(request_state& st, std::string_view body, std::string& scratch) {
  st.body_bytes = body.size();
  if (st.core.opts.insecure_skip_verification) return {};
  const scoped_timer timer([&st](double s) { st.core.stats->on_verify(st.r, s); });
  const btauth::header_fields& h = st.parser.btauth();
  const auto method = boost::beast::http::to_string(st.parser.method());
  if (const btauth::result failed = btauth::check_signature(
          h, st.btauth_claim, std::string_view(method.data(), method.size()), st.target, body,
          scratch))
    return btauth_refusal(*failed, !st.keep_alive);
  st.verified = true;
  st.job->ctx.verified = true;
  // The sender's key signed this nonce: from here on, answers name this sender and, as the
  // request id, the X-Bittensor-Nonce exactly as received (PROTOCOL 5.15), refusals included.
  st.identity.set(st.job->signer, h.value(btauth_field::nonce_f));
  return {};
}

stage_result btauth_outcome(const request_state& st, nonce_verdict v) {
  // `stale` is strictly_increasing's answer for the one nonce, 0, seen again: a replay too.
  return replay_outcome(v, axon_errc::btauth_replayed, axon_errc::btauth_replayed, !st.keep_alive);
}

// Every record of one (sender, nonce) carries the same store nonce, 0, as Epistula's: whatever
// the store's rule (window, unique, strictly_increasing), a second request with that nonce is
// refused while the first one's record lives, so a nonce is accepted once per sender.
stage_result btauth_record(request_state& st) {
  if (st.core.opts.insecure_skip_verification) return {};
  const request_job& j = *st.job;
  const clock_type::time_point t0 = clock_type::now();
  const nonce_verdict v = st.core.nonces->record(j.signer, btauth::replay_key(j.ctx.nonce), 0,
                                                 btauth::now_ns(), j.replay_expiry);
  st.core.stats->on_store(v, seconds_since(t0));
  return btauth_outcome(st, v);
}

void btauth_start_record(const request_state& st, nonce_completion done) noexcept {
  const request_job& j = *st.job;
  std::string key;
  try {
    key = btauth::replay_key(j.ctx.nonce);
  } catch (...) {
    done(nonce_verdict::unavailable);
    return;
  }
  st.core.nonces->async_record(j.signer, key, 0, btauth::now_ns(), j.replay_expiry, done);
}

}  // namespace

// In auth_scheme's member order: name, member, detect, check_head, verify_body, record,
// start_record, record_outcome, headers.
const auth_scheme btauth_scheme{
    "btauth",       auth_mode::btauth,    &carries_btauth_fields, &btauth_head,   &btauth_verify,
    &btauth_record, &btauth_start_record, &btauth_outcome,        "X-Bittensor-*"};

}  // namespace bt::detail
