// JSON bodies (PROTOCOL 1.4): the model_dump() form of a synapse, written byte-for-byte as
// Python's json.dumps defaults (requests) or Starlette's compact UTF-8 (responses), and a
// bounded, exception-free reader for untrusted bodies.
#include <bt/json_body.hpp>

#include <bt/header_codec.hpp>

#include "codec_detail.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <set>
#include <vector>

namespace bt {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// ---------------------------------------------------------------------------------------------
// Writer

class writer {
 public:
  writer(std::string& out, json_style style) noexcept
      : out_(out), ascii_(style == json_style::python_dumps), item_sep_(ascii_ ? ", " : ","),
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
    // Fast path: nothing to escape.
    std::size_t i = 0;
    for (; i < s.size(); ++i) {
      const auto u = static_cast<unsigned char>(s[i]);
      if (u < 0x20 || u == '"' || u == '\\' || (ascii_ && u >= 0x7F) || (!ascii_ && u >= 0x80)) break;
    }
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

  void terminal(const terminal_info& t) {
    out_ += '{';
    key("status_code", true);
    opt(t.status_code);
    key("status_message", false);
    opt(t.status_message);
    key("process_time", false);
    opt(t.process_time);
    key("ip", false);
    opt(t.ip);
    key("port", false);
    opt(t.port);
    key("version", false);
    opt(t.version);
    key("nonce", false);
    opt(t.nonce);
    key("uuid", false);
    opt(t.uuid);
    key("hotkey", false);
    opt(t.hotkey);
    key("signature", false);
    opt(t.signature);
    out_ += '}';
  }

  void opt(const std::optional<std::int64_t>& v) {
    if (v)
      integer(*v);
    else
      null();
  }
  void opt(const std::optional<double>& v) {
    if (v)
      number(*v);
    else
      null();
  }
  void opt(const std::optional<std::string>& v) {
    if (v)
      string(*v);
    else
      null();
  }

 private:
  void u_escape(unsigned cp) {
    char buf[6] = {'\\', 'u', hex_digits[(cp >> 12) & 0xF], hex_digits[(cp >> 8) & 0xF],
                   hex_digits[(cp >> 4) & 0xF], hex_digits[cp & 0xF]};
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
          case '"': out_ += "\\\""; break;
          case '\\': out_ += "\\\\"; break;
          case '\n': out_ += "\\n"; break;
          case '\r': out_ += "\\r"; break;
          case '\t': out_ += "\\t"; break;
          case '\b': out_ += "\\b"; break;
          case '\f': out_ += "\\f"; break;
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
  w.key("name", true);
  w.string(d.name());
  w.key("timeout", false);
  w.opt(s.timeout);
  w.key("total_size", false);
  w.opt(s.total_size);
  w.key("header_size", false);
  w.opt(s.header_size);
  w.key("dendrite", false);
  w.terminal(s.dendrite);
  w.key("axon", false);
  w.terminal(s.axon);
  w.key("computed_body_hash", false);
  w.string(s.computed_body_hash);
}

// ---------------------------------------------------------------------------------------------
// Reader: a SAX handler building bt::json with the bounds of json_read_options.

class dom_builder {
 public:
  dom_builder(json& root, std::size_t max_depth, std::string_view what)
      : root_(root), max_depth_(max_depth), what_(what) {}

  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(json::number_integer_t v) { return put(v); }
  bool number_unsigned(json::number_unsigned_t v) { return put(v); }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    // nlohmann falls back to double for integers beyond 64 bits; a nonce or any Python int
    // must never be rounded (PROTOCOL 1.4), so such literals are refused instead.
    if (text.find_first_of(".eE") == std::string::npos)
      return fail(errc::invalid_json, "integer literal beyond 64 bits: " + detail::preview(text));
    return put(v);
  }
  bool string(json::string_t& v) { return put(std::move(v)); }
  bool binary(json::binary_t&) { return fail(errc::invalid_json, "binary value"); }

  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    level& l = stack_.back();
    auto& obj = l.value->get_ref<json::object_t&>();
    // Duplicate keys are refused (PROTOCOL D22: parsers disagree on which one wins). Small
    // objects are scanned; large ones keep a sorted key set so that parsing stays n log n.
    bool dup = false;
    if (l.keys) {
      dup = !l.keys->insert(k).second;
    } else {
      for (const auto& kv : obj)
        if (kv.first == k) {
          dup = true;
          break;
        }
      if (!dup && obj.size() >= 16) {
        l.keys = std::make_unique<std::set<std::string, std::less<>>>();
        for (const auto& kv : obj) l.keys->insert(kv.first);
        l.keys->insert(k);
      }
    }
    if (dup) return fail(errc::invalid_json, "duplicate key " + detail::preview(k));
    obj.emplace_back(std::move(k), nullptr);
    pending_ = &obj.back().second;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    if (!err_) err_ = detail::make_error(errc::invalid_json, std::string(what_), ex.what());
    return false;
  }

  error take_error() { return std::move(err_); }

 private:
  struct level {
    json* value;
    std::unique_ptr<std::set<std::string, std::less<>>> keys;
  };

  bool fail(errc code, std::string why) {
    err_ = detail::make_error(code, std::string(what_), std::move(why));
    return false;
  }

  json* slot() {
    if (stack_.empty()) return &root_;
    json* top = stack_.back().value;
    if (top->is_array()) {
      auto& arr = top->get_ref<json::array_t&>();
      arr.emplace_back();
      return &arr.back();
    }
    return pending_;
  }

  template <class V>
  bool put(V&& v) {
    *slot() = json(std::forward<V>(v));
    return true;
  }

  bool open(json::value_t t) {
    if (stack_.size() >= max_depth_)
      return fail(errc::nesting_too_deep, "nesting deeper than " + std::to_string(max_depth_));
    json* j = slot();
    *j = json(t);
    stack_.push_back(level{j, nullptr});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  std::size_t max_depth_;
  std::string_view what_;
  std::vector<level> stack_;
  json* pending_ = nullptr;
  error err_;
};

std::string where_of(std::string_view prefix, std::string_view field) {
  std::string w(prefix);
  w += '.';
  w += field;
  return w;
}

error wrong_type(std::string where, std::string_view expected, const json& got) {
  return detail::make_error(errc::wrong_type, std::move(where),
                            std::string("expected ") + std::string(expected) + ", got " +
                                std::string(detail::json_type_name(got)));
}

error read_opt_int(const json& v, std::optional<std::int64_t>& out, std::string_view where) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  std::int64_t x = 0;
  if (auto err = detail::cast_int(v, x, where)) return err;
  out = x;
  return {};
}

error read_opt_float(const json& v, std::optional<double>& out, std::string_view where) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  double x = 0;
  if (auto err = detail::cast_float(v, x, where)) return err;
  out = x;
  return {};
}

error read_opt_string(const json& v, std::optional<std::string>& out, std::string_view where) {
  if (v.is_null()) {
    out.reset();
    return {};
  }
  if (!v.is_string()) return wrong_type(std::string(where), "a string", v);
  out = v.get_ref<const std::string&>();
  return {};
}

}  // namespace

namespace detail {

error parse_json_text(std::string_view text, json& out, std::size_t max_depth, std::string_view what) {
  try {
    json result;
    dom_builder b(result, max_depth, what);
    const bool ok = json::sax_parse(text.begin(), text.end(), &b, json::input_format_t::json, true, false);
    error err = b.take_error();
    if (!ok || err) {
      if (!err) err = make_error(errc::invalid_json, std::string(what), "malformed JSON");
      return err;
    }
    out = std::move(result);
    return {};
  } catch (const std::bad_alloc&) {
    return make_error(errc::invalid_json, std::string(what), "out of memory");
  } catch (const std::exception& e) {
    return make_error(errc::invalid_json, std::string(what), e.what());
  }
}

error cast_int(const json& v, std::int64_t& out, std::string_view where) {
  switch (v.type()) {
    case json::value_t::number_integer:
      out = v.get<std::int64_t>();
      return {};
    case json::value_t::number_unsigned:
      if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return make_error(errc::invalid_integer, std::string(where), "integer out of range");
      out = v.get<std::int64_t>();
      return {};
    case json::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d) || d != std::trunc(d))
        return make_error(errc::invalid_integer, std::string(where), "not an integral number");
      if (d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return make_error(errc::invalid_integer, std::string(where), "integer out of range");
      out = static_cast<std::int64_t>(d);
      return {};
    }
    case json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      switch (python_int(s, out)) {
        case int_parse::ok: return {};
        case int_parse::range:
          return make_error(errc::invalid_integer, std::string(where), "integer out of range: " + preview(s));
        case int_parse::syntax: break;
      }
      return make_error(errc::invalid_integer, std::string(where), "not a Python int() literal: " + preview(s));
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
    return make_error(errc::invalid_float, std::string(where), "not a Python float() literal: " + preview(s));
  }
  return wrong_type(std::string(where), "a number", v);
}

}  // namespace detail

void write_json_body(const synapse_descriptor& d, const synapse& s, std::string& out, json_style style) {
  writer w(out, style);
  w.begin_object();
  write_base(w, d, s);
  json tmp;
  for (const auto& f : d.fields()) {
    w.key(f.name, false);
    tmp = nullptr;
    f.ops->to_json(s, f, tmp);
    w.value(tmp);
  }
  w.end_object();
}

void terminal_info_to_json(const terminal_info& t, json& out) {
  auto opt = [](const auto& v) -> json { return v ? json(*v) : json(nullptr); };
  out = json::object();
  out["status_code"] = opt(t.status_code);
  out["status_message"] = opt(t.status_message);
  out["process_time"] = opt(t.process_time);
  out["ip"] = opt(t.ip);
  out["port"] = opt(t.port);
  out["version"] = opt(t.version);
  out["nonce"] = opt(t.nonce);
  out["uuid"] = opt(t.uuid);
  out["hotkey"] = opt(t.hotkey);
  out["signature"] = opt(t.signature);
}

json to_json_value(const synapse_descriptor& d, const synapse& s) {
  json j = json::object();
  j["name"] = d.name();
  j["timeout"] = s.timeout ? json(*s.timeout) : json(nullptr);
  j["total_size"] = s.total_size ? json(*s.total_size) : json(nullptr);
  j["header_size"] = s.header_size ? json(*s.header_size) : json(nullptr);
  terminal_info_to_json(s.dendrite, j["dendrite"]);
  terminal_info_to_json(s.axon, j["axon"]);
  j["computed_body_hash"] = s.computed_body_hash;
  for (const auto& f : d.fields()) f.ops->to_json(s, f, j[f.name]);
  return j;
}

error terminal_info_from_json(const json& j, terminal_info& out, std::string_view where) {
  if (!j.is_object()) return wrong_type(std::string(where), "an object", j);
  terminal_info t;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    error err;
    if (k == "status_code")
      err = read_opt_int(v, t.status_code, where_of(where, k));
    else if (k == "status_message")
      err = read_opt_string(v, t.status_message, where_of(where, k));
    else if (k == "process_time")
      err = read_opt_float(v, t.process_time, where_of(where, k));
    else if (k == "ip")
      err = read_opt_string(v, t.ip, where_of(where, k));
    else if (k == "port")
      err = read_opt_int(v, t.port, where_of(where, k));
    else if (k == "version")
      err = read_opt_int(v, t.version, where_of(where, k));
    else if (k == "nonce")
      err = read_opt_int(v, t.nonce, where_of(where, k));
    else if (k == "uuid")
      err = read_opt_string(v, t.uuid, where_of(where, k));
    else if (k == "hotkey")
      err = read_opt_string(v, t.hotkey, where_of(where, k));
    else if (k == "signature")
      err = read_opt_string(v, t.signature, where_of(where, k));
    // other keys are ignored, as pydantic does
    if (err) return err;
  }
  out = std::move(t);
  return {};
}

error parse_json(std::string_view text, json& out, const json_read_options& opt) {
  return detail::parse_json_text(text, out, opt.max_depth, "json");
}

error read_json_body(const synapse_descriptor& d, std::string_view text, synapse& target,
                     const json_read_options& opt) {
  json j;
  if (auto err = detail::parse_json_text(text, j, opt.max_depth, "body")) return err;
  return read_json_value(d, j, target);
}

error read_json_value(const synapse_descriptor& d, const json& value, synapse& target) {
  try {
    if (!value.is_object())
      return detail::make_error(errc::invalid_body, "body",
                                std::string("expected a JSON object, got ") +
                                    std::string(detail::json_type_name(value)));
    // "name" is not read: Python replaces it with the class name on every construction.
    if (auto it = value.find("timeout"); it != value.end())
      if (auto err = read_opt_float(*it, target.timeout, "body.timeout")) return err;
    if (auto it = value.find("total_size"); it != value.end())
      if (auto err = read_opt_int(*it, target.total_size, "body.total_size")) return err;
    if (auto it = value.find("header_size"); it != value.end())
      if (auto err = read_opt_int(*it, target.header_size, "body.header_size")) return err;
    if (auto it = value.find("dendrite"); it != value.end()) {
      if (it->is_null())
        target.dendrite = {};
      else if (auto err = terminal_info_from_json(*it, target.dendrite, "body.dendrite"))
        return err;
    }
    if (auto it = value.find("axon"); it != value.end()) {
      if (it->is_null())
        target.axon = {};
      else if (auto err = terminal_info_from_json(*it, target.axon, "body.axon"))
        return err;
    }
    if (auto it = value.find("computed_body_hash"); it != value.end()) {
      if (it->is_null())
        target.computed_body_hash.clear();
      else if (it->is_string())
        target.computed_body_hash = it->get_ref<const std::string&>();
      else
        return wrong_type("body.computed_body_hash", "a string", *it);
    }
    std::string why;
    for (const auto& f : d.fields()) {
      auto it = value.find(f.name);
      if (it == value.end()) {
        if (f.required()) return detail::make_error(errc::missing_field, "body." + f.name, "required field absent");
        continue;
      }
      why.clear();
      if (!f.ops->from_json(target, f, *it, why))
        return detail::make_error(errc::wrong_type, "body." + f.name, why);
    }
    return {};
  } catch (const std::exception& e) {  // bad_alloc; nothing else is expected
    return detail::make_error(errc::invalid_body, "body", e.what());
  }
}

}  // namespace bt
