// An authentication scheme as the session runs it: how a request proves its caller. A route
// accepts a set of schemes (route_options::auth on a synapse route, json_route_options::auth on
// a plain JSON route: a bt::auth_mode set); each request is authenticated by exactly one, chosen
// from its head (choose_scheme, choose_plain_scheme). Adding a scheme is one new file in
// schemes/ defining its auth_scheme, plus its line in one of auth_scheme.cpp's registries.
//
// The session calls a synapse route's scheme's functions at fixed points (session_serve.cpp):
//   check_head   with the head alone, before any byte of the body (refusals close);
//   then, when the head carried the signature (verify_body null): 4 blacklist, the replay
//     record, 6 priority, 7a the declared length, the body;
//   otherwise: 7a, the body, verify_body (the signature over the exact body), the replay
//     record, 3b the route's verify function, 4 blacklist, 6 priority.
// A plain JSON route's scheme (connection::admit_json) runs after json_pipeline.cpp's J1 made
// the job: check_head, 7a, the body, verify_body, the replay record, then J4 blacklist and
// priority on the verified caller.
// The replay record is the scheme's (hotkey, nonce) key in the axon's shared nonce store:
// `record` for a store that answers inline, `start_record` + `record_outcome` for one that
// needs I/O (the session waits on its strand).
//
// The verified identity (request_state::identity, the one answers are signed over: PROTOCOL
// 5.15) is set by the check that verifies the scheme's signature or MAC, and only once it
// succeeded: a refusal before that point answers unsigned, one after it names the verified
// caller. Every scheme keeps that rule.
#pragma once

#include "pipeline/pipeline.hpp"

#include <bt/axon.hpp>

#include <string>
#include <string_view>

namespace bt::detail {

struct auth_scheme {
  std::string_view name;
  /// The bit a route's auth set must hold for this scheme to run.
  auth_mode member;
  /// Cheap, from the head's fields alone: the request carries this scheme's credentials. Null:
  /// the scheme claims every request that reaches it (registered last; its check names what is
  /// missing), and choosing it costs no call.
  bool (*detect)(const request_state& st) noexcept;
  /// Everything the head decides; creates st.job. `scratch`: room for a signed message.
  stage_result (*check_head)(request_state& st, std::string& scratch);
  /// The signature over the body, once it is read; null when check_head verified the request.
  stage_result (*verify_body)(request_state& st, std::string_view body, std::string& scratch);
  /// The replay record, inline (also the stage when opts.insecure_skip_verification is set).
  stage_result (*record)(request_state& st);
  /// The replay record through a store that needs I/O; `done` is called once.
  void (*start_record)(const request_state& st, nonce_completion done) noexcept;
  /// What a started record's verdict answers (accepted: none).
  stage_result (*record_outcome)(const request_state& st, nonce_verdict v);
  /// The headers that carry it, as named in an answer ("X-Bittensor-*"); plain-route schemes.
  std::string_view headers{};
};

/// Stages 2 and 3 of a scheme whose head carries its proof (the bittensor and session
/// schemes): the header synapse, then `Verify` (pipeline.hpp's verify or verify_session).
template <stage_result (*Verify)(request_state&, std::string&)>
stage_result verified_head(request_state& st, std::string& scratch) {
  if (stage_result rej = parse_header_synapse(st)) return rej;
  return Verify(st, scratch);
}

/// What a started nonce record's verdict answers, for a scheme whose record is the head's nonce.
inline stage_result nonce_record_outcome(const request_state&, nonce_verdict v) {
  return nonce_outcome(v);
}

/// A scheme on a synapse route's bittensor member whose head carries its proof: verified
/// before the body is read (no verify_body), its replay record the head's (hotkey, nonce).
constexpr auth_scheme head_verified_scheme(std::string_view name,
                                           bool (*detect)(const request_state&) noexcept,
                                           stage_result (*check_head)(request_state&,
                                                                      std::string&)) {
  return auth_scheme{name,
                     auth_mode::bittensor,
                     detect,
                     check_head,
                     nullptr,
                     &record_nonce,
                     &start_record_nonce,
                     &nonce_record_outcome};
}

/// The schemes, each defined in its own file of schemes/: on synapse routes,
extern const auth_scheme bittensor_scheme;  // schemes/bittensor_scheme.cpp
extern const auth_scheme epistula_scheme;   // schemes/epistula_scheme.cpp
extern const auth_scheme session_scheme;    // schemes/session_scheme.cpp
/// and on plain JSON routes (each with a verify_body: the signature covers the body).
extern const auth_scheme epistula_plain_scheme;  // schemes/epistula_scheme.cpp
extern const auth_scheme btauth_scheme;          // schemes/btauth_scheme.cpp

/// 1b. The scheme that authenticates a synapse route's request: the first registered scheme in
/// the route's set whose credentials the head carries, else the first in the set (its check then
/// says what is missing).
const auth_scheme& choose_scheme(const request_state& st) noexcept;

/// The scheme that authenticates a plain JSON route's request (after J1 made the job): the one
/// registered plain scheme whose headers the head carries, when the route's set accepts it; the
/// headers of two schemes -> 400 auth_ambiguous; none -> the first scheme of the route's set (its
/// check names what is missing). A request carrying only a scheme the route does not accept is
/// given the route's first scheme too, which then finds its own headers missing.
stage_result choose_plain_scheme(const request_state& st, const auth_scheme*& chosen);

}  // namespace bt::detail
