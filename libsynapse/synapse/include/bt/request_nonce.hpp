#pragma once
// The nonce a signing client puts on a new request, for every dialect that signs one (the synapse
// protocol's `bt_header_dendrite_nonce`, btauth/1's `X-Bittensor-Nonce`; Epistula's is
// milliseconds).

#include <cstdint>

namespace bt {

/// Nanoseconds since the Unix epoch (the system clock), but strictly above every value this
/// function returned before in this process. Receivers refuse a (hotkey, nonce) they have seen, so
/// two requests signed in the same nanosecond, by two dendrites or threads of one process with
/// the same hotkey, or across a clock step backwards, must not share a nonce. Thread-safe.
std::int64_t next_request_nonce() noexcept;

}  // namespace bt
