// The header codec (PROTOCOL section 2): Synapse.to_headers() in Python's emission order, and a
// stricter from_headers(): names match case-insensitively by exact prefix, every value we
// interpret is parsed with CPython's int()/float() rules, and a malformed value is an error that
// names the header (never a crash, never a silent default).
#include <bt/header_codec.hpp>

#include <bt/body_hash.hpp>
#include <bt/python_str.hpp>

#include "codec_detail.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace bt {
namespace {

/// The header names of one TerminalInfo block: "bt_header_<side>_<field>", built once from the
/// field table.
using terminal_header_names =
    std::array<std::string, std::tuple_size_v<decltype(terminal_info_members)>>;

terminal_header_names make_terminal_header_names(std::string_view side) {
  terminal_header_names out;
  std::size_t i = 0;
  detail::for_each_member(terminal_info_members, [&](const auto& m) {
    out[i++] = "bt_header_" + std::string(side) + "_" + std::string(m.name);
  });
  return out;
}

constexpr std::string_view timeout_key = detail::member_name(synapse_members, &synapse::timeout);
constexpr std::string_view total_size_key =
    detail::member_name(synapse_members, &synapse::total_size);
constexpr std::string_view header_size_key =
    detail::member_name(synapse_members, &synapse::header_size);
constexpr std::string_view body_hash_key =
    detail::member_name(synapse_members, &synapse::computed_body_hash);
constexpr std::string_view axon_key = detail::member_name(synapse_members, &synapse::axon);
constexpr std::string_view dendrite_key = detail::member_name(synapse_members, &synapse::dendrite);

constexpr std::size_t max_name_bytes = 256;

class emitter {
 public:
  explicit emitter(header_sink& out) noexcept : out_(out) {}
  void add(std::string_view name, std::string_view value) {
    out_.add(name, value);
    bytes_ += name.size() + value.size() + 4;  // "name: value\r\n"
  }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  header_sink& out_;
  std::size_t bytes_ = 0;
};

void emit_value(emitter& e, std::string_view name, const std::optional<std::int64_t>& v,
                std::string&) {
  char buf[detail::number_buffer_size];
  if (v) e.add(name, detail::format_int(*v, buf));
}
void emit_value(emitter& e, std::string_view name, const std::optional<double>& v, std::string&) {
  char buf[detail::number_buffer_size];
  if (v) e.add(name, {buf, detail::format_python_float(*v, buf)});
}
void emit_value(emitter& e, std::string_view name, const std::optional<std::string>& v,
                std::string& scratch) {
  if (v) e.add(name, detail::sanitize_header_value(*v, scratch));
}

void emit_terminal(emitter& e, const terminal_header_names& names, const terminal_info& t,
                   std::string& scratch) {
  std::size_t i = 0;
  detail::for_each_member(terminal_info_members,
                          [&](const auto& m) { emit_value(e, names[i++], t.*m.ptr, scratch); });
}

bool is_ws(char c) noexcept {
  // Python's str.strip() whitespace within ASCII (int()/float() strip it).
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

std::string_view strip(std::string_view s) noexcept {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

/// Copies a digitpart (digit (['_'] digit)*) from s at i into out; false if malformed or empty.
bool take_digits(std::string_view s, std::size_t& i, std::string& out) {
  if (i >= s.size() || !is_digit(s[i])) return false;
  out += s[i++];
  while (i < s.size()) {
    if (is_digit(s[i])) {
      out += s[i++];
    } else if (s[i] == '_' && i + 1 < s.size() && is_digit(s[i + 1])) {
      out += s[i + 1];
      i += 2;
    } else {
      break;
    }
  }
  return true;
}

error header_error(codec_errc code, std::string_view name, std::string why) {
  std::string what = detail::to_lower(name.substr(0, 64));
  if (name.size() > 64) what += "...";
  return detail::make_error(code, std::move(what), std::move(why));
}

}  // namespace

namespace detail {

int_parse python_int(std::string_view text, std::int64_t& out) noexcept {
  std::string_view s = strip(text);
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || !is_digit(s[0])) return int_parse::syntax;
  const std::uint64_t limit =
      neg ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1
          : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t v = 0;
  bool range = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') {
      // A single underscore between two digits only.
      if (i + 1 >= s.size() || !is_digit(s[i + 1])) return int_parse::syntax;
      c = s[++i];
    } else if (!is_digit(c)) {
      return int_parse::syntax;
    }
    const unsigned d = static_cast<unsigned>(c - '0');
    if (v > (limit - d) / 10)
      range = true;  // keep scanning: syntax errors win
    else
      v = v * 10 + d;
  }
  if (range) return int_parse::range;
  out = neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  return int_parse::ok;
}

bool decimal_to_double(std::string_view text, double& out) noexcept {
  const char* first = text.data();
  const char* last = first + text.size();
  double v = 0;
  const auto r = std::from_chars(first, last, v);
  if (r.ptr != last) return false;
  if (r.ec == std::errc()) {
    out = v;
    return true;
  }
  if (r.ec != std::errc::result_out_of_range) return false;
  // from_chars leaves v unset on overflow and underflow. With D the digits (point removed),
  // int_digits of them before the point and k the index of the first non-zero one, the value
  // is about 0.D[k..] * 10^(int_digits - k + exp10); out-of-range means |exponent| > 300.
  const bool neg = *first == '-';
  const char* p = neg ? first + 1 : first;
  long long int_digits = 0, index = 0, k = -1;
  bool seen_point = false;
  for (; p < last && *p != 'e' && *p != 'E'; ++p) {
    if (*p == '.') {
      seen_point = true;
      continue;
    }
    if (k < 0 && *p != '0') k = index;
    ++index;
    if (!seen_point) ++int_digits;
  }
  const bool found = k >= 0;
  const long long lead = int_digits - k;
  long long exp10 = 0;
  if (p < last) {
    ++p;
    bool eneg = false;
    if (p < last && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    for (; p < last && exp10 < 100000; ++p) exp10 = exp10 * 10 + (*p - '0');
    if (eneg) exp10 = -exp10;
  }
  const bool overflow = found && lead + exp10 > 0;
  v = overflow ? std::numeric_limits<double>::infinity() : 0.0;
  out = neg ? -v : v;
  return true;
}

// Hand-written rather than sodium_base642bin, which accepts exactly the same inputs (a randomized
// comparison found no difference) but costs several times as much for the placeholders of a
// many-field request, a large share of from_headers' budget (docs/performance.md, "Codec"). On
// failure `out` may hold a partial prefix; the only caller discards it.
bool base64_decode(std::string_view text, std::string& out) {
  if (text.size() % 4 != 0) return false;
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;  // data after padding
      v[k] = val(c);
      if (v[k] < 0) return false;
    }
    // Unused bits of the last symbol must be zero (canonical encoding).
    if (pad == 2 && (v[1] & 0x0F) != 0) return false;
    if (pad == 1 && (v[2] & 0x03) != 0) return false;
    out += static_cast<char>((v[0] << 2) | (v[1] >> 4));
    if (pad < 2) out += static_cast<char>(((v[1] & 0x0F) << 4) | (v[2] >> 2));
    if (pad < 1) out += static_cast<char>(((v[2] & 0x03) << 6) | v[3]);
  }
  return true;
}

}  // namespace detail

bool parse_python_int(std::string_view text, std::int64_t& out) noexcept {
  return detail::python_int(text, out) == detail::int_parse::ok;
}

bool parse_python_float(std::string_view text, double& out) noexcept {
  std::string_view s = strip(text);
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (detail::iequals(s, "inf") || detail::iequals(s, "infinity")) {
    out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (detail::iequals(s, "nan")) {
    out =
        neg ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  try {
    // number := digitpart ['.' [digitpart]] | '.' digitpart, then [e [sign] digitpart];
    // underscores only between digits. The clean copy (no '_') goes to decimal_to_double.
    std::string clean;
    clean.reserve(s.size() + 1);
    if (neg) clean += '-';
    std::size_t i = 0;
    const bool int_part = take_digits(s, i, clean);
    bool frac_part = false;
    if (i < s.size() && s[i] == '.') {
      clean += '.';
      ++i;
      frac_part = take_digits(s, i, clean);
    }
    if (!int_part && !frac_part) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      clean += 'e';
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
      if (!take_digits(s, i, clean)) return false;
    }
    if (i != s.size()) return false;
    return detail::decimal_to_double(clean, out);
  } catch (...) {  // bad_alloc for an absurd value: not a number we can take
    return false;
  }
}

const std::string* header_list::find(std::string_view name) const {
  for (const auto& [n, v] : items)
    if (n == name) return &v;
  return nullptr;
}

void to_headers(const synapse_descriptor& d, const synapse& s, header_sink& out,
                const to_headers_options& opt) {
  emitter e(out);
  std::string scratch;
  char buf[detail::number_buffer_size];

  // Function-local: built on first use, whatever the order of static initialisation.
  static const terminal_header_names axon_names = make_terminal_header_names(axon_key);
  static const terminal_header_names dendrite_names = make_terminal_header_names(dendrite_key);

  // Python's to_headers order (PROTOCOL 2.1), not the declaration order of the base fields.
  e.add(synapse_name_key, d.name());
  // Python would send "None" for a None timeout, which no receiver parses; omit it instead
  // (a missing header is None on the receiving side, PROTOCOL 2.7).
  if (s.timeout) e.add(timeout_key, {buf, detail::format_python_float(*s.timeout, buf)});
  emit_terminal(e, axon_names, s.axon, scratch);
  emit_terminal(e, dendrite_names, s.dendrite, scratch);
  for (const auto& f : d.fields()) {
    if (!f.required() || f.ops->is_null(s, f)) continue;
    e.add(f.header_name, f.ops->placeholder(s, f));
  }
  const std::size_t header_size = e.bytes();
  e.add(header_size_key, detail::format_int(header_size, buf));
  e.add(total_size_key, detail::format_int(header_size + opt.body_bytes, buf));
  if (!opt.computed_body_hash.empty())
    e.add(body_hash_key, opt.computed_body_hash);
  else if (d.hash_fields().empty())
    e.add(body_hash_key, d.constant_body_hash());
  else
    e.add(body_hash_key, body_hash(d, s));
}

bool header_reader::feed(std::string_view name, std::string_view value) {
  if (err_) return false;
  auto fail = [&](codec_errc code, std::string why) {
    err_ = header_error(code, name, std::move(why));
    return false;
  };
  auto check_value = [&]() -> bool {
    if (value.size() <= max_value_bytes) return true;
    return fail(codec_errc::value_too_long, "value of " + std::to_string(value.size()) +
                                                " bytes exceeds " +
                                                std::to_string(max_value_bytes));
  };
  // Whether a text value is stored (header_scope): any text is valid, so one that is not
  // stored only has its length checked.
  bool keep_text = true;
  // One overload per member type of the field tables: Python int(), float(), or text.
  struct taker {
    header_reader& r;
    decltype(check_value)& check;
    decltype(fail)& failed;
    std::string_view value;
    const bool& keep_text;
    bool operator()(std::optional<std::int64_t>& dst) const {
      if (!check()) return false;
      std::int64_t v = 0;
      switch (detail::python_int(value, v)) {
        case detail::int_parse::ok:
          dst = v;
          return true;
        case detail::int_parse::range:
          return failed(codec_errc::invalid_integer,
                        "integer out of range: " + detail::preview(value));
        case detail::int_parse::syntax:
          break;
      }
      return failed(codec_errc::invalid_integer,
                    "not a Python int() literal: " + detail::preview(value));
    }
    bool operator()(std::optional<double>& dst) const {
      if (!check()) return false;
      double v = 0;
      if (!parse_python_float(value, v))
        return failed(codec_errc::invalid_float,
                      "not a Python float() literal: " + detail::preview(value));
      dst = v;
      return true;
    }
    // Text fields always hold valid UTF-8 (PROTOCOL 2.7): a malformed byte from the peer
    // becomes U+FFFD here, so no later consumer (a JSON writer, Python's str) can fail on it.
    // Valid text (every header a Python dendrite writes) is checked inline and copied as it is.
    static void take_malformed(std::string_view text, std::string& dst) {
      dst.clear();
      append_python_text(text, dst);
    }
    bool operator()(std::optional<std::string>& dst) const {
      if (!check()) return false;
      if (!keep_text) return true;
      if (detail::is_valid_utf8(value))
        dst.emplace(value);
      else
        take_malformed(value, dst.emplace());
      return true;
    }
    bool operator()(std::string& dst) const {  // computed_body_hash, the one plain string
      if (!check()) return false;
      r.saw_body_hash_ = true;
      if (!keep_text) return true;
      if (detail::is_valid_utf8(value))
        dst.assign(value);
      else
        take_malformed(value, dst);
      return true;
    }
    bool operator()(terminal_info&) const { return true; }  // only as bt_header_<side>_*
  };
  const taker take{*this, check_value, fail, value, keep_text};
  auto terminal = [&](terminal_info& t, std::string_view suffix) -> bool {
    bool ok = true;
    detail::find_member(
        terminal_info_members, [&](const auto& m) { return detail::iequals(suffix, m.name); },
        [&](const auto& m) { ok = take(t.*m.ptr); });
    return ok;  // unknown TerminalInfo keys are ignored, as pydantic does
  };

  try {
    constexpr std::string_view prefix = "bt_header_";
    if (detail::istarts_with(name, prefix)) {
      if (name.size() > max_name_bytes)
        return fail(codec_errc::value_too_long, "header name of " + std::to_string(name.size()) +
                                                    " bytes exceeds " +
                                                    std::to_string(max_name_bytes));
      const std::string_view rest = name.substr(prefix.size());
      // bt_header_axon_<field> and bt_header_dendrite_<field>
      for (terminal_info* side : {&target_.axon, &target_.dendrite}) {
        const std::string_view key = side == &target_.axon ? axon_key : dendrite_key;
        if (rest.size() > key.size() && rest[key.size()] == '_' &&
            detail::istarts_with(rest, key)) {
          keep_text = scope_ == header_scope::everything || side == &target_.axon;
          return terminal(*side, rest.substr(key.size() + 1));
        }
      }
      if (detail::istarts_with(rest, "input_obj_")) {
        // A placeholder (PROTOCOL 2.3): checked to be base64 of JSON, never taken as data.
        if (!check_value()) return false;
        for (auto known :
             {detail::placeholder_int, detail::placeholder_str, detail::placeholder_list,
              detail::placeholder_dict, detail::placeholder_float, detail::placeholder_bool})
          if (value == known) return true;
        std::string decoded;
        if (!detail::base64_decode(value, decoded))
          return fail(codec_errc::invalid_base64,
                      "not canonical base64: " + detail::preview(value));
        json ignored;
        if (auto err = detail::parse_json_text(decoded, ignored, 64, "placeholder"))
          return fail(err.code == make_error_code(codec_errc::nesting_too_deep)
                          ? codec_errc::nesting_too_deep
                          : codec_errc::invalid_json,
                      "placeholder is not JSON: " + err.detail);
        return true;
      }
      return true;
    }
    bool ok = true;
    keep_text = scope_ == header_scope::everything;
    if (detail::find_member(
            synapse_members, [&](const auto& m) { return detail::iequals(name, m.name); },
            [&](const auto& m) { ok = take(target_.*m.ptr); }))
      return ok;
    // "name" is not taken: the receiver's type decides it (Python overwrites it too).
    return true;
  } catch (const std::exception& e) {  // bad_alloc
    return fail(codec_errc::value_too_long, e.what());
  }
}

}  // namespace bt
