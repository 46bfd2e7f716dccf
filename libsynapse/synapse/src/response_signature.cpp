// Authenticated responses (see response_signature.hpp).
#include <bt/response_signature.hpp>

#include <bt/hex.hpp>
#include <bt/sha256.hpp>
#include <bt/sr25519_key_cache.hpp>
#include <bt/ss58.hpp>

#include <array>

namespace bt::response_signature {

namespace {
constexpr std::string_view scheme = "v2.";
constexpr std::size_t max_nonce_digits = 20;  // any uint64 in decimal

bool is_nonce(std::string_view s) {
  if (s.empty() || s.size() > max_nonce_digits) return false;
  for (const char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace

std::string signed_message(std::string_view axon_nonce, std::string_view axon_hotkey,
                           std::string_view caller_hotkey, std::string_view request_id, int status,
                           const sha256_digest& body_hash) {
  constexpr std::string_view prefix = "bt-response-v2.";
  const std::string status_text = std::to_string(status);  // short: no allocation
  // Sized once: every signed answer builds one (an allocation per growth otherwise).
  std::string m;
  m.reserve(prefix.size() + axon_nonce.size() + axon_hotkey.size() + caller_hotkey.size() +
            request_id.size() + status_text.size() + 5 + 2 * body_hash.size());
  m.append(prefix).append(axon_nonce).append(1, '.').append(axon_hotkey).append(1, '.');
  m.append(caller_hotkey).append(1, '.').append(request_id).append(1, '.');
  m.append(status_text).append(1, '.');
  const std::size_t at = m.size();
  m.resize(at + 2 * body_hash.size());
  write_hex(body_hash, m.data() + at);
  return m;
}

std::string signed_message(std::string_view axon_nonce, std::string_view axon_hotkey,
                           std::string_view caller_hotkey, std::string_view request_id, int status,
                           std::string_view body) {
  return signed_message(axon_nonce, axon_hotkey, caller_hotkey, request_id, status, sha256(body));
}

std::string sign(const keypair& axon_key, std::string_view axon_nonce,
                 std::string_view caller_hotkey, std::string_view request_id, int status,
                 const sha256_digest& body_hash) {
  const auto sig = axon_key.sign(signed_message(axon_nonce, axon_key.ss58_address(), caller_hotkey,
                                                request_id, status, body_hash));
  std::string v;
  v.reserve(scheme.size() + axon_nonce.size() + 3 + 2 * sig.size());
  v.append(scheme).append(axon_nonce).append(".0x");
  const std::size_t at = v.size();
  v.resize(at + 2 * sig.size());
  write_hex(sig, v.data() + at);
  return v;
}

std::string sign(const keypair& axon_key, std::string_view axon_nonce,
                 std::string_view caller_hotkey, std::string_view request_id, int status,
                 std::string_view body) {
  return sign(axon_key, axon_nonce, caller_hotkey, request_id, status, sha256(body));
}

std::string verify(std::string_view header_value, std::string_view axon_hotkey,
                   std::string_view caller_hotkey, std::string_view request_id, int status,
                   const sha256_digest& body_hash, sr25519::key_cache* axon_keys) {
  if (header_value.starts_with("v1."))
    return "bt-response-signature v1 (a SHA3-256 body hash) is no longer accepted: the axon "
           "must sign v2";
  if (!header_value.starts_with(scheme))
    return "malformed bt-response-signature (expected 'v2.<nonce>.0x<signature>')";
  const std::string_view rest = header_value.substr(scheme.size());
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos)
    return "malformed bt-response-signature (expected 'v2.<nonce>.0x<signature>')";
  const std::string_view nonce = rest.substr(0, dot);
  if (!is_nonce(nonce)) return "malformed bt-response-signature nonce (1 to 20 decimal digits)";
  const std::string_view sig_text = rest.substr(dot + 1);
  std::array<std::uint8_t, 64> sig{};
  if (!sig_text.starts_with("0x") || !decode_hex(sig_text.substr(2), sig))
    return "malformed bt-response-signature signature (expected 0x and 128 hex digits)";
  std::error_code ec;
  const auto pub = ss58::decode(axon_hotkey, ec);
  if (!pub) return "the axon's hotkey '" + std::string(axon_hotkey) + "' is not SS58";
  const std::string m =
      signed_message(nonce, axon_hotkey, caller_hotkey, request_id, status, body_hash);
  const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(m.data()), m.size());
  const std::error_code bad =
      axon_keys != nullptr ? axon_keys->verify(pub->public_key, bytes, sig)
                           : verify_signature(crypto_type::sr25519, pub->public_key, bytes, sig);
  if (bad) return "signature mismatch with the axon's hotkey " + std::string(axon_hotkey);
  return {};
}

std::string verify(std::string_view header_value, std::string_view axon_hotkey,
                   std::string_view caller_hotkey, std::string_view request_id, int status,
                   std::string_view body, sr25519::key_cache* axon_keys) {
  return verify(header_value, axon_hotkey, caller_hotkey, request_id, status, sha256(body),
                axon_keys);
}

}  // namespace bt::response_signature
