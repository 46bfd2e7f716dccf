// The bittensor scheme (PROTOCOL 5.5): the head's signed bt_header_dendrite_* fields (a request
// carrying a session's MAC is the session scheme's, session_scheme.cpp). The head
// carries the signature, so the request is verified before its body is read. Its stages are
// pipeline.cpp's 2 (the header synapse), 3 (verify) and 5 (the nonce's record).
#include "schemes/auth_scheme.hpp"

namespace bt::detail {

namespace {

stage_result bittensor_scheme_head(request_state& st, std::string& scratch) {
  if (stage_result rej = parse_header_synapse(st)) return rej;
  return verify(st, scratch);
}

stage_result bittensor_scheme_outcome(const request_state&, nonce_verdict v) {
  return nonce_outcome(v);
}

}  // namespace

// In auth_scheme's member order: name, member, detect, check_head, verify_body, record,
// start_record, record_outcome.
// detect null: every request is the bittensor scheme's when the route accepts it and no other
// scheme's headers are present; its check says what is missing from an unsigned one.
const auth_scheme bittensor_scheme{"bittensor",
                                   auth_mode::bittensor,
                                   nullptr,
                                   &bittensor_scheme_head,
                                   nullptr,
                                   &record_nonce,
                                   &start_record_nonce,
                                   &bittensor_scheme_outcome};

}  // namespace bt::detail
