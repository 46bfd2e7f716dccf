// Authenticated responses (PROTOCOL 5.15): the header an axon adds to
// every answer and the check a dendrite makes, written once for both sides.
//
//   header          bt-response-signature: v2.{axon_nonce}.0x{sr25519 signature, 128 hex}
//   signed message  "bt-response-v2.{axon_nonce}.{axon_hotkey}.{caller_hotkey}.{request_id}.
//                    {status}.{sha256(body) hex}"
//
// axon_nonce: 1 to 20 decimal digits chosen by the axon per answer (its clock in nanoseconds);
// axon_hotkey: the axon's SS58 address; caller_hotkey and request_id: the identity the request
// was verified under (both empty when nothing verified it): the signer and
// "{dendrite.nonce}.{dendrite.uuid}" for a synapse request, Epistula-Signed-By and the
// Epistula-Uuid for an Epistula request, X-Bittensor-Hotkey and the X-Bittensor-Nonce text
// exactly as received for a btauth/1 request (PROTOCOL 14: canonical decimal, so the sender
// checks with the nonce text it sent), each set only once that request's signature verified;
// status: the decimal HTTP status; the body hash is over the exact body bytes (for a streamed
// answer: every chunk's bytes in order, and the header is a trailer field of the chunked body).
// The "bt-response-v2." prefix keeps the message from ever being read as a request signature
// (those begin with digits or hex). Version 1 hashed the body with SHA3-256; version 2 uses
// SHA-256, as Epistula does, which CPUs accelerate (the hash of a large answer costs each side a
// fraction of SHA3-256's: docs/performance.md, "Crypto"). A v1 header is refused as malformed.
#pragma once

#include <bt/keypair.hpp>
#include <bt/sha256.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace bt::sr25519 {
class key_cache;
}

namespace bt::response_signature {

/// The header's name (lower case, as written on the wire).
inline constexpr std::string_view header = "bt-response-signature";

/// The message an axon signs for one answer.
std::string signed_message(std::string_view axon_nonce, std::string_view axon_hotkey,
                           std::string_view caller_hotkey, std::string_view request_id, int status,
                           std::string_view body);

/// The header value for one answer, signed by `axon_key` (sr25519, with a secret).
std::string sign(const keypair& axon_key, std::string_view axon_nonce,
                 std::string_view caller_hotkey, std::string_view request_id, int status,
                 std::string_view body);

/// signed_message, sign and verify (below) for a body known by its hash: a streamed answer,
/// hashed as its chunks go out or come in.
std::string signed_message(std::string_view axon_nonce, std::string_view axon_hotkey,
                           std::string_view caller_hotkey, std::string_view request_id, int status,
                           const sha256_digest& body_hash);
std::string sign(const keypair& axon_key, std::string_view axon_nonce,
                 std::string_view caller_hotkey, std::string_view request_id, int status,
                 const sha256_digest& body_hash);
std::string verify(std::string_view header_value, std::string_view axon_hotkey,
                   std::string_view caller_hotkey, std::string_view request_id, int status,
                   const sha256_digest& body_hash, sr25519::key_cache* axon_keys = nullptr);

/// Checks a header value against the answer received and the hotkey the caller meant to reach
/// (never one taken from the response). Returns an empty string when the signature is valid,
/// otherwise why not ("malformed ...", "signature mismatch ..."). With `axon_keys` the signature
/// is checked through that cache of axons' keys (bt/sr25519_key_cache.hpp: the same verdicts,
/// cheaper for an axon whose answers were checked before: a validator asks the same axons again
/// and again).
std::string verify(std::string_view header_value, std::string_view axon_hotkey,
                   std::string_view caller_hotkey, std::string_view request_id, int status,
                   std::string_view body, sr25519::key_cache* axon_keys = nullptr);

}  // namespace bt::response_signature
