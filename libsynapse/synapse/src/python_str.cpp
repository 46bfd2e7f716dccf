// CPython str()/repr() of JSON-native values (PROTOCOL 3.3). The body hash is defined by these
// renderings, so every byte matters: float repr uses the shortest round-trip digits
// (std::to_chars) with CPython's positional/exponent thresholds (Python/pystrtod.c,
// format_float_short with repr mode 'r'), and string repr follows Objects/unicodeobject.c
// unicode_repr, with str.isprintable() from a generated table (python_printable_table.inc).
#include <bt/python_str.hpp>

#include "codec_detail.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>

namespace bt {
namespace {

struct cp_range {
  char32_t first, last;
};

// Code points for which str.isprintable() is False (Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs except
// U+0020), sorted and disjoint.
constexpr cp_range nonprintable_ranges[] = {
#include "python_printable_table.inc"
};

void append_hex_escape(char32_t cp, std::string& out) {
  int width;
  if (cp <= 0xFF) {
    out += "\\x";
    width = 2;
  } else if (cp <= 0xFFFF) {
    out += "\\u";
    width = 4;
  } else {
    out += "\\U";
    width = 8;
  }
  for (int shift = 4 * (width - 1); shift >= 0; shift -= 4)
    out += detail::hex_digit(static_cast<unsigned>(cp >> shift));
}

void append_bytes_repr(const json::binary_t& bytes, std::string& out) {
  // bytes objects never come from JSON; rendered as CPython would, for completeness.
  bool has_single = false, has_double = false;
  for (auto b : bytes) {
    has_single |= b == '\'';
    has_double |= b == '"';
  }
  const char quote = (has_single && !has_double) ? '"' : '\'';
  out += 'b';
  out += quote;
  for (auto b : bytes) {
    if (b == quote || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b == '\t') {
      out += "\\t";
    } else if (b == '\n') {
      out += "\\n";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b < 0x20 || b >= 0x7F) {
      append_hex_escape(b, out);
      // \xHH for bytes is always two digits, which append_hex_escape gives for b <= 0xFF.
    } else {
      out += static_cast<char>(b);
    }
  }
  out += quote;
}

}  // namespace

const char* const python_unicode_version = BT_PRINTABLE_UNICODE_VERSION;

bool python_isprintable(char32_t cp) noexcept {
  if (cp >= 0x20 && cp < 0x7F) return true;
  const auto* end = std::end(nonprintable_ranges);
  // First range whose last >= cp.
  const auto* it = std::lower_bound(std::begin(nonprintable_ranges), end, cp,
                                    [](const cp_range& r, char32_t c) { return r.last < c; });
  return it == end || cp < it->first;
}

namespace detail {

std::size_t format_python_float(double value, char* buf) noexcept {
  char* p = buf;
  if (std::isnan(value)) {
    std::memcpy(p, "nan", 3);
    return 3;
  }
  if (std::signbit(value)) {
    *p++ = '-';
    value = -value;
  }
  if (std::isinf(value)) {
    std::memcpy(p, "inf", 3);
    return static_cast<std::size_t>(p - buf) + 3;
  }
  if (value == 0.0) {
    std::memcpy(p, "0.0", 3);
    return static_cast<std::size_t>(p - buf) + 3;
  }
  // Shortest round-trip digits in scientific form: d[.ddd]e[+-]XX.
  char sci[32];
  auto r = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific);
  char digits[20];
  int n = 0;
  const char* q = sci;
  for (; q < r.ptr && *q != 'e'; ++q)
    if (*q != '.') digits[n++] = *q;
  int exp10 = 0;
  std::from_chars(q + 1 + (q[1] == '+' ? 1 : 0), r.ptr, exp10);
  const int decpt = exp10 + 1;  // value = 0.d1d2...dn * 10^decpt

  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      *p++ = '0';
      *p++ = '.';
      for (int i = 0; i < -decpt; ++i) *p++ = '0';
      std::memcpy(p, digits, static_cast<std::size_t>(n));
      p += n;
    } else if (decpt < n) {
      std::memcpy(p, digits, static_cast<std::size_t>(decpt));
      p += decpt;
      *p++ = '.';
      std::memcpy(p, digits + decpt, static_cast<std::size_t>(n - decpt));
      p += n - decpt;
    } else {
      std::memcpy(p, digits, static_cast<std::size_t>(n));
      p += n;
      for (int i = n; i < decpt; ++i) *p++ = '0';
      *p++ = '.';
      *p++ = '0';
    }
  } else {
    *p++ = digits[0];
    if (n > 1) {
      *p++ = '.';
      std::memcpy(p, digits + 1, static_cast<std::size_t>(n - 1));
      p += n - 1;
    }
    *p++ = 'e';
    int e = decpt - 1;
    *p++ = e < 0 ? '-' : '+';
    if (e < 0) e = -e;
    if (e < 10) *p++ = '0';
    p = std::to_chars(p, buf + number_buffer_size, e).ptr;
  }
  return static_cast<std::size_t>(p - buf);
}

}  // namespace detail

void append_python_float(double value, std::string& out) {
  char buf[detail::number_buffer_size];
  out.append(buf, detail::format_python_float(value, buf));
}

void append_python_text(std::string_view utf8, std::string& out) {
  if (detail::is_valid_utf8(utf8)) {
    out += utf8;
    return;
  }
  const char* p = utf8.data();
  const char* end = p + utf8.size();
  while (p < end) detail::append_utf8(detail::decode_utf8(p, end), out);
}

void append_python_repr(std::string_view utf8, std::string& out) {
  // Quote choice of unicode_repr: ' unless the text has ' and no ".
  const bool has_single = utf8.find('\'') != std::string_view::npos;
  const bool has_double = utf8.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  out += quote;
  const char* p = utf8.data();
  const char* end = p + utf8.size();
  while (p < end) {
    const char* start = p;
    const char32_t cp = detail::decode_utf8(p, end);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      append_hex_escape(cp, out);
    } else if (cp < 0x7F) {
      out += static_cast<char>(cp);
    } else if (python_isprintable(cp)) {
      if (cp == 0xFFFD && p - start == 1)
        detail::append_utf8(cp, out);  // a malformed byte, rendered as U+FFFD
      else
        out.append(start, p);
    } else {
      append_hex_escape(cp, out);
    }
  }
  out += quote;
}

void append_python_value_repr(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      out += "None";
      return;
    case json::value_t::boolean:
      out += value.get<bool>() ? "True" : "False";
      return;
    case json::value_t::number_integer:
      detail::append_int(value.get<std::int64_t>(), out);
      return;
    case json::value_t::number_unsigned:
      detail::append_int(value.get<std::uint64_t>(), out);
      return;
    case json::value_t::number_float:
      append_python_float(value.get<double>(), out);
      return;
    case json::value_t::string:
      append_python_repr(value.get_ref<const std::string&>(), out);
      return;
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : value) {
        if (!first) out += ", ";
        first = false;
        append_python_value_repr(e, out);
      }
      out += ']';
      return;
    }
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : value.items()) {
        if (!first) out += ", ";
        first = false;
        append_python_repr(k, out);
        out += ": ";
        append_python_value_repr(v, out);
      }
      out += '}';
      return;
    }
    case json::value_t::binary:
      append_bytes_repr(value.get_binary(), out);
      return;
  }
}

void append_python_str(const json& value, std::string& out) {
  if (value.is_string())
    append_python_text(value.get_ref<const std::string&>(), out);
  else
    append_python_value_repr(value, out);
}

std::string python_str(const json& value) {
  std::string out;
  append_python_str(value, out);
  return out;
}

}  // namespace bt
