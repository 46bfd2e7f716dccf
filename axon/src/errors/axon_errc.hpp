// Every refusal the axon can answer with, and THE table of their HTTP statuses and messages
// (axon_errc.cpp): a stage of the pipeline (pipeline.hpp) names an axon_errc and the details its
// message carries; the status, the base text and Retry-After come from the table only. The one
// status not fixed here is a handler's own: a bt::forward_error chooses it (handler_error).
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace bt::detail {

enum class axon_errc {
  // The head could not be read (session.hpp; the request never reached a stage).
  header_too_large,  // 431
  bad_http,          // 400, detail: Beast's parse error
  // 1. request line, Host, route
  method_not_allowed,  // 405
  missing_host,        // 400
  duplicate_host,      // 400
  unknown_route,       // 404, details: the name, then " Available synapses [...]" or ""
  // 2. header synapse
  malformed_headers,  // 400, detail: what and why
  // 2-3 of a plain route (json_pipeline.cpp): the Epistula head
  epistula_malformed,  // 400, detail: which header and why
  // a plain route's btauth/1 head (schemes/btauth_scheme.cpp, PROTOCOL 14)
  btauth_malformed,  // 400, detail: "MalformedAuth: " and which header and why
  // a plain route's request carrying the headers of two schemes
  auth_ambiguous,  // 400, detail: the two kinds of headers
  // 3. verification (built-in and the route's verify function)
  not_verified,    // 401, detail: why
  btauth_refused,  // 401, detail: the SDK's class name, ": ", why (WrongReceiver, StaleRequest,
                   // BadSignature)
  // 3. sessions (PROTOCOL 13)
  session_unknown,        // 401, detail: the session id named
  session_expired,        // 401
  session_mac_invalid,    // 401, detail: why
  session_hotkey,         // 401, detail: which hotkey differs
  session_established,    // 401: a second offer on a connection that has a session
  session_offer_invalid,  // 401, detail: why
  // 4. blacklist
  blacklisted,  // 403, detail: the function's reason
  // 5. nonce store
  nonce_stale,              // 401
  nonce_replayed,           // 401
  nonce_store_full,         // 503 + Retry-After
  nonce_store_unavailable,  // 503 + Retry-After: the store could not answer (nothing recorded)
  epistula_replayed,        // 401: the signer already used this Epistula-Uuid in the window
  btauth_replayed,          // 401: the sender already used this X-Bittensor-Nonce in the window
  // 6-7. admission
  queue_full,  // 503 + Retry-After
  // 7. body read
  body_too_large_declared,  // 413, details: Content-Length, the limit
  body_too_large,           // 413, detail: the limit
  trailers_too_large,       // 431
  body_too_slow,            // 408, details: bytes received, seconds
  malformed_framing,        // 400, detail: Beast's chunk-parse error
  // 8. body synapse
  malformed_body,  // 400, detail: what and why
  hash_mismatch,   // 400, details: the header's hash, the body's, why (the hash fields)
  // 9. forward
  request_timeout,  // 408, detail: the timeout as Python prints it
  internal_error,   // 500, detail: the error id (details only in the log)
  handler_error,    // the status a bt::forward_error chose, detail: its what()
  stopping,         // 503 + Retry-After: the axon stopped taking work
};

inline constexpr std::size_t axon_errc_count = static_cast<std::size_t>(axon_errc::stopping) + 1;

/// One row of the table. `text` is a fmt pattern whose `{}` take the details in order.
struct errc_entry {
  axon_errc code;
  int status;
  std::string_view text;
  int retry_after_s;  // > 0: a Retry-After header with this many seconds
};

/// The table, indexed by axon_errc.
extern const std::array<errc_entry, axon_errc_count> errc_table;

inline const errc_entry& entry_of(axon_errc e) noexcept {
  return errc_table[static_cast<std::size_t>(e)];
}

/// The message of `e` with its details.
template <class... Args>
std::string errc_message(axon_errc e, Args&&... details) {
  return fmt::format(fmt::runtime(entry_of(e).text), std::forward<Args>(details)...);
}

}  // namespace bt::detail
