#include <bt/secret_uri.hpp>

#include <sodium.h>

#include <algorithm>
#include <system_error>

namespace bt {
namespace {

bool is_phrase_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ';
}

// Rust's str::parse::<u64>: an optional '+', then at least one decimal digit, no overflow.
std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

error uri_error(std::string detail) {
  return {make_error_code(key_errc::invalid_uri), "secret URI", std::move(detail)};
}

}  // namespace

namespace detail {

void scale_compact(std::uint64_t n, std::vector<std::uint8_t>& out) {
  if (n < (1u << 6)) {
    out.push_back(static_cast<std::uint8_t>(n << 2));
  } else if (n < (1u << 14)) {
    const auto v = static_cast<std::uint16_t>(n << 2 | 0b01);
    out.push_back(static_cast<std::uint8_t>(v));
    out.push_back(static_cast<std::uint8_t>(v >> 8));
  } else if (n < (1u << 30)) {
    const auto v = static_cast<std::uint32_t>(n << 2 | 0b10);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  } else {
    // Big-integer mode: the low two bits 0b11, the upper six the byte count minus 4.
    int bytes = 0;
    for (std::uint64_t t = n; t; t >>= 8) ++bytes;
    out.push_back(static_cast<std::uint8_t>((bytes - 4) << 2 | 0b11));
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  }
}

}  // namespace detail

derive_junction derive_junction::from_text(std::string_view text, bool hard) {
  derive_junction j;
  j.hard = hard;
  std::vector<std::uint8_t> encoded;
  if (const auto n = parse_u64(text)) {
    for (int i = 0; i < 8; ++i) encoded.push_back(static_cast<std::uint8_t>(*n >> (8 * i)));
  } else {
    detail::scale_compact(text.size(), encoded);
    encoded.insert(encoded.end(), text.begin(), text.end());
  }
  if (encoded.size() > j.chain_code.size()) {
    crypto_generichash(j.chain_code.data(), j.chain_code.size(), encoded.data(), encoded.size(),
                       nullptr, 0);
  } else {
    std::copy(encoded.begin(), encoded.end(), j.chain_code.begin());
  }
  sodium_memzero(encoded.data(), encoded.size());
  return j;
}

secret_uri::~secret_uri() {
  sodium_memzero(phrase.data(), phrase.size());
  if (password) sodium_memzero(password->data(), password->size());
}

std::optional<secret_uri> parse_secret_uri(std::string_view uri, error& err) {
  err = {};
  secret_uri out;
  // The phrase group [a-zA-Z0-9 ]+ is greedy, and a shorter phrase can never let the rest match
  // (the next character would again be a phrase character, which no later group accepts).
  std::size_t p = 0;
  while (p < uri.size() && is_phrase_char(uri[p])) ++p;
  if (p > 0) {
    out.phrase.assign(uri.substr(0, p));
  } else {
    out.phrase.assign(dev_phrase);
    out.phrase_is_dev = true;
  }
  // Path elements "/x" and "//x" (x without '/'), then optionally "///" + password. Each element
  // is determined by the characters at its start, so the regex has a single way to match.
  while (p < uri.size()) {
    if (uri[p] != '/') {
      err = uri_error("unexpected character at offset " + std::to_string(p) +
                      " (a phrase may hold only ASCII letters, digits and spaces)");
      return std::nullopt;
    }
    const std::size_t slashes = std::min<std::size_t>(uri.size() - p, 3);
    const bool hard = slashes >= 2 && uri[p + 1] == '/';
    const std::size_t start = p + (hard ? 2 : 1);
    if (start < uri.size() && uri[start] != '/') {
      const std::size_t end = std::min(uri.find('/', start), uri.size());
      out.junctions.push_back(derive_junction::from_text(uri.substr(start, end - start), hard));
      p = end;
      continue;
    }
    if (uri.substr(p, 3) == "///") {
      const std::string_view pw = uri.substr(p + 3);
      // The regex's '.' does not match a newline.
      if (pw.find('\n') != std::string_view::npos) {
        err = uri_error("the password after \"///\" contains a line break");
        return std::nullopt;
      }
      out.password.emplace(pw);
      return out;
    }
    err = uri_error("empty junction at offset " + std::to_string(p));
    return std::nullopt;
  }
  return out;
}

secret_uri parse_secret_uri(std::string_view uri) {
  error err;
  auto parsed = parse_secret_uri(uri, err);
  if (!parsed) throw std::system_error(err.code, err.message());
  return std::move(*parsed);
}

std::array<std::uint8_t, 32> ed25519_derive_hard(const std::array<std::uint8_t, 32>& seed,
                                                 const std::array<std::uint8_t, 32>& chain_code) {
  // SCALE of the tuple (&str, [u8; 32], [u8; 32]): compact length + text, then the two arrays raw.
  static constexpr std::string_view label = "Ed25519HDKD";
  std::array<std::uint8_t, 1 + label.size() + 64> buf{};
  buf[0] = static_cast<std::uint8_t>(label.size() << 2);
  std::copy(label.begin(), label.end(), buf.begin() + 1);
  std::copy(seed.begin(), seed.end(), buf.begin() + 1 + label.size());
  std::copy(chain_code.begin(), chain_code.end(), buf.begin() + 1 + label.size() + 32);
  std::array<std::uint8_t, 32> out{};
  crypto_generichash(out.data(), out.size(), buf.data(), buf.size(), nullptr, 0);
  sodium_memzero(buf.data(), buf.size());
  return out;
}

}  // namespace bt
