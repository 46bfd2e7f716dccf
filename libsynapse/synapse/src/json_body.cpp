// JSON bodies, the reading half (PROTOCOL 1.4): a bounded, exception-free, one-pass reader for
// untrusted bodies (json_scanner.hpp), and the checked int/float casts of PROTOCOL 1.1. The
// writer is json_body_writer.cpp.
#include <bt/json_body.hpp>

#include <bt/header_codec.hpp>

#include "codec_detail.hpp"
#include "json_scanner.hpp"
#include "name_index.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

namespace bt {
namespace {

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

/// Reads a base or TerminalInfo member's value from the scanner into `out`. The common values
/// (null; a string for text; a number for a float; an integer within int64 for an int) go
/// straight into the member, with no bt::json in between; any other is parsed into the scratch
/// `v` and converted by read_value, whose casts and errors apply. The same result either way.
/// False only when the scanner failed; a conversion error is stored in `semantic`.
template <class V>
bool read_member(detail::json_scanner& sc, V& out, json& v, const where_t& where, std::size_t depth,
                 error& semantic) {
  sc.skip_ws();
  const char c = sc.peek();
  if (c == 'n') {
    if (!sc.parse_null()) return false;
    if constexpr (std::is_same_v<V, std::string>)
      out.clear();  // computed_body_hash
    else
      out.reset();
    return true;
  }
  constexpr bool text =
      std::is_same_v<V, std::string> || std::is_same_v<V, std::optional<std::string>>;
  if constexpr (text) {
    if (c == '"') {
      std::string_view raw;
      bool escaped = false;
      if (!sc.scan_string(raw, escaped)) return false;
      std::string* slot;
      if constexpr (std::is_same_v<V, std::string>)
        slot = &out;
      else
        slot = out ? &*out : &out.emplace();
      return sc.assign_string(raw, escaped, *slot);
    }
  }
  constexpr bool number =
      std::is_same_v<V, std::optional<double>> || std::is_same_v<V, std::optional<std::int64_t>>;
  if constexpr (number) {
    if (c == '-' || (c >= '0' && c <= '9')) {
      detail::json_number n;
      if (!sc.parse_number(n)) return false;
      if constexpr (std::is_same_v<V, std::optional<double>>) {
        out = n.as_double();
        return true;
      } else {
        if (n.k == detail::json_number::kind::negative_integer) {
          out = n.i;
          return true;
        }
        if (n.k == detail::json_number::kind::unsigned_integer &&
            n.u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          out = static_cast<std::int64_t>(n.u);
          return true;
        }
        n.to_json(v);  // beyond int64, or a float: cast_int decides
        if (error e = read_value(v, out, where)) semantic = std::move(e);
        return true;
      }
    }
  }
  if (!sc.parse_value(v, depth)) return false;
  if (error e = read_value(v, out, where)) semantic = std::move(e);
  return true;
}

constexpr detail::name_index terminal_keys{detail::member_names(terminal_info_members)};

/// The JSON values that are valid for a base or TerminalInfo member of type V whatever they
/// say, so that one that is not kept needs only the scanner's check: null (None, or "" for
/// computed_body_hash) for all of them, any string for text, any number for a float (the
/// scanner refuses numbers beyond double), an integer literal of at most 18 digits for an int.
enum class any_valid { null_only, string, number, short_integer };

template <class V>
constexpr any_valid any_valid_v =
    std::is_same_v<V, std::string> || std::is_same_v<V, std::optional<std::string>>
        ? any_valid::string
    : std::is_same_v<V, std::optional<double>>       ? any_valid::number
    : std::is_same_v<V, std::optional<std::int64_t>> ? any_valid::short_integer
                                                     : any_valid::null_only;

/// Per TerminalInfo member (terminal_info_members order).
constexpr auto terminal_any_valid = std::apply(
    [](const auto&... m) {
      return std::array{any_valid_v<typename std::remove_cvref_t<decltype(m)>::value_type>...};
    },
    terminal_info_members);

/// Per TerminalInfo member: whether json_read_options::answer_status_only keeps it (in the axon
/// block only).
constexpr auto answer_status_keys = std::apply(
    [](const auto&... m) {
      return std::array{
          (m.name == "status_code" || m.name == "status_message" || m.name == "process_time")...};
    },
    terminal_info_members);

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

/// read_member for TerminalInfo field `index` of the block `where` ("body.dendrite").
bool read_terminal_member(detail::json_scanner& sc, int index, terminal_info& t, json& v,
                          const where_t& where, error& semantic) {
  return detail::visit_member(
      terminal_info_members, static_cast<std::size_t>(index), [&](const auto& m) {
        return read_member(sc, t.*m.ptr, v, {where.prefix, where.mid, m.name}, 2, semantic);
      });
}

/// The declared fields a body has named, by index: one word of bits for up to 64 fields (no
/// allocation per read), a vector past that.
class field_set {
 public:
  explicit field_set(std::size_t count) {
    if (count > 64) many_.assign(count, false);
  }
  /// False when `index` was there already.
  bool insert(std::size_t index) {
    if (many_.empty()) {
      const std::uint64_t bit = std::uint64_t{1} << index;
      const bool fresh = (few_ & bit) == 0;
      few_ |= bit;
      return fresh;
    }
    const bool fresh = !many_[index];
    many_[index] = true;
    return fresh;
  }
  bool contains(std::size_t index) const {
    return many_.empty() ? ((few_ >> index) & 1u) != 0 : static_cast<bool>(many_[index]);
  }

 private:
  std::uint64_t few_ = 0;
  std::vector<bool> many_;
};

/// Reads a body in one pass (no DOM of the whole document): base fields and TerminalInfo
/// blocks are converted as they are scanned, each declared field's value is built as bt::json
/// and handed to its field_ops, other keys are only validated. The first type error is kept
/// while scanning continues, so that a body that is not JSON at all reports that instead.
class body_reader {
 public:
  body_reader(const synapse_descriptor& d, synapse& target, detail::json_scanner& sc,
              bool answer_status_only)
      : d_(d),
        target_(target),
        sc_(sc),
        seen_(d.fields().size()),
        answer_status_only_(answer_status_only) {}

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
          dup = !seen_.insert(f->index);
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
      if (f.required() && !seen_.contains(f.index))
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
    sc_.skip_ws();
    if (sc_.peek() == '"') {
      // A string goes straight into a text member's storage (taken only once the string is
      // known valid: an optional's slot is engaged when taken).
      std::string_view raw;
      bool escaped = false;
      if (!sc_.scan_string(raw, escaped)) return false;
      if (std::string* slot = f->ops->text_slot(target_, *f))
        return sc_.assign_string(raw, escaped, *slot);
      value_ = json::string_t();
      if (!sc_.assign_string(raw, escaped, value_.get_ref<std::string&>())) return false;
      if (error e = field_from_value(*f)) semantic_ = std::move(e);
      return true;
    }
    return scalar([&] { return field_from_value(*f); });
  }

  /// Assigns field `f` from value_ through its field_ops.
  error field_from_value(const field_descriptor& f) {
    why_.clear();
    if (!f.ops->from_json(target_, f, value_, why_))
      return detail::make_error(codec_errc::wrong_type, "body." + f.name, why_);
    return {};
  }

  template <class V>
  bool base_member(V& out, std::string_view name) {
    if (answer_status_only_ && next_is_any_valid(any_valid_v<V>)) return sc_.skip_value(1);
    return read_member(sc_, out, value_, {"body", name}, 1, semantic_);
  }

  /// Whether the next value is one that is valid for a member of kind `k` whatever it says: a
  /// value that is not kept is then checked by the scanner alone, without being built.
  bool next_is_any_valid(any_valid k) {
    sc_.skip_ws();
    const char c = sc_.peek();
    switch (k) {
      case any_valid::string:
        return c == '"' || c == 'n';
      case any_valid::number:
        return c == '-' || (c >= '0' && c <= '9') || c == 'n';
      case any_valid::short_integer:
        return c == 'n' || sc_.next_is_short_integer();
      case any_valid::null_only:
        return c == 'n';
    }
    return false;
  }
  bool base_member(terminal_info& out, std::string_view name) { return terminal(out, name); }

  // Called only while no error is kept (the readers skip values after the first one), so only
  // an error is assigned: the happy path moves no bt::error per value.
  template <class Apply>
  bool scalar(Apply apply) {
    if (!sc_.parse_value(value_, 1)) return false;
    if (error e = apply()) semantic_ = std::move(e);
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
        if (!terminal_member(t, index, where, &out == &target_.axon)) return false;
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

  /// `status_block`: the block whose status members answer_status_only keeps (the axon's).
  bool terminal_member(terminal_info& t, int index, const where_t& where, bool status_block) {
    if (semantic_ || index < 0)
      return sc_.skip_value(2);  // other keys are ignored, as pydantic does
    const auto i = static_cast<std::size_t>(index);
    const bool kept = !answer_status_only_ || (status_block && answer_status_keys[i]);
    if (!kept && next_is_any_valid(terminal_any_valid[i])) return sc_.skip_value(2);
    return read_terminal_member(sc_, index, t, value_, where, semantic_);
  }

  const synapse_descriptor& d_;
  synapse& target_;
  detail::json_scanner& sc_;
  field_set seen_;
  json value_;
  std::string why_;
  error semantic_;
  bool answer_status_only_;
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
    body_reader r(d, target, sc, opt.answer_status_only);
    return r.run();
  } catch (const std::exception& e) {  // bad_alloc; nothing else is expected
    return detail::make_error(codec_errc::invalid_body, "body", e.what());
  }
}

}  // namespace bt
