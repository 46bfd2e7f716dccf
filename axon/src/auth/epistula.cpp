#include "auth/epistula.hpp"

#include <bt/detail/text.hpp>
#include <bt/epistula.hpp>
#include <bt/hex.hpp>
#include <bt/sha256.hpp>
#include <bt/sr25519.hpp>
#include <bt/ss58.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <span>

namespace bt::detail {

namespace {

constexpr std::string_view prefix = "epistula-";

constexpr std::array<std::string_view, epistula_headers::field_count> names{
    epistula::version_header,   epistula::timestamp_header,  epistula::uuid_header,
    epistula::signed_by_header, epistula::signed_for_header, epistula::signature_header,
};

/// The names in lower case, for header_slots (detail::iequals wants its second side so).
constexpr std::array<std::string_view, epistula_headers::field_count> lower_names{
    "epistula-version",   "epistula-timestamp",  "epistula-uuid",
    "epistula-signed-by", "epistula-signed-for", "epistula-request-signature",
};

epistula_result malformed(std::string why) {
  return epistula_failure{true, std::move(why)};
}
epistula_result refused(std::string why) {
  return epistula_failure{false, std::move(why)};
}

/// uuid4 as Python's str(uuid.uuid4()) and JavaScript's crypto.randomUUID() write it:
/// xxxxxxxx-xxxx-4xxx-Yxxx-xxxxxxxxxxxx, lower-case hex, Y one of 8, 9, a, b.
bool canonical_uuid4(std::string_view u) noexcept {
  if (u.size() != 36 || u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-') return false;
  if (!is_lower_hex(u.substr(0, 8)) || !is_lower_hex(u.substr(9, 4)) ||
      !is_lower_hex(u.substr(14, 4)) || !is_lower_hex(u.substr(19, 4)) ||
      !is_lower_hex(u.substr(24, 12)))
    return false;
  return u[14] == '4' && (u[19] == '8' || u[19] == '9' || u[19] == 'a' || u[19] == 'b');
}

}  // namespace

bool epistula_headers::is_epistula(std::string_view n) noexcept {
  return n.size() > prefix.size() && istarts_with(n, prefix);
}

std::string_view epistula_headers::name(field f) noexcept {
  return names[f];
}

void epistula_headers::feed(std::string_view n, std::string_view v) {
  take(lower_names, n, v);
}

epistula_result check_epistula_head(const epistula_headers& h, std::int64_t now_ms,
                                    const epistula_policy& policy, epistula_claim& out) {
  using f = epistula_headers::field;
  for (std::size_t i = 0; i < epistula_headers::field_count; ++i)
    if (h.count(f(i)) > 1) return malformed(fmt::format("more than one {} header", names[i]));
  const auto missing = [](f which) {
    return malformed(fmt::format("missing {} header", names[which]));
  };

  // Version: the only one this axon speaks.
  if (h.count(f::version) == 0) return missing(f::version);
  if (h.value(f::version) != epistula::version)
    return malformed(
        fmt::format("Epistula-Version must be 2, not {}", quote_preview(h.value(f::version))));

  // Timestamp: milliseconds since the epoch, plain decimal digits (the text is signed as sent,
  // so one spelling per instant: no sign, point, exponent, spaces or leading zero; PROTOCOL
  // 12.2), then the window.
  if (h.count(f::timestamp) == 0) return missing(f::timestamp);
  const std::string& ts = h.value(f::timestamp);
  if (ts.empty() || ts.size() > 15 || (ts.size() > 1 && ts.front() == '0') ||
      !std::all_of(ts.begin(), ts.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return malformed(fmt::format(
        "Epistula-Timestamp must be milliseconds since the Unix epoch in decimal digits without "
        "a leading zero, not {}",
        quote_preview(ts)));
  std::int64_t t = 0;
  for (const char c : ts) t = t * 10 + (c - '0');  // at most 15 digits: no overflow
  if (t < now_ms - policy.past_ms)
    return refused(fmt::format(
        "Epistula-Timestamp is {:.3f} seconds old; this axon accepts {:.3f} seconds into the past",
        static_cast<double>(now_ms - t) / 1e3, static_cast<double>(policy.past_ms) / 1e3));
  if (t > now_ms + policy.future_ms)
    return refused(fmt::format(
        "Epistula-Timestamp is {:.3f} seconds in the future; this axon accepts {:.3f} seconds "
        "ahead",
        static_cast<double>(t - now_ms) / 1e3, static_cast<double>(policy.future_ms) / 1e3));
  out.timestamp_ms = t;

  // Signed-By: a Bittensor (format 42) address, whose key verifies the signature.
  if (h.count(f::signed_by) == 0) return missing(f::signed_by);
  std::error_code ec;
  const auto who = ss58::decode(h.value(f::signed_by), ec);
  if (!who)
    return malformed(fmt::format("Epistula-Signed-By {} is not an SS58 address: {}",
                                 quote_preview(h.value(f::signed_by)), ec.message()));
  if (who->format != ss58::default_format)
    return malformed(
        fmt::format("Epistula-Signed-By is of SS58 format {}, not Bittensor's 42", who->format));
  out.public_key = who->public_key;

  // Signed-For: this axon, so that a request signed for another miner is useless here.
  const std::string& target = h.value(f::signed_for);
  if (target.empty()) {
    if (policy.require_signed_for)
      return malformed(
          fmt::format("missing Epistula-Signed-For header: this axon requires requests signed "
                      "for its hotkey {}",
                      policy.my_hotkey));
  } else if (target != policy.my_hotkey) {
    return refused(fmt::format("Epistula-Signed-For is {}; this axon's hotkey is {}",
                               quote_preview(target), policy.my_hotkey));
  }

  if (h.count(f::uuid) == 0) return missing(f::uuid);
  if (!canonical_uuid4(h.value(f::uuid)))
    return malformed(fmt::format(
        "Epistula-Uuid must be a uuid4 in lower-case hex, xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx "
        "(y one of 8, 9, a, b), not {}",
        quote_preview(h.value(f::uuid))));

  // The signature's form, before the body is read for it.
  if (h.count(f::signature) == 0) return missing(f::signature);
  const std::string& sig = h.value(f::signature);
  if (sig.size() != 130 || sig[0] != '0' || sig[1] != 'x' ||
      !decode_hex(std::string_view(sig).substr(2), out.signature))
    return malformed(
        fmt::format("Epistula-Request-Signature must be 0x followed by 128 hex digits, not {}",
                    quote_preview(sig)));
  return {};
}

epistula_result check_epistula_signature(const epistula_headers& h, const epistula_claim& claim,
                                         std::string_view body, std::string& scratch) {
  using f = epistula_headers::field;
  scratch = epistula::signed_message(sha256_hex(body), h.value(f::uuid), h.value(f::timestamp),
                                     h.value(f::signed_for));
  const auto text =
      std::span(reinterpret_cast<const std::uint8_t*>(scratch.data()), scratch.size());
  if (const std::error_code ec = sr25519::verify(claim.public_key, text, claim.signature))
    return refused(fmt::format(
        "Epistula-Request-Signature does not verify for Epistula-Signed-By {} over \"{}\" ({})",
        h.value(f::signed_by), scratch, ec.message()));
  return {};
}

std::string epistula_replay_key(std::string_view uuid) {
  std::string key = "epistula:";
  key.append(uuid);
  return key;
}

}  // namespace bt::detail
