// btauth/1 (PROTOCOL 14): the signed HTTP requests of Bittensor SDK v11, written once for every
// end that signs or verifies them (the dendrite, the axon, the Python module).
//
//   signed bytes   "btauth/1\n{scheme}\n{METHOD}\n{target}\n{sha256(body) hex}\n{nonce}\n
//                   {sender}\n{receiver or -}"
//
// scheme is "sr25519" or "ed25519" (the key's, never echoed from a header), METHOD the method in
// upper case, target the request target exactly as sent (path and ?query), nonce the decimal
// nanoseconds since the Unix epoch, sender and receiver SS58 addresses. sr25519 signs under the
// signing context "substrate", as every Substrate signature.
//
// Verification is split as the axon runs it: check_head decides everything the head alone can
// (shape, receiver, freshness; no cryptography), check_signature verifies the body's signature.
// The replay record (has this sender used this nonce?) is the caller's store, consulted only after
// the signature verified.
#pragma once

#include <bt/detail/header_slots.hpp>
#include <bt/keypair.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bt::btauth {

inline constexpr std::string_view protocol = "btauth/1";
/// The only X-Bittensor-Version this implementation speaks.
inline constexpr std::string_view version = "1";

inline constexpr std::string_view version_header = "X-Bittensor-Version";
inline constexpr std::string_view hotkey_header = "X-Bittensor-Hotkey";
inline constexpr std::string_view nonce_header = "X-Bittensor-Nonce";
inline constexpr std::string_view signature_header = "X-Bittensor-Signature";
inline constexpr std::string_view crypto_header = "X-Bittensor-Crypto";
inline constexpr std::string_view receiver_header = "X-Bittensor-Receiver";

/// The scheme's name as it is signed and sent: "sr25519" or "ed25519".
std::string_view scheme_name(crypto_type scheme) noexcept;
/// The scheme a X-Bittensor-Crypto value names (ASCII case ignored); nullopt for anything else.
std::optional<crypto_type> parse_scheme(std::string_view name) noexcept;

/// The signed bytes, written into `out` (its capacity reused). `receiver` empty: unbound ("-").
void build_payload(std::string& out, crypto_type scheme, std::string_view method,
                   std::string_view target, std::string_view body_sha256_hex,
                   std::string_view nonce, std::string_view sender, std::string_view receiver);
std::string build_payload(crypto_type scheme, std::string_view method, std::string_view target,
                          std::string_view body_sha256_hex, std::int64_t nonce_ns,
                          std::string_view sender, std::string_view receiver);

/// The values of one signed request's headers (names above). X-Bittensor-Version is always "1".
struct request_headers {
  std::string hotkey;     ///< the signer's SS58 address
  std::string nonce;      ///< decimal nanoseconds since the Unix epoch
  std::string signature;  ///< "0x" + 128 lower-case hex digits
  std::string crypto;     ///< "ed25519", or empty for sr25519 (the header is not sent)
  std::string receiver;   ///< the receiver's SS58 address; empty: not sent (unbound)
};

/// Signs a request with `key` (sr25519 or ed25519, with a secret). `method` is upper-cased as
/// signed; `receiver` empty signs an unbound request.
request_headers sign_request(const keypair& key, std::string_view method, std::string_view target,
                             std::string_view body, std::string_view receiver,
                             std::int64_t nonce_ns);

/// Nanoseconds since the Unix epoch, now (the system clock).
std::int64_t now_ns();

/// Why a request was refused, named as the SDK's exception classes.
enum class failure : std::uint8_t {
  malformed_auth,    ///< a header missing, repeated or not of its form -> 400
  wrong_receiver,    ///< bound to another receiver, or unbound where a receiver is required
  stale_request,     ///< the nonce is outside the freshness window
  bad_signature,     ///< the signature does not verify
  replayed_request,  ///< this sender used this nonce before (the replay store's verdict)
};
/// "MalformedAuth", "WrongReceiver", "StaleRequest", "BadSignature", "ReplayedRequest".
std::string_view class_name(failure f) noexcept;

struct refusal {
  failure kind;
  std::string why;  ///< starts with class_name(kind); safe to return to the caller
};
using result = std::optional<refusal>;

/// The X-Bittensor-* fields of one request head, as received (detail::header_slots: a repeat
/// counted, the first value kept). A request that carries none has any() false.
class header_fields : public detail::header_slots<6> {
 public:
  enum field : std::uint8_t { version_f, hotkey_f, nonce_f, signature_f, crypto_f, receiver_f };

  /// True when `name` starts with "X-Bittensor-" in any case.
  static bool is_btauth(std::string_view name) noexcept;
  /// Takes one field whose name is_btauth(): the six fields above get slots; any other
  /// X-Bittensor-* name is ignored.
  void feed(std::string_view name, std::string_view value);
  /// The field's name as the SDK spells it ("X-Bittensor-Nonce").
  static std::string_view name(field f) noexcept;
};

/// A verifier's policy. The defaults are the SDK's.
struct policy {
  std::int64_t max_age_ns = 10'000'000'000;      ///< a nonce may be this old
  std::int64_t allowed_skew_ns = 2'000'000'000;  ///< ... or this far ahead
  bool require_receiver = true;                  ///< an unbound request is refused
  std::string_view self_hotkey;                  ///< this receiver's SS58 address
};

/// What check_head decoded, for the signature check and the replay record.
struct claim {
  crypto_type scheme = crypto_type::sr25519;
  std::int64_t nonce_ns = 0;
  public_key_bytes public_key{};
  signature_bytes signature{};
};

/// The head checks, cheapest first: no field repeated; the version "1"; the hotkey an SS58
/// address of format 42; the nonce canonical decimal (digits, no leading zero, at most 19); the
/// scheme; the signature 128 hex digits (with or without "0x"); the receiver ours (or absent when
/// the policy allows); then the nonce within [now - max_age, now + allowed_skew]. Fills `out`.
result check_head(const header_fields& h, std::int64_t now_ns, const policy& p, claim& out);

/// The signature of `c` over build_payload() of this request. `scratch` receives the payload.
result check_signature(const header_fields& h, const claim& c, std::string_view method,
                       std::string_view target, std::string_view body, std::string& scratch);

/// The replay store's key for a btauth/1 request's nonce: "btauth:" + the decimal nonce, which no
/// synapse uuid or Epistula key can equal, so the schemes never share a record in one store.
std::string replay_key(std::int64_t nonce_ns);

}  // namespace bt::btauth
