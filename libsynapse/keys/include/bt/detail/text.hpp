// Small text helpers written once and shared by libsynapse, the axon and the dendrite: integer
// formatting, ASCII case folding, HTTP whitespace trimming, hex digits and quoting a peer's value.
// Internal (namespace bt::detail): no stability promise to users.
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace bt::detail {

/// Buffer size sufficient for any 64-bit integer in decimal (and for format_python_float).
inline constexpr std::size_t number_buffer_size = 32;

/// Writes `value` in canonical decimal (std::to_chars: no '+', no leading zeros) into `buf`
/// (number_buffer_size bytes) and returns the text.
template <class Int>
inline std::string_view format_int(Int value, char* buf) noexcept {
  auto r = std::to_chars(buf, buf + number_buffer_size, value);
  return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

/// Appends `value` in canonical decimal to `out`.
template <class Int>
inline void append_int(Int value, std::string& out) {
  char buf[number_buffer_size];
  out += format_int(value, buf);
}

inline constexpr char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
}

/// Case-insensitive (ASCII) equality; `lower` must already be lower case (every caller passes
/// a literal or a declared name, so only one side is folded).
inline constexpr bool iequals(std::string_view text, std::string_view lower) noexcept {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (ascii_lower(text[i]) != lower[i]) return false;
  return true;
}

inline constexpr bool istarts_with(std::string_view text, std::string_view lower_prefix) noexcept {
  return text.size() >= lower_prefix.size() &&
         iequals(text.substr(0, lower_prefix.size()), lower_prefix);
}

inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

/// `value` without leading and trailing spaces and tabs (HTTP optional whitespace, RFC 9110
/// 5.6.3).
inline constexpr std::string_view trim_ows(std::string_view value) noexcept {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return value;
}

/// The lower-case hex digit of `v & 0xF`.
inline constexpr char hex_digit(unsigned v) noexcept {
  return "0123456789abcdef"[v & 0xF];
}

/// The value of one hex digit (either case), or -1.
inline constexpr int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// hex_value() of every byte, for decoders of public text (signatures, session ids, MACs) that
/// look each digit up instead of branching on its class: random hex mispredicts such a branch
/// about half the time. `lower_only`: upper-case digits are -1 too.
template <bool lower_only = false>
inline constexpr std::array<std::int8_t, 256> hex_values = [] {
  std::array<std::int8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const bool upper = c >= 'A' && c <= 'F';
    t[static_cast<std::size_t>(c)] =
        static_cast<std::int8_t>(lower_only && upper ? -1 : hex_value(static_cast<char>(c)));
  }
  return t;
}();

/// A peer's value quoted for a message: its first `most` bytes between double quotes, "..." after
/// a cut, so that an answer stays small whatever a header held (the JSON writer replaces invalid
/// UTF-8).
inline std::string quote_preview(std::string_view value, std::size_t most = 80) {
  std::string out = "\"";
  out.append(value.substr(0, most));
  if (value.size() > most) out.append("...");
  out.push_back('"');
  return out;
}

/// True when `text` is only lower-case hex digits (the canonical form of digests and uuids).
inline constexpr bool is_lower_hex(std::string_view text) noexcept {
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace bt::detail
