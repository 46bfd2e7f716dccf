// JSON bodies, the writing half (PROTOCOL 1.4): the model_dump() form of a synapse, written
// byte-for-byte as Python's json.dumps defaults (requests) or Starlette's compact UTF-8
// (responses), and its bt::json value form. The reader is json_body.cpp.
#include <bt/json_body.hpp>

#include <bt/header_codec.hpp>

#include "codec_detail.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace bt {
namespace {

/// Whether every name of a member table is lowercase ASCII letters and '_': JSON text as it is.
template <class Table>
constexpr bool plain_member_names(const Table& table) {
  for (std::string_view n : detail::member_names(table))
    for (char c : n)
      if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}
static_assert(plain_member_names(synapse_members) && plain_member_names(terminal_info_members));

// json.dumps' default separators, and the compact ones (Starlette's JSONResponse).
constexpr std::string_view dumps_item_sep = ", ", dumps_key_sep = ": ";
constexpr std::string_view compact_item_sep = ",", compact_key_sep = ":";

/// A member table's keys as the writer writes them, the item separator before and the key
/// separator after (`, "nonce": ` and `,"nonce":`), built once: a member's key is then one
/// append, with no escape scan (plain_member_names) and no piecing together.
template <class Table>
class member_keys {
 public:
  explicit member_keys(const Table& table) {
    std::size_t i = 0;
    detail::for_each_member(table, [&](const auto& m) {
      dumps_[i] = quoted(dumps_item_sep, m.name, dumps_key_sep);
      compact_[i] = quoted(compact_item_sep, m.name, compact_key_sep);
      ++i;
    });
  }
  /// Member i's key in the style (`ascii`: json.dumps), without the item separator if `first`.
  std::string_view get(std::size_t i, bool ascii, bool first) const {
    const std::string_view k = ascii ? dumps_[i] : compact_[i];
    return first ? k.substr(ascii ? dumps_item_sep.size() : compact_item_sep.size()) : k;
  }

 private:
  static std::string quoted(std::string_view item_sep, std::string_view name,
                            std::string_view key_sep) {
    std::string k(item_sep);
    k.append("\"").append(name).append("\"").append(key_sep);
    return k;
  }
  std::array<std::string, std::tuple_size_v<Table>> dumps_, compact_;
};

class writer {
 public:
  writer(std::string& out, json_style style) noexcept
      : out_(out),
        ascii_(style == json_style::python_dumps),
        item_sep_(ascii_ ? dumps_item_sep : compact_item_sep),
        key_sep_(ascii_ ? dumps_key_sep : compact_key_sep) {}

  void begin_object() { out_ += '{'; }
  void end_object() { out_ += '}'; }
  /// Writes the separator (unless first) and "key": .
  void key(std::string_view k, bool first) {
    // A field's name is nearly always short with nothing in it to escape: one append then.
    if (k.size() <= max_plain_key &&
        detail::json_plain_prefix(k.data(), k.size(), ascii_) == k.size())
      return plain_key(k, first);
    if (!first) out_ += item_sep_;
    string(k);
    out_ += key_sep_;
  }

  /// Member `i`'s key from a table's member_keys, in one append.
  template <class Table>
  void member_key(const member_keys<Table>& keys, std::size_t i, bool first) {
    out_.append(keys.get(i, ascii_, first));
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
    static const member_keys keys(terminal_info_members);
    out_ += '{';
    std::size_t i = 0;
    detail::for_each_member(terminal_info_members, [&](const auto& m) {
      member_key(keys, i, i == 0);
      ++i;
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

  static constexpr std::size_t max_plain_key = 48;

  /// The separator (unless first), the quoted name and the key separator in one append; `k` has
  /// nothing to escape and at most max_plain_key bytes.
  void plain_key(std::string_view k, bool first) {
    const std::size_t sep = first ? 0 : item_sep_.size();
    char piece[max_plain_key + 6];  // ", " + quotes + ": "
    char* p = std::copy_n(item_sep_.data(), sep, piece);
    *p++ = '"';
    p = std::copy(k.begin(), k.end(), p);
    *p++ = '"';
    p = std::copy(key_sep_.begin(), key_sep_.end(), p);
    out_.append(piece, static_cast<std::size_t>(p - piece));
  }

  std::string& out_;
  bool ascii_;
  std::string_view item_sep_;
  std::string_view key_sep_;
};

void write_base(writer& w, const synapse_descriptor& d, const synapse& s) {
  static const member_keys keys(synapse_members);
  w.key(synapse_name_key, true);
  w.string(d.name());
  std::size_t i = 0;
  detail::for_each_member(synapse_members, [&](const auto& m) {
    w.member_key(keys, i++, false);
    w.put(s.*m.ptr);
  });
}

}  // namespace

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
}  // namespace bt
