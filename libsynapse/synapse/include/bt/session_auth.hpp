// Sessions between our own ends (PROTOCOL 13): authenticate once per keep-alive connection,
// then MAC each request and answer, written once for the axon and the dendrite.
//
//   offer   (request)   bt-session-offer: v1.{client x25519 pk, 64 hex}.0x{sr25519 sig, 128 hex}
//           signed by the dendrite hotkey over
//           "bt-session-offer-v1.{client_pk}.{nonce}.{dendrite_hotkey}.{axon_hotkey}.{uuid}"
//   accept  (response)  bt-session-accept: v1.{session_id, 32 hex}.{axon x25519 pk, 64 hex}.
//                       {max_requests}.{lifetime_s}.0x{sr25519 sig, 128 hex}
//           signed by the axon hotkey over "bt-session-accept-v1.{session_id}.{client_pk}.
//           {axon_pk}.{max_requests}.{lifetime_s}.{nonce}.{dendrite_hotkey}.{axon_hotkey}.{uuid}"
//   request bt-session: v1.{session_id}.{HMAC-SHA-256 under k_c2s, 64 hex} over
//           "bt-session-request-v1.{session_id}.{canonical}" (canonical: the message a request
//           signature would cover)
//   answer  bt-response-mac: v2.{axon_nonce}.{HMAC-SHA-256 under k_s2c, 64 hex} over
//           bt::response_signature::signed_message(...)
//
// Keys: crypto_kx between the two ephemeral x25519 keys, then each direction's key is a keyed
// BLAKE2b of "bt-session-v1.{c2s|s2c}." + offer message + "|" + accept message, which binds it to
// both signed strings. Hex on the wire is lower case; upper case is refused as malformed (the
// signed strings are built from the header text).
//
// Secrets (ephemeral x25519 secrets, kx keys, session keys) live in heap blocks that are wiped
// (sodium_memzero) when no longer needed and on destruction; a moved-from object holds none.
#pragma once

#include <bt/keypair.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace bt::session_auth {

/// Header names (lower case, as written on the wire).
inline constexpr std::string_view offer_header = "bt-session-offer";
inline constexpr std::string_view accept_header = "bt-session-accept";
inline constexpr std::string_view request_header = "bt-session";
inline constexpr std::string_view response_mac_header = "bt-response-mac";

/// The request the offer rides on: its nonce, hotkeys and uuid exactly as in its headers.
struct request_identity {
  std::string_view nonce, dendrite_hotkey, axon_hotkey, uuid;
};

/// A session's bounds: requests it may carry (the opening one included) and its lifetime.
struct bounds {
  std::uint64_t max_requests;
  std::uint64_t lifetime_s;
};

/// The established keys of one session (move-only). A moved-from or destroyed object holds no
/// key bytes; MACs made or checked with an empty object fail ("no session keys").
class session_keys {
 public:
  session_keys(session_keys&&) noexcept;
  session_keys& operator=(session_keys&&) noexcept;
  session_keys(const session_keys&) = delete;
  session_keys& operator=(const session_keys&) = delete;
  ~session_keys();

  /// False after a move from this object.
  bool has_keys() const noexcept { return state_ != nullptr; }
  /// The session id, 32 lower-case hex digits (empty when !has_keys()).
  std::string_view id_hex() const noexcept;
  /// The bounds the axon announced.
  bounds limits() const noexcept;

 private:
  struct state;  // wiped on destruction
  explicit session_keys(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
  friend struct keys_access;
};

/// The dendrite's side of one offer (move-only): an ephemeral x25519 key (its secret wiped on
/// destruction and as soon as the keys are derived) and the header value signed by the
/// dendrite's hotkey.
class client_offer {
 public:
  /// Makes the ephemeral key and signs the offer. `dendrite_key` must have a secret and its
  /// address must be id.dendrite_hotkey (std::invalid_argument otherwise).
  client_offer(const keypair& dendrite_key, const request_identity& id);
  client_offer(client_offer&&) noexcept;
  client_offer& operator=(client_offer&&) noexcept;
  client_offer(const client_offer&) = delete;
  client_offer& operator=(const client_offer&) = delete;
  ~client_offer();

  /// The bt-session-offer header value.
  const std::string& header_value() const noexcept;
  /// Verifies an accept header value with the axon hotkey of the identity given at
  /// construction (the hotkey the dendrite meant to call) and derives the keys; nullopt with the
  /// reason in `why` (may be null) otherwise. The ephemeral secret is wiped either way.
  std::optional<session_keys> complete(std::string_view accept_value, std::string* why) &&;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// The axon's answer to an offer: the keys and the bt-session-accept header value.
struct accepted {
  session_keys keys;
  std::string header_value;
};

/// Verifies an offer (signed by id.dendrite_hotkey over the request's identity; id.axon_hotkey
/// must be `axon_key`'s address) and answers it with a fresh session id and ephemeral key,
/// signed by `axon_key`. nullopt with the reason in `why` (may be null) when the offer is
/// malformed or its signature does not verify, or the bounds are zero.
std::optional<accepted> accept(std::string_view offer_value, const request_identity& id,
                               const keypair& axon_key, bounds b, std::string* why);

/// The bt-session header value for a request whose signature message would be `canonical`.
std::string request_mac(const session_keys& keys, std::string_view canonical);
/// Empty when `header_value` is a valid bt-session value for `canonical` under `keys`, else the
/// reason: "malformed ...", "unknown session id", "MAC invalid", "no session keys".
std::string check_request_mac(const session_keys& keys, std::string_view header_value,
                              std::string_view canonical);

/// The bt-response-mac header value for one answer (arguments as response_signature::sign's,
/// with the axon's own hotkey).
std::string response_mac(const session_keys& keys, std::string_view axon_nonce,
                         std::string_view caller_hotkey, std::string_view request_id, int status,
                         std::string_view body, std::string_view axon_hotkey);
/// Empty when valid, else the reason ("malformed ...", "MAC mismatch ...", "no session keys").
std::string check_response_mac(const session_keys& keys, std::string_view header_value,
                               std::string_view caller_hotkey, std::string_view request_id,
                               int status, std::string_view body, std::string_view axon_hotkey);

}  // namespace bt::session_auth
