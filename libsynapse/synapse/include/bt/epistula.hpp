// Epistula v2 (PROTOCOL 12): the request headers a signer sends and the message
// its sr25519 signature covers, written once for the dendrite that signs and the axon that
// verifies.
//
//   signed message  "{sha256(body) hex}.{uuid}.{timestamp}.{signed_for}"
//
// where the body hash is lower-case hex over the exact body bytes (the empty body included),
// timestamp is the decimal Epistula-Timestamp (milliseconds since the Unix epoch) and
// signed_for is the empty string when Epistula-Signed-For is absent.
#pragma once

#include <bt/keypair.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace bt::epistula {

inline constexpr std::string_view version_header = "Epistula-Version";
inline constexpr std::string_view timestamp_header = "Epistula-Timestamp";
inline constexpr std::string_view uuid_header = "Epistula-Uuid";
inline constexpr std::string_view signed_by_header = "Epistula-Signed-By";
inline constexpr std::string_view signed_for_header = "Epistula-Signed-For";
inline constexpr std::string_view signature_header = "Epistula-Request-Signature";
/// The only version this implementation speaks.
inline constexpr std::string_view version = "2";

/// The message the request signature covers; `body_sha256_hex` is sha256_hex(body).
std::string signed_message(std::string_view body_sha256_hex, std::string_view uuid,
                           std::string_view timestamp, std::string_view signed_for);

/// The values of one signed request's headers (names above).
struct request_headers {
  std::string timestamp;   ///< decimal milliseconds since the Unix epoch
  std::string uuid;        ///< a fresh uuid4
  std::string signed_by;   ///< the signer's SS58 address
  std::string signed_for;  ///< the receiver's SS58 address; empty: the header is not sent
  std::string signature;   ///< "0x" + 128 lower-case hex digits
};

/// Signs `body` for `signed_for` (empty: for nobody in particular) with `key` (sr25519, with a
/// secret), at `timestamp_ms`, under a fresh uuid4.
request_headers sign_request(const keypair& key, std::string_view body, std::string_view signed_for,
                             std::int64_t timestamp_ms);

/// Milliseconds since the Unix epoch, now (the system clock).
std::int64_t now_ms();

}  // namespace bt::epistula
