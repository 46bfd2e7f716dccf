// The bittensor scheme (PROTOCOL 5.5): the head's signed bt_header_dendrite_* fields (a request
// carrying a session's MAC is the session scheme's, session_scheme.cpp). The head carries the
// signature, so the request is verified before its body is read. Its stages are pipeline.cpp's
// 2 (the header synapse), 3 (verify) and 5 (the nonce's record).
#include "schemes/auth_scheme.hpp"

namespace bt::detail {

// detect null: every request is the bittensor scheme's when the route accepts it and no other
// scheme's headers are present; its check says what is missing from an unsigned one.
constinit const auth_scheme bittensor_scheme =
    head_verified_scheme("bittensor", nullptr, &verified_head<verify>);

}  // namespace bt::detail
