// The Epistula scheme (PROTOCOL 12): Epistula v2's signed headers over the exact body bytes, so
// the request is verified only once its body is read. Two descriptors, one per kind of route,
// sharing json_pipeline.cpp's stages: on a synapse route (PROTOCOL 12.4) J1 is
// check_synapse_epistula_head (the head, then the header synapse); on a plain JSON route J1e
// (check_epistula_request_head); then, on both, J2 (verify_epistula) and J3 (the uuid's record).
#include "schemes/auth_scheme.hpp"

namespace bt::detail {

namespace {

bool carries_epistula_fields(const request_state& st) noexcept {
  return st.parser.epistula().any();
}

stage_result epistula_scheme_head(request_state& st, std::string&) {
  // A bittensor signature beside Epistula's fields is refused rather than ignored: the two may
  // name different callers, and whichever the axon chose to trust, the handler (which reads the
  // synapse's dendrite fields) could be shown the other, unverified.
  if (st.parser.epistula().any() && st.view.dendrite.signature)
    return reject(axon_errc::epistula_malformed, close_early,
                  "the request carries both Epistula-* fields and bt_header_dendrite_signature "
                  "(ambiguous: send one kind of signature)");
  st.epistula = true;
  return check_synapse_epistula_head(st);
}

stage_result epistula_scheme_outcome(const request_state& st, nonce_verdict v) {
  return epistula_outcome(v, !st.keep_alive);
}

stage_result epistula_plain_head(request_state& st, std::string&) {
  return check_epistula_request_head(st);
}

}  // namespace

// In auth_scheme's member order: name, member, detect, check_head, verify_body, record,
// start_record, record_outcome, headers.
const auth_scheme epistula_scheme{
    "epistula",       auth_mode::epistula, &carries_epistula_fields, &epistula_scheme_head,
    &verify_epistula, &record_epistula,    &start_record_epistula,   &epistula_scheme_outcome,
    "Epistula-*"};

const auth_scheme epistula_plain_scheme{
    "epistula",       auth_mode::epistula, &carries_epistula_fields, &epistula_plain_head,
    &verify_epistula, &record_epistula,    &start_record_epistula,   &epistula_scheme_outcome,
    "Epistula-*"};

}  // namespace bt::detail
