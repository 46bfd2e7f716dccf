// The parts of a ping's floor bt-ping --baseline measures besides the bare round trip: the
// request/response bytes a signed ping puts on the wire (so the bare echo replays the same
// sizes) and the in-process cost of one sr25519 signature and one verification.
#pragma once

#include "bare_echo.hpp"

#include <bt/keypair.hpp>
#include <bt/synapse.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace bt::perf {

/// A signed request for `s` (base fields filled as the dendrite fills them: timeout 5, dendrite
/// ip/version/nonce/uuid/hotkey/signature, axon ip/port/hotkey), encoded with the shared codec,
/// and the 200 answer an axon gives (echoed synapse with axon status 200/"Success" and a
/// process_time, compact JSON, to_headers()). Header names and counts match the real exchange;
/// sizes match within a few bytes (nonce and process_time digits vary).
/// With `sign` false (--no-crypto) the request carries no signature header, as an unsigned
/// dendrite sends it.
http_exchange make_signed_exchange(const synapse_descriptor& d, synapse& s,
                                   const keypair& dendrite_key, const std::string& axon_hotkey,
                                   std::uint16_t axon_port, bool sign = true);

/// Makes a signed exchange (made with `sign` false) the shape of a session ping's (PROTOCOL 13):
/// the request carries a bt-session header and the answer a bt-response-mac, of their real
/// sizes (the MAC values are placeholders: the bare echo checks nothing).
void make_session_shaped(http_exchange& ex);

struct crypto_timings {
  double sign_us = 0;    ///< mean of one sr25519 sign of a ping's signing message
  double verify_us = 0;  ///< mean of one verify_signature of it (the axon's hot path)
  std::size_t message_bytes = 0;
};

/// Times `iterations` signs then `iterations` verifications of a ping-shaped message
/// ("{nonce}.{hotkey}.{hotkey}.{uuid}.{body_hash}") after a short warm-up, on this thread,
/// timed by the thread's CPU clock (robust to preemption on a shared machine).
crypto_timings measure_crypto(const keypair& key, std::size_t iterations);

}  // namespace bt::perf
