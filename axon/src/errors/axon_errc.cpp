// THE list of every status the axon can answer a request with (besides 200 and 100 Continue,
// and a handler's own bt::forward_error status), in axon_errc order (checked at compile time).
// The texts are Python's where Python has one (PROTOCOL 5.2, 5.5, 5.10), so that a Python
// validator's error handling sees what it expects.
#include "errors/axon_errc.hpp"

namespace bt::detail {

namespace {

using enum axon_errc;

constexpr std::array<errc_entry, axon_errc_count> rows{{
    {header_too_large, 431, "Request Header Fields Too Large", 0},
    {bad_http, 400, "Bad Request: {}", 0},
    {method_not_allowed, 405, "Method Not Allowed", 0},
    {missing_host, 400, "Bad Request: missing Host header", 0},
    {duplicate_host, 400, "Bad Request: more than one Host header", 0},
    {unknown_route, 404, "Synapse name '{}' not found.{}", 0},
    {malformed_headers, 400, "Malformed headers: {}", 0},
    {epistula_malformed, 400, "Malformed Epistula headers: {}", 0},
    {btauth_malformed, 400, "Malformed btauth/1 headers: {}", 0},
    {auth_ambiguous, 400,
     "Ambiguous authentication: the request carries both {} and {} headers (send one kind of "
     "signature)",
     0},
    {not_verified, 401, "Not Verified with error: {}", 0},
    // The SDK's failure class first (btauth::class_name), so that a v11 client recognises it.
    {btauth_refused, 401, "{}", 0},
    {session_unknown, 401, "Not Verified with error: no session {} on this connection", 0},
    {session_expired, 401, "Not Verified with error: session expired", 0},
    {session_mac_invalid, 401, "Not Verified with error: session MAC invalid: {}", 0},
    {session_hotkey, 401, "Not Verified with error: session hotkey mismatch: {}", 0},
    {session_established, 401,
     "Not Verified with error: session already established on this connection", 0},
    {session_offer_invalid, 401, "Not Verified with error: session offer invalid: {}", 0},
    {blacklisted, 403, "Forbidden. Key is blacklisted: {}.", 0},
    {nonce_stale, 401, "Not Verified with error: Nonce is too old, a newer one was last processed",
     0},
    {nonce_replayed, 401, "Not Verified with error: Nonce was already used", 0},
    {nonce_store_full, 503, "Service unavailable: too many active callers", 1},
    {nonce_store_unavailable, 503,
     "Service unavailable: the replay store is not answering, the request was not recorded", 1},
    {epistula_replayed, 401,
     "Not Verified with error: Epistula-Uuid was already used by this signer", 0},
    {btauth_replayed, 401,
     "ReplayedRequest: this X-Bittensor-Nonce was already used by this X-Bittensor-Hotkey", 0},
    {queue_full, 503, "Service unavailable: request queue is full", 1},
    {body_too_large_declared, 413, "Request body too large: {} bytes, the limit is {}", 0},
    {body_too_large, 413, "Request body too large: the limit is {} bytes", 0},
    {trailers_too_large, 431,
     "Request Header Fields Too Large: chunk extensions and trailers exceed the header limit", 0},
    {body_too_slow, 408, "Request body too slow: {} bytes in {:.1f} seconds", 0},
    {malformed_framing, 400, "Malformed body: {}", 0},
    {malformed_body, 400, "Malformed body: {}", 0},
    // The last detail names the route's hash fields and what the body did with them.
    {hash_mismatch, 400, "Hash mismatch between header body hash {} and parsed body hash {}{}", 0},
    {request_timeout, 408, "Request timeout after {} seconds", 0},
    {internal_error, 500, "Internal Server Error #{}", 0},
    {handler_error, 500, "{}", 0},  // status: the forward_error's (500 when out of range)
    {stopping, 503, "Service unavailable: the axon is stopping", 1},
}};

constexpr bool in_order() {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (static_cast<std::size_t>(rows[i].code) != i) return false;
  return true;
}
static_assert(in_order(), "errc_table rows must follow the axon_errc order, one row each");

}  // namespace

const std::array<errc_entry, axon_errc_count> errc_table = rows;

}  // namespace bt::detail
