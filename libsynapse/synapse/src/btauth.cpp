// btauth/1 signing and verification (see btauth.hpp).
#include <bt/btauth.hpp>

#include <bt/detail/text.hpp>
#include <bt/hex.hpp>
#include <bt/sha256.hpp>
#include <bt/ss58.hpp>

#include <chrono>
#include <cstdio>
#include <span>

namespace bt::btauth {

namespace {

constexpr std::string_view prefix = "x-bittensor-";

constexpr std::array<std::string_view, header_fields::field_count> names{
    version_header, hotkey_header, nonce_header, signature_header, crypto_header, receiver_header};

/// The names folded once, for detail::iequals (which wants its second side in lower case).
constexpr std::array<std::string_view, header_fields::field_count> lower_names{
    "x-bittensor-version",   "x-bittensor-hotkey", "x-bittensor-nonce",
    "x-bittensor-signature", "x-bittensor-crypto", "x-bittensor-receiver"};

/// A refusal whose message is the class name, ": ", then the pieces.
template <class... Pieces>
result refuse(failure kind, const Pieces&... pieces) {
  std::string why(class_name(kind));
  why.append(": ");
  (why.append(pieces), ...);
  return refusal{kind, std::move(why)};
}

/// The nonce as signed: decimal digits without a sign, spaces or a leading zero (one spelling per
/// instant, since the text is what is signed), at most 19 digits so it fits an int64.
std::optional<std::int64_t> parse_nonce(std::string_view text) noexcept {
  if (text.empty() || text.size() > 19 || (text.size() > 1 && text.front() == '0'))
    return std::nullopt;
  std::uint64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<unsigned>(c - '0');  // 19 digits fit a uint64
  }
  if (n > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<std::int64_t>(n);
}

/// Nanoseconds as seconds with three decimals ("11.000").
std::string seconds(std::int64_t ns) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e9);
  return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

}  // namespace

std::string_view scheme_name(crypto_type scheme) noexcept {
  return scheme == crypto_type::ed25519 ? "ed25519" : "sr25519";
}

std::optional<crypto_type> parse_scheme(std::string_view name) noexcept {
  if (detail::iequals(name, "sr25519")) return crypto_type::sr25519;
  if (detail::iequals(name, "ed25519")) return crypto_type::ed25519;
  return std::nullopt;
}

void build_payload(std::string& out, crypto_type scheme, std::string_view method,
                   std::string_view target, std::string_view body_sha256_hex,
                   std::string_view nonce, std::string_view sender, std::string_view receiver) {
  const std::string_view name = scheme_name(scheme);
  if (receiver.empty()) receiver = "-";
  out.clear();
  out.reserve(protocol.size() + name.size() + method.size() + target.size() +
              body_sha256_hex.size() + nonce.size() + sender.size() + receiver.size() + 7);
  out.append(protocol).push_back('\n');
  out.append(name).push_back('\n');
  for (const char c : method) out.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c);
  out.push_back('\n');
  out.append(target).push_back('\n');
  out.append(body_sha256_hex).push_back('\n');
  out.append(nonce).push_back('\n');
  out.append(sender).push_back('\n');
  out.append(receiver);
}

std::string build_payload(crypto_type scheme, std::string_view method, std::string_view target,
                          std::string_view body_sha256_hex, std::int64_t nonce_ns,
                          std::string_view sender, std::string_view receiver) {
  std::string out;
  build_payload(out, scheme, method, target, body_sha256_hex, std::to_string(nonce_ns), sender,
                receiver);
  return out;
}

request_headers sign_request(const keypair& key, std::string_view method, std::string_view target,
                             std::string_view body, std::string_view receiver,
                             std::int64_t nonce_ns) {
  request_headers h;
  h.hotkey = key.ss58_address();
  h.nonce = std::to_string(nonce_ns);
  if (key.type() != crypto_type::sr25519) h.crypto = std::string(scheme_name(key.type()));
  h.receiver = std::string(receiver);
  std::string payload;
  build_payload(payload, key.type(), method, target, sha256_hex(body), h.nonce, h.hotkey, receiver);
  h.signature = "0x" + to_hex(key.sign(payload));
  return h;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string_view class_name(failure f) noexcept {
  switch (f) {
    case failure::malformed_auth:
      return "MalformedAuth";
    case failure::wrong_receiver:
      return "WrongReceiver";
    case failure::stale_request:
      return "StaleRequest";
    case failure::bad_signature:
      return "BadSignature";
    case failure::replayed_request:
      return "ReplayedRequest";
  }
  return "AuthError";
}

bool header_fields::is_btauth(std::string_view n) noexcept {
  return n.size() > prefix.size() && detail::istarts_with(n, prefix);
}

std::string_view header_fields::name(field f) noexcept {
  return names[f];
}

void header_fields::feed(std::string_view n, std::string_view v) {
  take(lower_names, n, v);
}

result check_head(const header_fields& h, std::int64_t now_ns, const policy& p, claim& out) {
  using f = header_fields::field;
  constexpr failure malformed = failure::malformed_auth;
  for (std::size_t i = 0; i < header_fields::field_count; ++i)
    if (h.count(f(i)) > 1) return refuse(malformed, "more than one ", names[i], " header");
  const auto missing = [](f which) {
    return refuse(malformed, "missing ", names[which], " header");
  };

  if (h.count(f::version_f) == 0) return missing(f::version_f);
  if (h.value(f::version_f) != version)
    return refuse(malformed, "X-Bittensor-Version must be 1, not ",
                  detail::quote_preview(h.value(f::version_f)));

  // The sender: a Bittensor (format 42) address, whose key verifies the signature.
  if (h.count(f::hotkey_f) == 0 || h.value(f::hotkey_f).empty()) return missing(f::hotkey_f);
  std::error_code ec;
  const auto who = ss58::decode(h.value(f::hotkey_f), ec);
  if (!who)
    return refuse(malformed, "X-Bittensor-Hotkey ", detail::quote_preview(h.value(f::hotkey_f)),
                  " is not an SS58 address: ", ec.message());
  if (who->format != ss58::default_format)
    return refuse(malformed, "X-Bittensor-Hotkey is of SS58 format ", std::to_string(who->format),
                  ", not Bittensor's 42");
  out.public_key = who->public_key;

  if (h.count(f::nonce_f) == 0) return missing(f::nonce_f);
  const auto nonce = parse_nonce(h.value(f::nonce_f));
  if (!nonce)
    return refuse(malformed,
                  "X-Bittensor-Nonce must be nanoseconds since the Unix epoch in decimal digits "
                  "without a sign or a leading zero, not ",
                  detail::quote_preview(h.value(f::nonce_f)));
  out.nonce_ns = *nonce;

  out.scheme = crypto_type::sr25519;
  if (h.count(f::crypto_f) != 0) {
    const auto scheme = parse_scheme(h.value(f::crypto_f));
    if (!scheme)
      return refuse(malformed, "X-Bittensor-Crypto must be sr25519 or ed25519, not ",
                    detail::quote_preview(h.value(f::crypto_f)));
    out.scheme = *scheme;
  }

  if (h.count(f::signature_f) == 0) return missing(f::signature_f);
  std::string_view sig = h.value(f::signature_f);
  if (sig.starts_with("0x") || sig.starts_with("0X")) sig.remove_prefix(2);
  if (sig.size() != 2 * out.signature.size() || !decode_hex(sig, out.signature))
    return refuse(malformed, "X-Bittensor-Signature must be 0x followed by 128 hex digits, not ",
                  detail::quote_preview(h.value(f::signature_f)));

  // The receiver: this verifier, so that a request signed for another is useless here.
  if (h.count(f::receiver_f) == 0) {
    if (p.require_receiver)
      return refuse(failure::wrong_receiver,
                    "the request is not bound to a receiver (no X-Bittensor-Receiver); this "
                    "server requires requests signed for its hotkey ",
                    p.self_hotkey);
  } else if (h.value(f::receiver_f) != p.self_hotkey) {
    return refuse(failure::wrong_receiver, "X-Bittensor-Receiver is ",
                  detail::quote_preview(h.value(f::receiver_f)), "; this server's hotkey is ",
                  p.self_hotkey);
  }

  // Freshness, in the nonce's own unit: a millisecond nonce reads as 1970 and is refused here.
  if (*nonce < now_ns - p.max_age_ns)
    return refuse(failure::stale_request, "X-Bittensor-Nonce is ", seconds(now_ns - *nonce),
                  " seconds old; this server accepts ", seconds(p.max_age_ns),
                  " seconds into the past");
  if (*nonce > now_ns + p.allowed_skew_ns)
    return refuse(failure::stale_request, "X-Bittensor-Nonce is ", seconds(*nonce - now_ns),
                  " seconds in the future; this server accepts ", seconds(p.allowed_skew_ns),
                  " seconds ahead");
  return {};
}

result check_signature(const header_fields& h, const claim& c, std::string_view method,
                       std::string_view target, std::string_view body, std::string& scratch) {
  using f = header_fields::field;
  const sha256_digest digest = sha256(body);
  char hex[2 * std::tuple_size_v<sha256_digest>];
  write_hex(digest, hex);
  build_payload(scratch, c.scheme, method, target, std::string_view(hex, sizeof hex),
                h.value(f::nonce_f), h.value(f::hotkey_f), h.value(f::receiver_f));
  const auto payload =
      std::span(reinterpret_cast<const std::uint8_t*>(scratch.data()), scratch.size());
  if (const std::error_code ec = verify_signature(c.scheme, c.public_key, payload, c.signature))
    return refuse(failure::bad_signature, "X-Bittensor-Signature does not verify as ",
                  scheme_name(c.scheme), " for X-Bittensor-Hotkey ", h.value(f::hotkey_f),
                  " over the payload of ", method, " ", detail::quote_preview(target), " (",
                  ec.message(), ")");
  return {};
}

std::string replay_key(std::int64_t nonce_ns) {
  std::string key = "btauth:";
  detail::append_int(nonce_ns, key);
  return key;
}

}  // namespace bt::btauth
