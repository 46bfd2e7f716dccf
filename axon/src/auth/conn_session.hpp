// Sessions between our own ends on the axon's side (PROTOCOL 13): the state one connection keeps
// once it accepted a dendrite's offer, and what stage 3 decided about one request. The stage
// functions that use them are declared in pipeline/pipeline.hpp (verify_session_request,
// verify_session_offer, authenticate_answer) and defined in schemes/conn_session.cpp.
//
// A session exists only in its connection object and dies with it: nothing is shared between
// connections or axons, so there is no session to steal from elsewhere, and a key's exposure is
// bounded by the connection's life, session_max_requests and session_max_seconds.
#pragma once

#include <bt/session_auth.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace bt::detail {

/// One connection's session, if any. Touched only on the connection's strand.
struct connection_session {
  std::optional<session_auth::session_keys> keys;  // none until an accept went out
  std::string dendrite_hotkey;                     // verified by the offer's signature
  std::uint64_t used = 0;                          // requests carried, the opening one included
  std::uint64_t max_requests = 0;
  std::chrono::steady_clock::time_point expiry{};
};

/// What stage 3 decided about one request's session fields.
struct request_session {
  connection_session* conn = nullptr;  // the connection's (set before the stages run)
  bool via_session = false;            // authenticated by the session MAC, not a signature
  bool policy_passed = false;          // the blacklist passed: a pending accept may go out
  bool last = false;                   // the session's last request: answered with close
  std::optional<session_auth::accepted> pending;  // a verified offer, accepted with the answer
};

}  // namespace bt::detail
