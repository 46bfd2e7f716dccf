// Private helpers shared by the codec sources (python_str, json_body, header_codec, ...).
// Not installed; nothing here is part of the public interface.
#pragma once

#include <bt/codec_error.hpp>
#include <bt/detail/text.hpp>  // append_int, iequals, hex digits, number_buffer_size
#include <bt/json.hpp>
#include <bt/synapse.hpp>  // bt::detail::json_type_name, placeholders

#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>
#include <vector>

namespace bt::detail {

/// Decodes one UTF-8 code point at `p` (p < end) and advances `p`. Malformed input (overlong,
/// surrogates, truncated or stray bytes, > U+10FFFF) yields U+FFFD and consumes one byte, so
/// every consumer renders broken text the same way (Python strings are always valid Unicode).
inline char32_t decode_utf8(const char*& p, const char* end) noexcept {
  const auto b0 = static_cast<unsigned char>(*p);
  if (b0 < 0x80) {
    ++p;
    return b0;
  }
  auto cont = [&](std::ptrdiff_t i) -> int {
    if (end - p <= i) return -1;
    const auto b = static_cast<unsigned char>(p[i]);
    return (b & 0xC0) == 0x80 ? (b & 0x3F) : -1;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    const int c1 = cont(1);
    if (c1 >= 0) {
      p += 2;
      return static_cast<char32_t>(((b0 & 0x1F) << 6) | c1);
    }
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    const int c1 = cont(1), c2 = cont(2);
    if (c1 >= 0 && c2 >= 0) {
      const char32_t cp = static_cast<char32_t>(((b0 & 0x0F) << 12) | (c1 << 6) | c2);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) {
        p += 3;
        return cp;
      }
    }
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    const int c1 = cont(1), c2 = cont(2), c3 = cont(3);
    if (c1 >= 0 && c2 >= 0 && c3 >= 0) {
      const char32_t cp = static_cast<char32_t>(((b0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3);
      if (cp >= 0x10000 && cp <= 0x10FFFF) {
        p += 4;
        return cp;
      }
    }
  }
  ++p;
  return 0xFFFD;
}

inline void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// The length of the longest prefix of [p, p + n) that a JSON string holds as it is: bytes 0x20
/// to 0x7F except '"' and '\\', and except DEL (0x7F) too when `no_del`. 16 bytes per step with
/// SSE2, the first other byte found by its bit in the step's mask (most strings of a body are
/// short keys and values that end within the first step); else 8 bytes per step (a large text
/// field is one long such run), then byte by byte from the word that has another.
inline std::size_t json_plain_prefix(const char* p, std::size_t n, bool no_del) noexcept {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7F);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    // As signed bytes, those below 0x20 and those from 0x80 up are both below 0x20.
    __m128i special =
        _mm_or_si128(_mm_cmplt_epi8(v, space),
                     _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (no_del) special = _mm_or_si128(special, _mm_cmpeq_epi8(v, del));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return i + static_cast<std::size_t>(std::countr_zero(mask));
  }
#endif
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  const auto has_zero_byte = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    std::uint64_t special = w & highs;          // some byte >= 0x80
    special |= (w - ones * 0x20) & ~w & highs;  // some byte < 0x20
    special |= has_zero_byte(w ^ (ones * '"')) | has_zero_byte(w ^ (ones * '\\'));
    if (no_del) special |= has_zero_byte(w ^ (ones * 0x7F));
    if (special != 0) break;
  }
  for (; i < n; ++i) {
    const auto u = static_cast<unsigned char>(p[i]);
    if (u < 0x20 || u >= 0x80 || u == '"' || u == '\\' || (no_del && u == 0x7F)) break;
  }
  return i;
}

/// The length of the longest ASCII (< 0x80) prefix of [p, p + n); 8 bytes per step.
inline std::size_t ascii_prefix(const char* p, std::size_t n) noexcept {
  constexpr std::uint64_t highs = 0x8080808080808080ULL;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if ((w & highs) != 0) break;
  }
  while (i < n && static_cast<unsigned char>(p[i]) < 0x80) ++i;
  return i;
}

/// True when every byte is ASCII (< 0x80): the blocks ORed together with no exit inside the loop,
/// the last block read overlapping the one before it (16 bytes with SSE2, else 8). A synapse
/// request's text headers (about 400 bytes: uuids, hotkeys, the signature) are ASCII, and a check
/// that stops at the first high byte cost them several hundred instructions.
inline bool is_ascii(std::string_view s) noexcept {
  const char* p = s.data();
  const std::size_t n = s.size();
#if defined(__SSE2__)
  if (n >= 16) {
    const auto load = [p](std::size_t i) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    };
    __m128i seen = load(n - 16);
    for (std::size_t i = 0; i + 16 < n; i += 16) seen = _mm_or_si128(seen, load(i));
    return _mm_movemask_epi8(seen) == 0;
  }
#endif
  if (n >= 8) {
    std::uint64_t seen, w;
    std::memcpy(&seen, p + n - 8, 8);
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, p + i, 8);
      seen |= w;
    }
    return (seen & 0x8080808080808080ULL) == 0;
  }
  unsigned seen = 0;
  for (std::size_t i = 0; i < n; ++i) seen |= static_cast<unsigned char>(p[i]);
  return seen < 0x80;
}

/// True when the text is valid UTF-8 (then it can be copied verbatim).
inline bool is_valid_utf8(std::string_view s) noexcept {
  if (is_ascii(s)) return true;
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    if (static_cast<unsigned char>(*p) < 0x80) {
      p += ascii_prefix(p, static_cast<std::size_t>(end - p));
      continue;
    }
    const char* before = p;
    if (decode_utf8(p, end) == 0xFFFD && p - before == 1) {
      // A real U+FFFD is 3 bytes; a one-byte step means a malformed sequence.
      return false;
    }
  }
  return true;
}

/// Writes repr(double) into buf (number_buffer_size bytes); returns the length.
std::size_t format_python_float(double value, char* buf) noexcept;

/// The header-safe copy of a value (PROTOCOL 2.8): each control character (< U+0020, U+007F)
/// becomes ' ' and each non-ASCII code point (or malformed byte) becomes '?'. Returns `text`
/// itself when it is already printable ASCII (the common case, no copy), else `scratch`.
/// True when every byte is printable ASCII (0x20..0x7E); 8 bytes per step.
inline bool is_printable_ascii(std::string_view text) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  const char* p = text.data();
  std::size_t n = text.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    const std::uint64_t below_space = (w - ones * 0x20) & ~w & highs;  // some byte < 0x20
    const std::uint64_t del_or_high = ((w + ones) | w) & highs;        // some byte >= 0x7F
    if ((below_space | del_or_high) != 0) return false;
  }
  for (; n > 0; ++p, --n) {
    const auto u = static_cast<unsigned char>(*p);
    if (u < 0x20 || u >= 0x7F) return false;
  }
  return true;
}

inline std::string_view sanitize_header_value(std::string_view text, std::string& scratch) {
  if (is_printable_ascii(text)) return text;
  scratch.clear();
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const char32_t cp = decode_utf8(p, end);
    if (cp < 0x20 || cp == 0x7F)
      scratch += ' ';
    else if (cp > 0x7F)
      scratch += '?';
    else
      scratch += static_cast<char>(cp);
  }
  return scratch;
}

/// A short quotation of untrusted text for error details: its first `max` characters (code
/// points, so a character is never cut), control characters as spaces, malformed UTF-8 as
/// U+FFFD, every other character as it is ('Résumé', not 'R?sum?'). The details reach JSON
/// bodies and logs, which are UTF-8; a header value is made ASCII by the header writer.
inline std::string preview(std::string_view text, std::size_t max = 40) {
  std::string out = "'";
  const char* p = text.data();
  const char* const end = p + text.size();
  for (std::size_t n = 0; p < end && n < max; ++n) {
    const char32_t cp = decode_utf8(p, end);
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
      out += ' ';
    else
      append_utf8(cp, out);
  }
  out += p < end ? "'..." : "'";
  return out;
}

inline error make_error(codec_errc code, std::string what, std::string detail) {
  return error{make_error_code(code), std::move(what), std::move(detail)};
}

/// Strict standard base64 (RFC 4648 section 4, padding required, no whitespace, unused bits
/// zero). Appends the decoded bytes to `out`; false on any deviation.
bool base64_decode(std::string_view text, std::string& out);

/// Parses untrusted JSON text (see bt::parse_json). Defined in json_body.cpp.
error parse_json_text(std::string_view text, json& out, std::size_t max_depth,
                      std::string_view what);

/// Converts a decimal literal ([-]digits[.digits][(e|E)[+-]digits], already validated, no '_')
/// with correct rounding; overflow gives +-inf and underflow +-0.0, as CPython's float() does.
/// False only if `text` is not such a literal.
bool decimal_to_double(std::string_view text, double& out) noexcept;

/// Python int() of text with the failure reason (syntax vs. out of int64 range).
enum class int_parse { ok, syntax, range };
int_parse python_int(std::string_view text, std::int64_t& out) noexcept;

/// The CPython casts of PROTOCOL 1.1 (cast_int / cast_float) applied to a JSON value, as
/// pydantic applies them to TerminalInfo and base Synapse fields. `where` names the value in
/// errors ("body.timeout"). Integers: JSON integers, integral floats and int() strings;
/// floats: JSON numbers and float() strings. Booleans are rejected (stricter than int(True)).
error cast_int(const json& v, std::int64_t& out, std::string_view where);
error cast_float(const json& v, double& out, std::string_view where);

/// Checks a synapse type declaration: the name and every field name are ASCII identifiers of
/// at most 128 characters, field names are unique and not base-field names, and every hash
/// field names a field. Used by the descriptor constructor and make_dynamic_descriptor.
error check_schema(std::string_view name, const std::vector<std::string_view>& field_names,
                   const std::vector<std::string_view>& hash_fields);

}  // namespace bt::detail
