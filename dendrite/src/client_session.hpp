// A pooled connection's session state (dendrite_options::session; docs/protocol.md, "Sessions
// between our own ends"): none -> offered -> established | declined. It lives in the connection
// and dies with it. A connection is owned by exactly one call at a time (connection_pool.hpp),
// so this state needs no lock: the pool's mutex orders one call's writes before the next call's
// reads.
#pragma once

#include <bt/session_auth.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace bt::detail {

struct client_session {
  using clock = std::chrono::steady_clock;
  enum class state {
    none,         ///< nothing offered yet: the next call on the connection offers
    offered,      ///< the call in flight carries the offer; its answer decides
    established,  ///< keys agreed: requests carry bt-session instead of a signature
    declined,     ///< the axon ignored the offer (a Python axon, sessions off): never again
  };

  /// Stops using a session this long before the lifetime the axon announced runs out, so a
  /// request never reaches the axon after it would refuse the session (clocks start a round trip
  /// apart).
  static constexpr auto expiry_margin = std::chrono::seconds(1);

  state st = state::none;
  std::optional<session_auth::client_offer> offer;  ///< while offered
  std::optional<session_auth::session_keys> keys;   ///< while established
  std::string axon_hotkey;         ///< the hotkey the offer was made to (and verified against)
  std::uint64_t used = 0;          ///< requests under the session, the opening one included
  std::uint64_t max_requests = 0;  ///< the axon's bound
  clock::time_point expires{};     ///< the axon's lifetime, from the accept's arrival

  /// The session may carry one more request to `hotkey` at `now`.
  bool usable_for(std::string_view hotkey, clock::time_point now) const {
    return st == state::established && hotkey == axon_hotkey && used < max_requests &&
           now + expiry_margin < expires;
  }

  /// An established session that can carry no more requests: the connection is closed rather
  /// than reused (the axon closes it too after the last allowed request).
  bool spent(clock::time_point now) const {
    return st == state::established && (used >= max_requests || now + expiry_margin >= expires);
  }
};

}  // namespace bt::detail
