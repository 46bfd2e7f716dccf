#include "auth/verifier.hpp"

#include <bt/detail/text.hpp>
#include <bt/sr25519.hpp>
#include <bt/ss58.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace bt::detail {

namespace {

/// str(uuid.UUID) form: 36 characters, lower-case hex digits in groups 8-4-4-4-12 joined by '-'.
bool canonical_uuid(std::string_view u) noexcept {
  return u.size() == 36 && u[8] == '-' && u[13] == '-' && u[18] == '-' && u[23] == '-' &&
         is_lower_hex(u.substr(0, 8)) && is_lower_hex(u.substr(9, 4)) &&
         is_lower_hex(u.substr(14, 4)) && is_lower_hex(u.substr(19, 4)) &&
         is_lower_hex(u.substr(24, 12));
}

/// A SHA3-256 digest as Python's hexdigest() writes it: 64 lower-case hex digits.
bool canonical_body_hash(std::string_view h) noexcept {
  return h.size() == 64 && is_lower_hex(h);
}

/// ss58::decode, remembering the last address each thread decoded (a connection's requests, and
/// a validator's, repeat their hotkey): its checksum is a BLAKE2b-512, about 1 µs per request.
std::optional<ss58::decoded> decode_hotkey(std::string_view address, std::error_code& ec) {
  thread_local std::string last_address;
  thread_local std::optional<ss58::decoded> last;
  if (last && address == last_address) return last;
  std::optional<ss58::decoded> out = ss58::decode(address, ec);
  if (out) {
    last_address.assign(address);
    last = out;
  }
  return out;
}

}  // namespace

verifier::verifier(std::string my_hotkey, std::int64_t future_skew_ns, std::int64_t timeout_cap_ns)
    : my_hotkey_(std::move(my_hotkey)),
      future_skew_ns_(future_skew_ns),
      timeout_cap_ns_(timeout_cap_ns) {}

std::int64_t verifier::expiry_of(std::int64_t nonce) const noexcept {
  const std::int64_t window = allowed_delta_ns + timeout_cap_ns_;
  return nonce > std::numeric_limits<std::int64_t>::max() - window
             ? std::numeric_limits<std::int64_t>::max()
             : nonce + window;
}

bool verifier::check(const synapse& h, std::int64_t now_ns, std::string& scratch,
                     std::string& why) const {
  public_key_bytes caller{};
  std::array<std::uint8_t, 64> sig{};
  if (!check_before_verify(h, now_ns, scratch, why, caller, sig)) return false;
  const auto bytes =
      std::span(reinterpret_cast<const std::uint8_t*>(scratch.data()), scratch.size());
  if (sr25519::verify(caller, bytes, sig)) {
    why = mismatch_reason(h);
    return false;
  }
  return true;
}

bool verifier::check_before_verify(const synapse& h, std::int64_t now_ns, std::string& scratch,
                                   std::string& why, public_key_bytes& caller,
                                   std::array<std::uint8_t, 64>& signature) const {
  if (!check_fields(h, now_ns, why, caller) || !read_signature(h, why, signature)) return false;
  write_message(h, scratch);
  return true;
}

bool verifier::check_unsigned(const synapse& h, std::int64_t now_ns, std::string& scratch,
                              std::string& why) const {
  public_key_bytes caller{};
  if (!check_fields(h, now_ns, why, caller)) return false;
  write_message(h, scratch);
  return true;
}

void verifier::write_message(const synapse& h, std::string& scratch) const {
  const terminal_info& d = h.dendrite;
  scratch.clear();
  scratch.reserve(number_buffer_size + d.hotkey->size() + my_hotkey_.size() + d.uuid->size() +
                  h.computed_body_hash.size() + 4);  // one allocation, not one per growth
  append_int(*d.nonce, scratch);
  scratch += '.';
  scratch += *d.hotkey;
  scratch += '.';
  scratch += my_hotkey_;
  scratch += '.';
  scratch += *d.uuid;
  scratch += '.';
  scratch += h.computed_body_hash;
}

bool verifier::check_fields(const synapse& h, std::int64_t now_ns, std::string& why,
                            public_key_bytes& caller) const {
  const terminal_info& d = h.dendrite;

  // Hotkey: Python's Keypair(ss58_address=...) messages; format 42 only (D25), so that deny
  // lists, nonce keys and the signed message all use one spelling per key.
  if (!d.hotkey || d.hotkey->empty()) {
    why = "No SS58 formatted address or public key provided.";
    return false;
  }
  std::error_code ec;
  const std::optional<ss58::decoded> decoded = decode_hotkey(*d.hotkey, ec);
  if (!decoded) {
    why = fmt::format("Invalid SS58 address: {}", ec.message());
    return false;
  }
  if (decoded->format != ss58::default_format) {
    why = fmt::format("Invalid SS58 address: format {} is not Bittensor's 42", decoded->format);
    return false;
  }

  // Nonce: freshness on every request, whatever the (unsigned) version header says (D2), and a
  // bound on the future (D3).
  if (!d.nonce) {
    why = "Missing Nonce";
    return false;
  }
  const std::int64_t nonce = *d.nonce;
  // Canonical forms (D29): the signed text is the nonce's canonical decimal (append_int below),
  // whatever spelling the header used ("+5", "05", " 5" all read as 5, as Python's int() reads
  // them), so a spelling never reaches the message; a minus sign would, and no honest nonce (ns
  // since the epoch) has one.
  if (nonce < 0) {
    why = fmt::format("Invalid nonce: {} is negative", nonce);
    return false;
  }
  double timeout_s = h.timeout.value_or(0.0);
  if (!std::isfinite(timeout_s) || timeout_s < 0) timeout_s = 0;
  const auto timeout_ns =
      static_cast<std::int64_t>(std::min(timeout_s * 1e9, static_cast<double>(timeout_cap_ns_)));
  const std::int64_t allowed = allowed_delta_ns + timeout_ns;
  if (nonce <= now_ns - allowed) {
    why = fmt::format(
        "Nonce is too old: acceptable delta is {:.2f} seconds but request was {:.2f} seconds old",
        static_cast<double>(allowed) / 1e9,
        (static_cast<double>(now_ns) - static_cast<double>(nonce)) / 1e9);
    return false;
  }
  if (nonce > now_ns + future_skew_ns_) {
    why = fmt::format(
        "Nonce is too far in the future: acceptable skew is {:.2f} seconds but request was {:.2f} "
        "seconds ahead",
        static_cast<double>(future_skew_ns_) / 1e9,
        (static_cast<double>(nonce) - static_cast<double>(now_ns)) / 1e9);
    return false;
  }

  if (!d.uuid || d.uuid->empty()) {
    why = "Missing UUID";
    return false;
  }
  // D29: every component of the signed message has one fixed, dot-free form, so the message
  // splits at its dots one way only and a signature over other text (an axon's signed answer,
  // whose fields an attacker chose) can never read as a request.
  if (!canonical_uuid(*d.uuid)) {
    why =
        "Invalid UUID: expected 36 characters of lower-case hex digits in the form "
        "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (str(uuid.uuid1()))";
    return false;
  }
  if (!canonical_body_hash(h.computed_body_hash)) {
    why = "Invalid computed_body_hash: expected 64 lower-case hex digits (SHA3-256)";
    return false;
  }
  caller = decoded->public_key;
  return true;
}

bool verifier::read_signature(const synapse& h, std::string& why,
                              std::array<std::uint8_t, 64>& sig) const {
  const terminal_info& d = h.dendrite;
  // Signature: required (D1), then btwallet's format errors, then the check itself.
  if (!d.signature || d.signature->empty()) {
    why = "Missing Signature";
    return false;
  }
  const std::string& sig_text = *d.signature;
  if (sig_text.size() < 2 || sig_text[0] != '0' || (sig_text[1] != 'x' && sig_text[1] != 'X')) {
    why = "Invalid signature format. Expected hex string.";
    return false;
  }
  const std::string_view hex = std::string_view(sig_text).substr(2);
  if (hex.size() % 2 != 0) {
    why = "Invalid hex string: Odd number of digits";
    return false;
  }
  // One pass checks every digit (btwallet's order: a bad digit anywhere is reported before a
  // wrong length) and decodes them: the signature is public, so no constant-time decoder
  // (bt::decode_hex's) is needed, and this one costs about 1,000 instructions (callgrind) instead
  // of about 6,300 with it.
  const bool right_size = hex.size() == 2 * sig.size();
  for (std::size_t i = 0; i < hex.size(); i += 2) {  // an even count, checked above
    const int high = detail::hex_values<>[static_cast<unsigned char>(hex[i])];
    const int low = detail::hex_values<>[static_cast<unsigned char>(hex[i + 1])];
    if ((high | low) < 0) {
      const std::size_t at = high < 0 ? i : i + 1;
      why = fmt::format("Invalid hex string: Invalid character '{}' at position {}", hex[at], at);
      return false;
    }
    if (right_size) sig[i / 2] = static_cast<std::uint8_t>(high << 4 | low);
  }
  if (!right_size) {
    why = "Invalid signature";
    return false;
  }
  return true;
}

std::string verifier::mismatch_reason(const synapse& h) const {
  std::string message;
  write_message(h, message);
  std::string why =
      fmt::format("Signature mismatch with {} and {}", message, *h.dendrite.signature);
  // Python's text above is kept as the prefix (clients match on it); a request signed for
  // another axon's hotkey (a validator that targeted the wrong entry) is told which one this
  // axon serves, since the signed text above names only ours.
  const std::string_view signed_for = h.axon.hotkey ? *h.axon.hotkey : std::string_view();
  if (signed_for != my_hotkey_)
    why += fmt::format(" (this axon serves hotkey {}; the request was signed for {})", my_hotkey_,
                       signed_for.empty() ? "no axon hotkey" : signed_for);
  return why;
}

}  // namespace bt::detail
