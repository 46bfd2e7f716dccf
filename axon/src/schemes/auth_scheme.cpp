// The registry of authentication schemes and the choice among a route's (auth_scheme.hpp).
#include "schemes/auth_scheme.hpp"

#include <array>

namespace bt::detail {

namespace {

// Registry order is detection order: a scheme recognised by its own headers comes before the
// bittensor scheme, which claims every request (its check names what is missing). Epistula's
// headers win over a session MAC, as they did when the MAC was checked inside the bittensor
// scheme.
constexpr std::array<const auth_scheme*, 3> registered{&epistula_scheme, &session_scheme,
                                                       &bittensor_scheme};

}  // namespace

const auth_scheme& choose_scheme(const request_state& st) noexcept {
  const auth_mode accepted = st.r->spec.policy.auth;
  const auth_scheme* first = nullptr;
  const auth_scheme* chosen = nullptr;
  for (const auth_scheme* s : registered) {
    if (!accepts(accepted, s->member)) continue;
    if (!s->detect || s->detect(st)) {
      chosen = s;
      break;
    }
    if (!first) first = s;
  }
  // A route's set is never empty (axon::attach refuses it), so one of the two is set.
  return chosen ? *chosen : *first;
}

}  // namespace bt::detail
