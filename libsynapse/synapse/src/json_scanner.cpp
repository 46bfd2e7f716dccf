// The strict JSON scanner of json_scanner.hpp.
#include "json_scanner.hpp"

#include "codec_detail.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace bt::detail {
namespace {

/// Reads 4 hex digits at p (p + 4 <= end checked by the caller).
int hex4(const char* p) noexcept {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const int h = hex_value(p[i]);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

}  // namespace

std::optional<std::string_view> json_key_set::repeated() {
  if (keys_.size() <= small) return std::nullopt;  // checked key by key already
  std::sort(keys_.begin(), keys_.end());
  const auto it = std::adjacent_find(keys_.begin(), keys_.end());
  if (it == keys_.end()) return std::nullopt;
  return *it;
}

bool json_scanner::duplicate_key(std::string_view key) {
  return fail(codec_errc::invalid_json, "duplicate key " + preview(key));
}

bool json_scanner::syntax_error(std::string why) {
  if (!err_)
    err_ = make_error(codec_errc::invalid_json, std::string(what_),
                      "syntax error at byte " + std::to_string(offset()) + ": " + why);
  return false;
}

bool json_scanner::fail(codec_errc code, std::string detail) {
  if (!err_) err_ = make_error(code, std::string(what_), std::move(detail));
  return false;
}

bool json_scanner::expect_after_ws(char c) {
  skip_ws();
  if (consume(c)) return true;
  return syntax_error(at_end() ? std::string("unexpected end of input, expected '") + c + "'"
                               : std::string("expected '") + c + "'");
}

bool json_scanner::enter(std::size_t depth) {
  // The scanner recurses once per level, so the bound also bounds its stack use.
  const std::size_t limit = std::min<std::size_t>(max_depth_, 1024);
  if (depth < limit) return true;
  return fail(codec_errc::nesting_too_deep, "nesting deeper than " + std::to_string(limit));
}

bool json_scanner::literal(std::string_view word) {
  if (static_cast<std::size_t>(end_ - p_) >= word.size() &&
      std::string_view(p_, word.size()) == word) {
    p_ += word.size();
    return true;
  }
  return syntax_error("invalid literal");
}

bool json_scanner::scan_string_slow(std::string_view& raw, bool& escaped) {
  ++p_;  // opening quote
  const char* start = p_;
  escaped = false;
  while (true) {
    // Plain printable ASCII run.
    p_ += json_plain_prefix(p_, static_cast<std::size_t>(end_ - p_), false);
    if (p_ >= end_) return syntax_error("unterminated string");
    const auto u = static_cast<unsigned char>(*p_);
    if (u == '"') {
      raw = std::string_view(start, static_cast<std::size_t>(p_ - start));
      ++p_;
      return true;
    }
    if (u < 0x20) return syntax_error("control character in string");
    if (u >= 0x80) {
      const char* before = p_;
      const char32_t cp = decode_utf8(p_, end_);
      if (cp == 0xFFFD && p_ - before == 1) {
        p_ = before;
        return syntax_error("invalid UTF-8 in string");
      }
      continue;
    }
    // Escape.
    escaped = true;
    if (end_ - p_ < 2) return syntax_error("unterminated string");
    const char e = p_[1];
    if (e == 'u') {
      if (end_ - p_ < 6) return syntax_error("invalid \\u escape");
      const int v = hex4(p_ + 2);
      if (v < 0) return syntax_error("invalid \\u escape");
      p_ += 6;
      if (v >= 0xDC00 && v <= 0xDFFF) return syntax_error("lone surrogate in \\u escape");
      if (v >= 0xD800 && v <= 0xDBFF) {
        if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u')
          return syntax_error("lone surrogate in \\u escape");
        const int lo = hex4(p_ + 2);
        if (lo < 0xDC00 || lo > 0xDFFF) return syntax_error("lone surrogate in \\u escape");
        p_ += 6;
      }
      continue;
    }
    switch (e) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        p_ += 2;
        continue;
      default:
        return syntax_error("invalid escape in string");
    }
  }
}

bool json_scanner::decode_string(std::string_view raw, std::string& out) {
  out.clear();
  out.reserve(raw.size());
  std::size_t i = 0;
  while (i < raw.size()) {
    const std::size_t next = raw.find('\\', i);
    if (next == std::string_view::npos) {
      out.append(raw.substr(i));
      break;
    }
    out.append(raw.substr(i, next - i));
    const char e = raw[next + 1];
    i = next + 2;
    switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        // Validated by scan_string: 4 hex digits, surrogates paired.
        char32_t cp = static_cast<char32_t>(hex4(raw.data() + i));
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          const auto lo = static_cast<char32_t>(hex4(raw.data() + i + 2));
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        append_utf8(cp, out);
        break;
      }
      default:
        return syntax_error("invalid escape in string");
    }
  }
  return true;
}

bool json_scanner::decode_key(std::string_view& key) {
  if (!owned_keys_) owned_keys_.emplace();
  std::string& decoded = owned_keys_->emplace_back();
  if (!decode_string(key, decoded)) return false;
  key = decoded;
  return true;
}

bool json_scanner::next_is_short_integer() const noexcept {
  const char* q = p_;
  if (q < end_ && *q == '-') ++q;
  const char* digits = q;
  while (q < end_ && is_digit(*q) && q - digits < 19) ++q;
  const auto n = q - digits;
  if (n == 0 || n > 18) return false;
  return q == end_ || (*q != '.' && *q != 'e' && *q != 'E');
}

void json_number::to_json(json& out) const {
  switch (k) {
    case kind::unsigned_integer:
      out = u;
      return;
    case kind::negative_integer:
      out = i;
      return;
    case kind::real:
      out = d;
      return;
  }
}

bool json_scanner::parse_number(json_number& out) {
  const char* start = p_;
  const bool neg = consume('-');
  if (p_ >= end_ || !is_digit(*p_)) return syntax_error("invalid number");
  const char* const digits_begin = p_;
  std::uint64_t v = 0;  // the integer part, exact when it has at most 19 digits
  if (*p_ == '0') {
    ++p_;
    if (p_ < end_ && is_digit(*p_)) return syntax_error("invalid number (leading zero)");
  } else {
    // A local cursor: the loop then keeps it in a register instead of storing p_ each digit.
    const char* q = p_;
    for (; q < end_ && is_digit(*q); ++q) v = v * 10 + static_cast<unsigned>(*q - '0');
    p_ = q;
  }
  const auto digit_count = static_cast<std::size_t>(p_ - digits_begin);
  bool integer = true;
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ >= end_ || !is_digit(*p_)) return syntax_error("invalid number");
    while (p_ < end_ && is_digit(*p_)) ++p_;
    integer = false;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ >= end_ || !is_digit(*p_)) return syntax_error("invalid number");
    while (p_ < end_ && is_digit(*p_)) ++p_;
    integer = false;
  }
  const std::string_view text(start, static_cast<std::size_t>(p_ - start));
  if (integer) {
    bool overflow = false;
    if (digit_count > 19) {  // at most 19 digits are below 10^19 < 2^64: v is exact
      v = 0;
      for (char c : text.substr(neg ? 1 : 0)) {
        const unsigned d = static_cast<unsigned>(c - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
          overflow = true;
          break;
        }
        v = v * 10 + d;
      }
    }
    constexpr std::uint64_t neg_limit = std::uint64_t{1} << 63;
    if (overflow || (neg && v > neg_limit)) {
      // Python ints are unbounded; a nonce or any int must never be rounded (PROTOCOL 1.4), and
      // values beyond 64 bits are refused rather than approximated (D22).
      return fail(codec_errc::invalid_json, "integer literal beyond 64 bits: " + preview(text));
    }
    if (neg) {
      out.k = json_number::kind::negative_integer;
      out.i =
          v == neg_limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(v);
    } else {
      out.k = json_number::kind::unsigned_integer;
      out.u = v;
    }
    return true;
  }
  double d = 0;
  if (!decimal_to_double(text, d) || !std::isfinite(d)) {
    return fail(codec_errc::invalid_json, "number out of range: " + preview(text));
  }
  out.k = json_number::kind::real;
  out.d = d;
  return true;
}

bool json_scanner::parse_value(json& out, std::size_t depth) {
  return scan_value<true>(&out, depth);
}

bool json_scanner::skip_value(std::size_t depth) {
  return scan_value<false>(nullptr, depth);
}

// One grammar for both: Build writes the value into *out, !Build only validates it (out is null).
// Keys of skipped objects are decoded and checked too (D22): a value nobody reads here may still
// be read by the handler's or a peer's parser, which must see one meaning.
template <bool Build>
bool json_scanner::scan_value(json* out, std::size_t depth) {
  skip_ws();
  if (p_ >= end_) return syntax_error("unexpected end of input");
  switch (*p_) {
    case '{': {
      if (!enter(depth)) return false;
      ++p_;
      json::object_t* obj = nullptr;
      if constexpr (Build) {
        *out = json::object();
        obj = &out->get_ref<json::object_t&>();
      }
      const std::size_t mark = open_keys(depth);
      skip_ws();
      if (consume('}')) return true;
      while (true) {
        skip_ws();
        if (peek() != '"') return syntax_error("expected a string key");
        std::string_view key;
        if (!parse_key(key)) return false;
        if (!unique_key(depth, key)) return false;
        if (!expect(':')) return false;
        json* member = nullptr;
        if constexpr (Build) member = &obj->emplace_back(std::string(key), nullptr).second;
        if (!scan_value<Build>(member, depth + 1)) return false;
        skip_ws();
        if (consume(',')) continue;
        if (consume('}')) {
          if (!keys_unique(depth)) return false;
          close_keys(mark);
          return true;
        }
        return syntax_error("expected ',' or '}'");
      }
    }
    case '[': {
      if (!enter(depth)) return false;
      ++p_;
      json::array_t* arr = nullptr;
      if constexpr (Build) {
        *out = json::array();
        arr = &out->get_ref<json::array_t&>();
      }
      skip_ws();
      if (consume(']')) return true;
      while (true) {
        json* element = nullptr;
        if constexpr (Build) element = &arr->emplace_back();
        if (!scan_value<Build>(element, depth + 1)) return false;
        skip_ws();
        if (consume(',')) continue;
        if (consume(']')) return true;
        return syntax_error("expected ',' or ']'");
      }
    }
    case '"': {
      std::string_view raw;
      bool escaped = false;
      if (!scan_string(raw, escaped)) return false;
      if constexpr (Build) {
        *out = json::string_t();
        auto& s = out->get_ref<json::string_t&>();
        if (escaped) return decode_string(raw, s);
        s.assign(raw);
      }
      return true;
    }
    case 't':
      if (!literal("true")) return false;
      if constexpr (Build) *out = true;
      return true;
    case 'f':
      if (!literal("false")) return false;
      if constexpr (Build) *out = false;
      return true;
    case 'n':
      if (!literal("null")) return false;
      if constexpr (Build) *out = nullptr;
      return true;
    default:
      if (*p_ == '-' || is_digit(*p_)) {
        json_number n;
        if (!parse_number(n)) return false;
        if constexpr (Build) n.to_json(*out);
        return true;
      }
      return syntax_error("unexpected character");
  }
}

bool json_scanner::parse_document(json& out) {
  skip_ws();
  if (at_end()) return syntax_error("empty input");
  if (!parse_value(out, 0)) return false;
  skip_ws();
  if (!at_end()) return syntax_error("trailing characters after the JSON value");
  return true;
}

}  // namespace bt::detail
