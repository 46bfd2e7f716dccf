// JSON bodies (PROTOCOL 1.4): the model_dump() form of a synapse, written byte-for-byte as
// Python's json.dumps defaults (requests) or Starlette's compact UTF-8 (responses), and a
// bounded, exception-free, one-pass reader for untrusted bodies (json_scanner.hpp).
#include <bt/json_body.hpp>

#include <bt/header_codec.hpp>

#include "codec_detail.hpp"
#include "json_scanner.hpp"
#include "name_index.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace bt {
namespace {

// ---------------------------------------------------------------------------------------------
// Writer

class writer {
 public:
  writer(std::string& out, json_style style) noexcept
      : out_(out),
        ascii_(style == json_style::python_dumps),
        item_sep_(ascii_ ? ", " : ","),
        key_sep_(ascii_ ? ": " : ":") {}

  void begin_object() { out_ += '{'; }
  void end_object() { out_ += '}'; }
  /// Writes the separator (unless first) and "key": .
  void key(std::string_view k, bool first) {
    if (!first) out_ += item_sep_;
    string(k);
    out_ += key_sep_;
  }

  void null() { out_ += "null"; }
  void boolean(bool b) { out_ += b ? "true" : "false"; }
  template <class Int>
  void integer(Int v) {
    detail::append_int(v, out_);
  }
  void number(double v) {
    // json.dumps writes float.__repr__; non-finite floats are never sent (PROTOCOL 3.5, D22):
    // null is what pydantic's JSON mode gives them.
    if (std::isfinite(v))
      append_python_float(v, out_);
    else
      null();
  }

  void string(std::string_view s) {
    out_ += '"';
    // Fast path: the longest prefix written verbatim: printable ASCII except '"' and '\\' (DEL
    // only in compact UTF-8: ensure_ascii escapes it, as json.dumps does); bytes >= 0x80 are
    // copied as UTF-8 after validation by the slow path.
    const std::size_t i = detail::json_plain_prefix(s.data(), s.size(), ascii_);
    out_.append(s.data(), i);
    if (i < s.size()) escape(s.substr(i));
    out_ += '"';
  }

  void value(const json& v) {
    switch (v.type()) {
      case json::value_t::null:
      case json::value_t::discarded:
        null();
        return;
      case json::value_t::boolean:
        boolean(v.get<bool>());
        return;
      case json::value_t::number_integer:
        integer(v.get<std::int64_t>());
        return;
      case json::value_t::number_unsigned:
        integer(v.get<std::uint64_t>());
        return;
      case json::value_t::number_float:
        number(v.get<double>());
        return;
      case json::value_t::string:
        string(v.get_ref<const std::string&>());
        return;
      case json::value_t::array: {
        out_ += '[';
        bool first = true;
        for (const auto& e : v) {
          if (!first) out_ += item_sep_;
          first = false;
          value(e);
        }
        out_ += ']';
        return;
      }
      case json::value_t::object: {
        out_ += '{';
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
          key(it.key(), first);
          first = false;
          value(it.value());
        }
        out_ += '}';
        return;
      }
      case json::value_t::binary: {  // never produced by JSON; a list of byte values
        out_ += '[';
        bool first = true;
        for (auto b : v.get_binary()) {
          if (!first) out_ += item_sep_;
          first = false;
          integer(static_cast<unsigned>(b));
        }
        out_ += ']';
        return;
      }
    }
  }

  // One overload per member type of the field tables (None is null).
  void put(const std::optional<std::int64_t>& v) {
    if (v)
      integer(*v);
    else
      null();
  }
  void put(const std::optional<double>& v) {
    if (v)
      number(*v);
    else
      null();
  }
  void put(const std::optional<std::string>& v) {
    if (v)
      string(*v);
    else
      null();
  }
  void put(const std::string& v) { string(v); }
  void put(const terminal_info& t) {
    out_ += '{';
    bool first = true;
    detail::for_each_member(terminal_info_members, [&](const auto& m) {
      key(m.name, first);
      first = false;
      put(t.*m.ptr);
    });
    out_ += '}';
  }

 private:
  void u_escape(unsigned cp) {
    char buf[6] = {'\\',
                   'u',
                   detail::hex_digit(cp >> 12),
                   detail::hex_digit(cp >> 8),
                   detail::hex_digit(cp >> 4),
                   detail::hex_digit(cp)};
    out_.append(buf, 6);
  }

  void escape(std::string_view s) {
    const char* p = s.data();
    const char* end = p + s.size();
    while (p < end) {
      const auto u = static_cast<unsigned char>(*p);
      if (u < 0x80) {
        ++p;
        switch (u) {
          case '"':
            out_ += "\\\"";
            break;
          case '\\':
            out_ += "\\\\";
            break;
          case '\n':
            out_ += "\\n";
            break;
          case '\r':
            out_ += "\\r";
            break;
          case '\t':
            out_ += "\\t";
            break;
          case '\b':
            out_ += "\\b";
            break;
          case '\f':
            out_ += "\\f";
            break;
          default:
            if (u < 0x20 || (ascii_ && u == 0x7F))
              u_escape(u);
            else
              out_ += static_cast<char>(u);
        }
        continue;
      }
      const char* start = p;
      const char32_t cp = detail::decode_utf8(p, end);
      const bool malformed = cp == 0xFFFD && p - start == 1;
      if (!ascii_) {
        if (malformed)
          detail::append_utf8(cp, out_);
        else
          out_.append(start, p);
      } else if (cp < 0x10000) {
        u_escape(static_cast<unsigned>(cp));
      } else {
        const unsigned v = static_cast<unsigned>(cp) - 0x10000;
        u_escape(0xD800 + (v >> 10));
        u_escape(0xDC00 + (v & 0x3FF));
      }
    }
  }

  std::string& out_;
  bool ascii_;
  std::string_view item_sep_;
  std::string_view key_sep_;
};

void write_base(writer& w, const synapse_descriptor& d, const synapse& s) {
  w.key(synapse_name_key, true);
  w.string(d.name());
  detail::for_each_member(synapse_members, [&](const auto& m) {
    w.key(m.name, false);
    w.put(s.*m.ptr);
  });
}

// ---------------------------------------------------------------------------------------------
// Reader

/// Where a value sits, for error messages ("body.dendrite" + "nonce"), composed only when an
/// error is reported: the happy path builds no strings.
struct where_t {
  std::string_view prefix;
  std::string_view mid = {};
  std::string_view key = {};
  std::string str() const {
    std::string w(prefix);
    for (auto part : {mid, key}) {
      if (part.empty()) continue;
      w += '.';
      w += part;
    }
    return w;
  }
};

error wrong_type(std::string where, std::string_view expected, const json& got) {
  return detail::make_error(codec_errc::wrong_type, std::move(where),
                            std::string("expected ") + std::string(expected) + ", got " +
                                std::string(detail::json_type_name(got)));
}

// One overload per member type of the field tables, with the casts of PROTOCOL 1.1.
error read_value(json& v, std::optional<std::int64_t>& out, const where_t& where) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  std::int64_t x = 0;
  if (auto err = detail::cast_int(v, x, {})) {
    err.what = where.str();
    return err;
  }
  out = x;
  return {};
}

error read_value(json& v, std::optional<double>& out, const where_t& where) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  double x = 0;
  if (auto err = detail::cast_float(v, x, {})) {
    err.what = where.str();
    return err;
  }
  out = x;
  return {};
}

/// Moves the string out of `v` (the scanner's scratch value or a copy).
error read_value(json& v, std::optional<std::string>& out, const where_t& where) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  if (!v.is_string()) return wrong_type(where.str(), "a string", v);
  out = std::move(v.get_ref<std::string&>());
  return {};
}

/// computed_body_hash: null is "" (the base model's default), a string is taken.
error read_value(json& v, std::string& out, const where_t& where) {
  if (v.is_null())
    out.clear();
  else if (v.is_string())
    out = std::move(v.get_ref<std::string&>());
  else
    return wrong_type(where.str(), "a string", v);
  return {};
}

constexpr detail::name_index terminal_keys{detail::member_names(terminal_info_members)};

int terminal_key_index(std::string_view key) noexcept {
  return terminal_keys.find(key);
}

/// Assigns TerminalInfo field `index` (a position in terminal_info_members) from `v`; `where` is
/// its block ("body.dendrite").
error read_terminal_field(int index, json& v, terminal_info& t, const where_t& where) {
  return detail::visit_member(terminal_info_members, static_cast<std::size_t>(index),
                              [&](const auto& m) {
                                return read_value(v, t.*m.ptr, {where.prefix, where.mid, m.name});
                              });
}

/// Reads a body in one pass (no DOM of the whole document): base fields and TerminalInfo
/// blocks are converted as they are scanned, each declared field's value is built as bt::json
/// and handed to its field_ops, other keys are only validated. The first type error is kept
/// while scanning continues, so that a body that is not JSON at all reports that instead.
class body_reader {
 public:
  body_reader(const synapse_descriptor& d, synapse& target, detail::json_scanner& sc)
      : d_(d), target_(target), sc_(sc), seen_(d.fields().size(), false) {}

  error run() {
    sc_.skip_ws();
    if (sc_.peek() != '{') {
      json v;
      if (!sc_.parse_document(v)) return sc_.take_error();
      return detail::make_error(
          codec_errc::invalid_body, "body",
          std::string("expected a JSON object, got ") + std::string(detail::json_type_name(v)));
    }
    if (!sc_.enter(0)) return sc_.take_error();
    sc_.consume('{');
    detail::json_key_set other_keys;
    unsigned base_seen = 0;  // bit i: base_keys[i]
    sc_.skip_ws();
    if (!sc_.consume('}')) {
      while (true) {
        sc_.skip_ws();
        if (sc_.peek() != '"') return syntax("expected a string key");
        std::string_view key;
        if (!sc_.parse_key(key)) return sc_.take_error();
        // Duplicates are refused: base keys by bit, fields by index, others by a key set.
        const int base = base_key_index(key);
        const field_descriptor* f = base < 0 ? d_.find(key) : nullptr;
        bool dup;
        if (base >= 0) {
          dup = (base_seen & (1u << base)) != 0;
          base_seen |= 1u << base;
        } else if (f != nullptr) {
          dup = seen_[f->index];
          seen_[f->index] = true;
        } else {
          dup = !other_keys.insert(key);
        }
        if (dup) {
          sc_.fail(codec_errc::invalid_json, "duplicate key " + detail::preview(key));
          return sc_.take_error();
        }
        if (!sc_.expect(':')) return sc_.take_error();
        if (!(semantic_ ? sc_.skip_value(1) : member(base, f))) return sc_.take_error();
        sc_.skip_ws();
        if (sc_.consume(',')) continue;
        if (sc_.consume('}')) break;
        return syntax("expected ',' or '}'");
      }
    }
    if (const auto k = other_keys.repeated()) {  // among many ignored keys
      sc_.duplicate_key(*k);
      return sc_.take_error();
    }
    sc_.skip_ws();
    if (!sc_.at_end()) return syntax("trailing characters after the JSON value");
    if (semantic_) return std::move(semantic_);
    for (const auto& f : d_.fields())
      if (f.required() && !seen_[f.index])
        return detail::make_error(codec_errc::missing_field, "body." + f.name,
                                  "required field absent");
    return {};
  }

 private:
  error syntax(std::string why) {
    sc_.syntax_error(std::move(why));
    return sc_.take_error();
  }

  /// "name", then the base members: index 0 is "name", index i > 0 is member i - 1.
  static constexpr detail::name_index base_keys{std::apply(
      [](auto... names) {
        return std::array{synapse_name_key, names...};
      },
      detail::member_names(synapse_members))};
  static int base_key_index(std::string_view key) noexcept { return base_keys.find(key); }

  /// Reads one member's value (a base key by index, or field `f`, or neither: an ignored key);
  /// false only when the scanner failed.
  bool member(int base, const field_descriptor* f) {
    if (base == 0) return sc_.skip_value(1);  // name: Python sets it from the class
    if (base > 0) {
      return detail::visit_member(
          synapse_members, static_cast<std::size_t>(base - 1),
          [&](const auto& m) { return base_member(target_.*m.ptr, m.name); });
    }
    if (f == nullptr) return sc_.skip_value(1);  // unknown keys are ignored, as pydantic does
    return scalar([&]() -> error {
      if (value_.is_string()) {
        if (std::string* slot = f->ops->text_slot(target_, *f)) {
          *slot = std::move(value_.get_ref<std::string&>());
          return {};
        }
      }
      why_.clear();
      if (!f->ops->from_json(target_, *f, value_, why_))
        return detail::make_error(codec_errc::wrong_type, "body." + f->name, why_);
      return {};
    });
  }

  template <class V>
  bool base_member(V& out, std::string_view name) {
    return scalar([&] { return read_value(value_, out, {"body", name}); });
  }
  bool base_member(terminal_info& out, std::string_view name) { return terminal(out, name); }

  template <class Apply>
  bool scalar(Apply apply) {
    if (!sc_.parse_value(value_, 1)) return false;
    semantic_ = apply();
    return true;
  }

  /// A TerminalInfo block ("dendrite" or "axon"): null resets it, an object is read key by key.
  bool terminal(terminal_info& out, std::string_view name) {
    const where_t where{"body", name};
    sc_.skip_ws();
    if (sc_.peek() != '{') {
      return scalar([&]() -> error {
        if (value_.is_null()) {
          out = {};
          return {};
        }
        return wrong_type(where.str(), "an object", value_);
      });
    }
    if (!sc_.enter(1)) return false;
    sc_.consume('{');
    terminal_info t;
    detail::json_key_set other_keys;
    unsigned seen = 0;  // bit i: terminal_keys[i]
    sc_.skip_ws();
    if (!sc_.consume('}')) {
      while (true) {
        sc_.skip_ws();
        if (sc_.peek() != '"') return sc_.syntax_error("expected a string key");
        std::string_view key;
        if (!sc_.parse_key(key)) return false;
        const int index = terminal_key_index(key);
        const bool dup = index >= 0 ? (seen & (1u << index)) != 0 : !other_keys.insert(key);
        if (dup) return sc_.fail(codec_errc::invalid_json, "duplicate key " + detail::preview(key));
        if (index >= 0) seen |= 1u << index;
        if (!sc_.expect(':')) return false;
        if (!terminal_member(t, index, where)) return false;
        sc_.skip_ws();
        if (sc_.consume(',')) continue;
        if (sc_.consume('}')) break;
        return sc_.syntax_error("expected ',' or '}'");
      }
    }
    if (const auto k = other_keys.repeated()) return sc_.duplicate_key(*k);  // among many
    if (!semantic_) out = std::move(t);
    return true;
  }

  bool terminal_member(terminal_info& t, int index, const where_t& where) {
    if (semantic_ || index < 0)
      return sc_.skip_value(2);  // other keys are ignored, as pydantic does
    return terminal_scalar([&] { return read_terminal_field(index, value_, t, where); });
  }

  template <class Apply>
  bool terminal_scalar(Apply apply) {
    if (!sc_.parse_value(value_, 2)) return false;
    semantic_ = apply();
    return true;
  }

  const synapse_descriptor& d_;
  synapse& target_;
  detail::json_scanner& sc_;
  std::vector<bool> seen_;
  json value_;
  std::string why_;
  error semantic_;
};

}  // namespace

namespace detail {

error parse_json_text(std::string_view text, json& out, std::size_t max_depth,
                      std::string_view what) {
  try {
    json result;
    json_scanner sc(text, max_depth, what);
    if (!sc.parse_document(result)) return sc.take_error();
    out = std::move(result);
    return {};
  } catch (const std::exception& e) {  // bad_alloc
    return make_error(codec_errc::invalid_json, std::string(what), e.what());
  }
}

error cast_int(const json& v, std::int64_t& out, std::string_view where) {
  switch (v.type()) {
    case json::value_t::number_integer:
      out = v.get<std::int64_t>();
      return {};
    case json::value_t::number_unsigned:
      if (v.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return make_error(codec_errc::invalid_integer, std::string(where), "integer out of range");
      out = v.get<std::int64_t>();
      return {};
    case json::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d) || d != std::trunc(d))
        return make_error(codec_errc::invalid_integer, std::string(where),
                          "not an integral number");
      if (d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return make_error(codec_errc::invalid_integer, std::string(where), "integer out of range");
      out = static_cast<std::int64_t>(d);
      return {};
    }
    case json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      switch (python_int(s, out)) {
        case int_parse::ok:
          return {};
        case int_parse::range:
          return make_error(codec_errc::invalid_integer, std::string(where),
                            "integer out of range: " + preview(s));
        case int_parse::syntax:
          break;
      }
      return make_error(codec_errc::invalid_integer, std::string(where),
                        "not a Python int() literal: " + preview(s));
    }
    default:
      return wrong_type(std::string(where), "an integer", v);
  }
}

error cast_float(const json& v, double& out, std::string_view where) {
  if (v.is_number()) {
    out = v.get<double>();
    return {};
  }
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (parse_python_float(s, out)) return {};
    return make_error(codec_errc::invalid_float, std::string(where),
                      "not a Python float() literal: " + preview(s));
  }
  return wrong_type(std::string(where), "a number", v);
}

}  // namespace detail

void write_json_body(const synapse_descriptor& d, const synapse& s, std::string& out,
                     json_style style) {
  // Sized once for what is known: the base members (the two terminal_info objects and the
  // rest, under a kilobyte) and the text fields with a little room for escapes, so that a body
  // built by appends does not reallocate, and copy a large field, at each doubling.
  std::size_t estimate = 1024;
  for (const auto& f : d.fields()) {
    const std::string* text = f.ops->text(s, f);
    estimate += f.name.size() + 8 + (text ? text->size() + text->size() / 16 : 32);
  }
  out.reserve(out.size() + estimate);
  writer w(out, style);
  w.begin_object();
  write_base(w, d, s);
  json tmp;
  for (const auto& f : d.fields()) {
    w.key(f.name, false);
    if (const std::string* text = f.ops->text(s, f)) {
      w.string(*text);
      continue;
    }
    tmp = nullptr;
    f.ops->to_json(s, f, tmp);
    w.value(tmp);
  }
  w.end_object();
}

void append_json_string(std::string& out, std::string_view text, json_style style) {
  writer(out, style).string(text);
}

namespace {

// The bt::json form of each member type of the field tables (None is null).
template <class V>
json json_of(const std::optional<V>& v) {
  return v ? json(*v) : json(nullptr);
}
json json_of(const std::string& v) {
  return json(v);
}
json json_of(const terminal_info& t) {
  json out = json::object();
  detail::for_each_member(terminal_info_members,
                          [&](const auto& m) { out[m.name] = json_of(t.*m.ptr); });
  return out;
}

}  // namespace

json to_json_value(const synapse_descriptor& d, const synapse& s) {
  json j = json::object();
  j[synapse_name_key] = d.name();
  detail::for_each_member(synapse_members, [&](const auto& m) { j[m.name] = json_of(s.*m.ptr); });
  for (const auto& f : d.fields()) f.ops->to_json(s, f, j[f.name]);
  return j;
}

error terminal_info_from_json(const json& j, terminal_info& out, std::string_view where) {
  if (!j.is_object()) return wrong_type(std::string(where), "an object", j);
  terminal_info t;
  json scratch;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const int index = terminal_key_index(it.key());
    if (index < 0) continue;  // other keys are ignored, as pydantic does
    scratch = it.value();
    if (auto err = read_terminal_field(index, scratch, t, {where})) return err;
  }
  out = std::move(t);
  return {};
}

error parse_json(std::string_view text, json& out, const json_read_options& opt) {
  return detail::parse_json_text(text, out, opt.max_depth, "json");
}

error read_json_body(const synapse_descriptor& d, std::string_view text, synapse& target,
                     const json_read_options& opt) {
  try {
    detail::json_scanner sc(text, opt.max_depth, "body");
    body_reader r(d, target, sc);
    return r.run();
  } catch (const std::exception& e) {  // bad_alloc; nothing else is expected
    return detail::make_error(codec_errc::invalid_body, "body", e.what());
  }
}

}  // namespace bt
