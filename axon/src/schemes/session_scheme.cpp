// The session scheme (PROTOCOL 13): a request on a connection that holds a session, carrying
// its bt-session MAC in place of a signature. It rides on the bittensor scheme's routes (the
// same member bit) and differs from it in stage 3 only: verify_session instead of verify. The
// head carries the MAC, so the request is verified before its body is read.
#include "schemes/auth_scheme.hpp"

namespace bt::detail {

namespace {

stage_result session_scheme_head(request_state& st, std::string& scratch) {
  if (stage_result rej = parse_header_synapse(st)) return rej;
  return verify_session(st, scratch);
}

stage_result session_scheme_outcome(const request_state&, nonce_verdict v) {
  return nonce_outcome(v);
}

}  // namespace

// In auth_scheme's member order: name, member, detect, check_head, verify_body, record,
// start_record, record_outcome.
const auth_scheme session_scheme{
    "session", auth_mode::bittensor, &carries_session_mac, &session_scheme_head,
    nullptr,   &record_nonce,        &start_record_nonce,  &session_scheme_outcome};

}  // namespace bt::detail
