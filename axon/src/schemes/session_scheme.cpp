// The session scheme (PROTOCOL 13): a request on a connection that holds a session, carrying
// its bt-session MAC in place of a signature. It rides on the bittensor scheme's routes (the
// same member bit) and differs from it in stage 3 only: verify_session (the MAC, then the same
// checks) instead of verify. The head carries the MAC, so the request is verified before its
// body is read; its replay record is the head's nonce, as for a signed request.
#include "schemes/auth_scheme.hpp"

namespace bt::detail {

constinit const auth_scheme session_scheme =
    head_verified_scheme("session", &carries_session_mac, &verified_head<verify_session>);

}  // namespace bt::detail
