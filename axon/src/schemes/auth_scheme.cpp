// The registry of authentication schemes and the choice among a route's (auth_scheme.hpp).
#include "schemes/auth_scheme.hpp"

#include "state/axon_impl.hpp"  // route: a route's auth sets

#include <array>

namespace bt::detail {

namespace {

// Registry order is detection order: a scheme recognised by its own headers comes before the
// bittensor scheme, which claims every request (its check names what is missing). Epistula's
// headers win over a session MAC, as they did when the MAC was checked inside the bittensor
// scheme.
constexpr std::array<const auth_scheme*, 3> registered{&epistula_scheme, &session_scheme,
                                                       &bittensor_scheme};

// A plain route's schemes, each detected by its own headers; with none present the first of
// the route's set in this order answers (Epistula first: a route that accepts both keeps the
// answer it gave before btauth/1 existed).
constexpr std::array<const auth_scheme*, 2> registered_plain{&epistula_plain_scheme,
                                                             &btauth_scheme};

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

stage_result choose_plain_scheme(const request_state& st, const auth_scheme*& chosen) {
  const auth_mode accepted = st.r->spec.json_policy.auth;
  const auth_scheme* carried = nullptr;
  const auth_scheme* first = nullptr;
  for (const auth_scheme* s : registered_plain) {
    if (s->detect(st)) {
      // Two schemes' headers may name two callers: whichever the axon trusted, the other would
      // travel unverified beside it. Refused whatever the route accepts.
      if (carried)
        return reject(axon_errc::auth_ambiguous, close_early, carried->headers, s->headers);
      carried = s;
    }
    if (!first && accepts(accepted, s->member)) first = s;
  }
  // A route's set is never empty (axon::route refuses it), so `first` is set.
  chosen = carried && accepts(accepted, carried->member) ? carried : first;
  return {};
}

}  // namespace bt::detail
