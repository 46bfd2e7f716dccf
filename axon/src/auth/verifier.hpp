// Stateless request verification (PROTOCOL 5.5, stricter per D1, D2, D3, D25, D29): the caller's
// hotkey, the nonce's freshness, the canonical form of every signed component and the
// signature. The stateful half (has this nonce been used?) is the nonce_store's, consulted by the
// pipeline after the blacklist.
#pragma once

#include <bt/keypair.hpp>
#include <bt/synapse.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bt::detail {

/// Python's ALLOWED_DELTA: how old a nonce may be, before adding the request's timeout.
inline constexpr std::int64_t allowed_delta_ns = 4'000'000'000;

class verifier {
 public:
  /// `my_hotkey`: this axon's SS58; requests must be signed for it. `future_skew_ns`: how far
  /// ahead a nonce may be. `timeout_cap_ns`: the most a request's timeout may widen the window.
  verifier(std::string my_hotkey, std::int64_t future_skew_ns, std::int64_t timeout_cap_ns);

  /// Checks, in this order: hotkey present and valid SS58 of format 42; nonce present,
  /// non-negative and within (now - 4 s - min(timeout, cap), now + skew]; uuid present and
  /// canonical (36 characters, lower-case hex 8-4-4-4-12, as Python's str(uuid.uuid1()));
  /// computed_body_hash of exactly 64 lower-case hex digits; signature present, "0x" + 128 hex
  /// digits, and a valid sr25519 signature by the hotkey over
  /// "{nonce}.{hotkey}.{my_hotkey}.{uuid}.{computed_body_hash}", the nonce in canonical decimal.
  /// The canonical forms (D29) make that text readable one way only: with my_hotkey fixed (this
  /// axon's own SS58-42 address), no signed text of another shape verifies as a request.
  /// On failure returns false and sets `why` to the text after "Not Verified with error: ".
  /// `scratch` is a reusable buffer for the signed message. Thread-safe (const).
  bool check(const synapse& headers, std::int64_t now_ns, std::string& scratch,
             std::string& why) const;

  /// check() up to the sr25519 verify itself, for a caller that verifies later (the axon's
  /// verify_batcher): every field check and the signature's format, in check()'s order and with
  /// its texts; then the caller's key and the 64 signature bytes, and the signed message in
  /// `scratch`. A signature that then fails to verify is refused with mismatch_reason().
  bool check_before_verify(const synapse& headers, std::int64_t now_ns, std::string& scratch,
                           std::string& why, public_key_bytes& caller,
                           std::array<std::uint8_t, 64>& signature) const;
  /// check()'s text for a request that passed check_before_verify() and whose signature did
  /// not verify.
  std::string mismatch_reason(const synapse& headers) const;

  /// check() without the signature, for a request authenticated by its connection's session
  /// (PROTOCOL 13): every field check above, then the message a signature would cover (the
  /// session MAC's canonical string) written into `scratch`.
  bool check_unsigned(const synapse& headers, std::int64_t now_ns, std::string& scratch,
                      std::string& why) const;

  /// When a record of `nonce` may be forgotten: no request carrying it can be fresh afterwards,
  /// whatever timeout it claims.
  std::int64_t expiry_of(std::int64_t nonce) const noexcept;

  const std::string& my_hotkey() const noexcept { return my_hotkey_; }

 private:
  /// Hotkey, nonce, uuid and body hash (the order of check()); the caller's public key.
  bool check_fields(const synapse& h, std::int64_t now_ns, std::string& why,
                    public_key_bytes& caller) const;
  /// The signature header's presence and format (the order of check()); its 64 bytes.
  bool read_signature(const synapse& h, std::string& why,
                      std::array<std::uint8_t, 64>& signature) const;
  /// "{nonce}.{hotkey}.{my_hotkey}.{uuid}.{computed_body_hash}" (fields already checked).
  void write_message(const synapse& h, std::string& scratch) const;

  std::string my_hotkey_;
  std::int64_t future_skew_ns_;
  std::int64_t timeout_cap_ns_;
};

}  // namespace bt::detail
