// Epistula v2 request authentication (PROTOCOL 12), the stateless half: the Epistula-* header
// fields as the parser captured them, the checks of the head (before a byte of the body is read)
// and the signature over the body. The stateful half (has this signer used this uuid?) is the
// replay store's, consulted by the plain-route pipeline (json_pipeline.cpp) after the signature.
#pragma once

#include <bt/detail/header_slots.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bt::detail {

/// The Epistula-* fields of one request head (detail::header_slots: a repeat counted, the first
/// value kept). Filled by the request parser; a request that carries none has any() false.
class epistula_headers : public header_slots<6> {
 public:
  enum field : std::uint8_t { version, timestamp, uuid, signed_by, signed_for, signature };

  /// True when `name` is an Epistula field name ("Epistula-" in any case, then anything).
  static bool is_epistula(std::string_view name) noexcept;
  /// Takes one field whose name is_epistula(). The six fields of the convention get slots;
  /// Epistula-Secret-Signature-0/1/2 and any other Epistula-* name are ignored.
  void feed(std::string_view name, std::string_view value);
  /// The field's name as the convention spells it ("Epistula-Uuid").
  static std::string_view name(field f) noexcept;
};

/// The axon's Epistula policy (from axon_options).
struct epistula_policy {
  std::int64_t past_ms;        // a timestamp may be this old
  std::int64_t future_ms;      // ... or this far ahead
  bool require_signed_for;     // an absent (or empty) Epistula-Signed-For is refused
  std::string_view my_hotkey;  // this axon's SS58 address
};

/// A refusal: `malformed` -> 400 (the header is missing, repeated or not of its form), else 401
/// (well-formed but not acceptable: outside the window, for another axon, a bad signature).
struct epistula_failure {
  bool malformed;
  std::string why;
};
using epistula_result = std::optional<epistula_failure>;

/// What the head checks decoded, for the signature check and the replay store.
struct epistula_claim {
  std::int64_t timestamp_ms = 0;
  std::array<std::uint8_t, 32> public_key{};
  std::array<std::uint8_t, 64> signature{};
};

/// The head checks, cheapest first: no field repeated; Epistula-Version "2"; Epistula-Timestamp
/// decimal digits within [now - past, now + future]; Epistula-Signed-By an SS58 address of
/// format 42; Epistula-Signed-For this axon's address (or absent/empty when the policy allows);
/// Epistula-Uuid a uuid4 in canonical lower-case form; Epistula-Request-Signature "0x" + 128 hex
/// digits. Fills `out` on success.
epistula_result check_epistula_head(const epistula_headers& h, std::int64_t now_ms,
                                    const epistula_policy& policy, epistula_claim& out);

/// The sr25519 signature of `claim` by Signed-By over bt::epistula::signed_message() of the
/// body's SHA-256 and the head's fields. `scratch` receives the signed text.
epistula_result check_epistula_signature(const epistula_headers& h, const epistula_claim& claim,
                                         std::string_view body, std::string& scratch);

/// The replay store's key for an Epistula request: the uuid prefixed with "epistula:", which no
/// synapse request's uuid (36 canonical characters, PROTOCOL D29) can equal, so the two never
/// share a record in a store that holds both.
std::string epistula_replay_key(std::string_view uuid);

}  // namespace bt::detail
