// btauth/1's policy on one plain route (PROTOCOL 14): the axon's options (axon_options::btauth_*)
// with the route's overrides (json_route_options::btauth_*), and the bounds both must keep. The
// verifier itself is libsynapse's (bt/btauth.hpp), shared with the dendrite.
#pragma once

#include <bt/axon.hpp>
#include <bt/btauth.hpp>

#include <chrono>
#include <string_view>

namespace bt::detail {

/// A btauth/1 window (max age or allowed skew) is 0 to 24 hours: far beyond any clock skew, and
/// it keeps every sum of nonce and window inside 64 bits of nanoseconds.
constexpr bool valid_btauth_window(std::chrono::milliseconds w) noexcept {
  return w.count() >= 0 && w <= std::chrono::hours(24);
}

/// The verifier's policy for a request on a route with `route` options, for this axon
/// (`self_hotkey`, which must outlive the policy).
inline btauth::policy btauth_policy_of(const axon_options& opts, const json_route_options& route,
                                       std::string_view self_hotkey) {
  using std::chrono::nanoseconds;
  return {nanoseconds(route.btauth_max_age.value_or(opts.btauth_max_age)).count(),
          nanoseconds(route.btauth_allowed_skew.value_or(opts.btauth_allowed_skew)).count(),
          route.btauth_require_receiver.value_or(opts.btauth_require_receiver), self_hotkey};
}

}  // namespace bt::detail
