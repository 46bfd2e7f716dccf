// Sessions between our own ends on the axon's side (see conn_session.hpp; PROTOCOL 13).
#include "auth/conn_session.hpp"

#include "pipeline/pipeline.hpp"
#include "pipeline/response.hpp"
#include "state/axon_impl.hpp"

#include <bt/detail/text.hpp>

#include <chrono>
#include <string>

namespace bt::detail {

namespace {

/// The session id a bt-session value names ("v1.{id}.{mac}"), or empty when it has no such shape.
std::string_view named_id(std::string_view value) {
  if (!value.starts_with("v1.")) return {};
  value.remove_prefix(3);
  const auto dot = value.find('.');
  return dot == std::string_view::npos ? std::string_view() : value.substr(0, dot);
}

}  // namespace

stage_result verify_session_request(request_state& st, std::string& scratch) {
  const auto& f = st.parser.session();
  const synapse& h = st.job->headers;
  connection_session* cs = st.session.conn;
  if (f.macs > 1)
    return reject(axon_errc::session_mac_invalid, close_early, "more than one bt-session field");
  const std::string_view id = named_id(f.mac);
  if (cs == nullptr || !cs->keys || (!id.empty() && id != cs->keys->id_hex()))
    return reject(axon_errc::session_unknown, close_early, id.empty() ? "-" : id);
  // Judged at the request's arrival (st.t0, the clock read once for its head), not re-read.
  if (cs->used >= cs->max_requests || st.t0 >= cs->expiry)
    return reject(axon_errc::session_expired, close_early);
  // Every check of a signed request but the signature (freshness, canonical forms), and the
  // message a signature would cover: the MAC's canonical string.
  std::string why;
  if (!st.core.verifier.check_unsigned(h, wall_ns(), scratch, why))
    return reject(axon_errc::not_verified, close_early, why);
  if (*h.dendrite.hotkey != cs->dendrite_hotkey)
    return reject(axon_errc::session_hotkey, close_early,
                  "bt_header_dendrite_hotkey is not the session's " + cs->dendrite_hotkey);
  if (!h.axon.hotkey || *h.axon.hotkey != st.core.verifier.my_hotkey())
    return reject(axon_errc::session_hotkey, close_early,
                  "bt_header_axon_hotkey is not this axon's " + st.core.verifier.my_hotkey());
  if (std::string bad = session_auth::check_request_mac(*cs->keys, f.mac, scratch); !bad.empty())
    return reject(axon_errc::session_mac_invalid, close_early, bad);
  ++cs->used;
  st.session.via_session = true;
  st.session.last = cs->used >= cs->max_requests;
  return {};
}

stage_result verify_session_offer(request_state& st) {
  const auto& f = st.parser.session();
  const synapse& h = st.job->headers;
  const axon_options& opts = st.core.opts;
  if ((st.session.conn && st.session.conn->keys) || st.session.via_session)
    return reject(axon_errc::session_established, close_early);
  if (f.offers > 1)
    return reject(axon_errc::session_offer_invalid, close_early,
                  "more than one bt-session-offer field");
  // The request's signature was verified with these very values (the nonce in canonical
  // decimal, the axon hotkey this axon's own), so the offer is bound to this request.
  std::string nonce;
  append_int(*h.dendrite.nonce, nonce);
  const session_auth::request_identity id{nonce, *h.dendrite.hotkey, st.core.verifier.my_hotkey(),
                                          *h.dendrite.uuid};
  std::string why;
  auto acc = session_auth::accept(f.offer, id, st.core.hotkey,
                                  {opts.session_max_requests, opts.session_max_seconds}, &why);
  if (!acc) return reject(axon_errc::session_offer_invalid, close_early, why);
  st.session.pending = std::move(acc);
  st.session.last = opts.session_max_requests <= 1;  // the opening request counts
  return {};
}

void authenticate_answer(const axon::impl& core, response_buffers& out, int status,
                         request_state* st) {
  if (st == nullptr) return;  // no request was read: there is nothing to name
  // The identity the request was verified under, never what its headers merely claim
  // (PROTOCOL 5.15): empty for a request nothing verified.
  const response_identity id = st->identity.view();
  if (st->session.via_session) {
    // A session request's answer: the MAC under k_s2c replaces the signature.
    std::string nonce;
    append_int(wall_ns(), nonce);
    add_head_field(
        out, session_auth::response_mac_header,
        session_auth::response_mac(*st->session.conn->keys, nonce, id.caller_hotkey, id.request_id,
                                   status, out.body, core.hotkey.ss58_address()));
    return;
  }
  sign_response(core, out, status, id);
  request_session* rs = &st->session;
  if (!rs->pending || !rs->policy_passed || !rs->conn) return;
  // The offer verified and the blacklist passed: the accept goes out with this answer, and the
  // connection holds the session from now on.
  add_head_field(out, session_auth::accept_header, rs->pending->header_value);
  connection_session& cs = *rs->conn;
  cs.keys = std::move(rs->pending->keys);
  cs.dendrite_hotkey = *st->job->headers.dendrite.hotkey;
  cs.used = 1;
  cs.max_requests = core.opts.session_max_requests;
  cs.expiry =
      std::chrono::steady_clock::now() + std::chrono::seconds(core.opts.session_max_seconds);
  rs->pending.reset();
}

}  // namespace bt::detail
