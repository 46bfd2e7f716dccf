// Field operations for members of typed synapses: bt::detail::member_field_ops<&T::member>().
//
// Each supported member type V has a value_traits<V> with the six operations the codec needs
// (see field_ops in <bt/synapse_descriptor.hpp>). Scalars, strings, optionals and vectors are
// handled directly, without a JSON round trip, because to_headers and the body hash run per
// message. The semantics follow what the Python class holds after pydantic validation
// (PROTOCOL 3.5): a double field holding 1 is the float 1.0 ("1.0" in str() and in JSON); an
// integer field rejects non-integral numbers, strings and booleans.
//
// Supported member types:
//   integral types (not bool)       Python int      placeholder "MA=="
//   float, double                   Python float    "MC4w"
//   bool                            Python bool     "ZmFsc2U="
//   std::string                     Python str      "IiI="
//   std::optional<X>                Optional[X]     X's, only when not None
//   std::vector<X>                  list[X]         "W10="
//   bt::json                        Any             by the runtime JSON type
//   any type with to_json/from_json (nlohmann ADL)  by the runtime type of its JSON
//
// For the last kind, declare the conversions for bt::json (nlohmann::ordered_json) to keep the
// key order Python would use; BT_DEFINE_TYPE_INTRUSIVE below does that. Types whose to_json
// only targets nlohmann::json (NLOHMANN_DEFINE_TYPE_INTRUSIVE in nlohmann 3.11.2) work too, but
// their object keys come out sorted, which changes the body text and the str() used by the
// body hash.
#pragma once

#include <bt/detail/text.hpp>
#include <bt/json.hpp>
#include <bt/python_str.hpp>
#include <bt/synapse_descriptor.hpp>

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

/// Like NLOHMANN_DEFINE_TYPE_INTRUSIVE, but the generated to_json/from_json accept every
/// nlohmann basic_json, including bt::json, so nested objects keep their declaration order.
#define BT_DEFINE_TYPE_INTRUSIVE(Type, ...)                                            \
  template <class BasicJsonType>                                                       \
  friend void to_json(BasicJsonType& nlohmann_json_j, const Type& nlohmann_json_t) {   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))           \
  }                                                                                    \
  template <class BasicJsonType>                                                       \
  friend void from_json(const BasicJsonType& nlohmann_json_j, Type& nlohmann_json_t) { \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM, __VA_ARGS__))         \
  }

namespace bt::detail {

/// The bt_header_input_obj_ placeholders of PROTOCOL 2.3: base64 of json.dumps(type(v)()).
inline constexpr std::string_view placeholder_int = "MA==";       // 0
inline constexpr std::string_view placeholder_float = "MC4w";     // 0.0
inline constexpr std::string_view placeholder_bool = "ZmFsc2U=";  // false
inline constexpr std::string_view placeholder_str = "IiI=";       // ""
inline constexpr std::string_view placeholder_list = "W10=";      // []
inline constexpr std::string_view placeholder_dict = "e30=";      // {}

/// Placeholder for the runtime type of a JSON value (null has none; it is never asked).
std::string_view placeholder_for(const json& value) noexcept;

/// Human-readable JSON type for `why` messages ("string", "array", "boolean", ...).
std::string_view json_type_name(const json& value) noexcept;

template <class V>
struct value_traits;

template <class V>
concept integer_value = std::integral<V> && !std::same_as<V, bool>;

template <integer_value V>
struct value_traits<V> {
  static void to_json(const V& v, json& out) { out = v; }
  static bool from_json(const json& in, V& v, std::string& why) {
    using lim = std::numeric_limits<V>;
    if (in.is_number_unsigned()) {
      const auto u = in.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(lim::max())) return out_of_range(why);
      v = static_cast<V>(u);
      return true;
    }
    if (in.is_number_integer()) {
      const auto i = in.get<std::int64_t>();
      if constexpr (std::is_signed_v<V>) {
        if (i < static_cast<std::int64_t>(lim::min()) || i > static_cast<std::int64_t>(lim::max()))
          return out_of_range(why);
      } else {
        if (i < 0 || static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(lim::max()))
          return out_of_range(why);
      }
      v = static_cast<V>(i);
      return true;
    }
    if (in.is_number_float()) {
      // pydantic (lax mode) accepts a float with no fractional part, e.g. 3.0.
      const double d = in.get<double>();
      if (!std::isfinite(d) || d != std::trunc(d)) {
        why = "expected an integer, got a non-integral number";
        return false;
      }
      const double hi = std::ldexp(1.0, lim::digits);  // exclusive bound, exact in double
      const double lo = std::is_signed_v<V> ? -hi : 0.0;
      if (d < lo || d >= hi) return out_of_range(why);
      v = static_cast<V>(d);
      return true;
    }
    why = std::string("expected an integer, got ") + std::string(json_type_name(in));
    return false;
  }
  static bool is_null(const V&) noexcept { return false; }
  static std::string_view placeholder(const V&) noexcept { return placeholder_int; }
  static void str(const V& v, std::string& out) { bt::detail::append_int(v, out); }
  static void repr(const V& v, std::string& out) { str(v, out); }

 private:
  static bool out_of_range(std::string& why) {
    why = "integer out of range";
    return false;
  }
};

template <std::floating_point V>
struct value_traits<V> {
  static void to_json(const V& v, json& out) { out = static_cast<double>(v); }
  static bool from_json(const json& in, V& v, std::string& why) {
    if (in.is_number()) {  // Python float(int) for integers
      v = static_cast<V>(in.get<double>());
      return true;
    }
    why = std::string("expected a number, got ") + std::string(json_type_name(in));
    return false;
  }
  static bool is_null(const V&) noexcept { return false; }
  static std::string_view placeholder(const V&) noexcept { return placeholder_float; }
  static void str(const V& v, std::string& out) {
    append_python_float(static_cast<double>(v), out);
  }
  static void repr(const V& v, std::string& out) { str(v, out); }
};

template <>
struct value_traits<bool> {
  static void to_json(const bool& v, json& out) { out = v; }
  static bool from_json(const json& in, bool& v, std::string& why) {
    if (in.is_boolean()) {
      v = in.get<bool>();
      return true;
    }
    why = std::string("expected a boolean, got ") + std::string(json_type_name(in));
    return false;
  }
  static bool is_null(const bool&) noexcept { return false; }
  static std::string_view placeholder(const bool&) noexcept { return placeholder_bool; }
  static void str(const bool& v, std::string& out) { out += v ? "True" : "False"; }
  static void repr(const bool& v, std::string& out) { str(v, out); }
};

template <>
struct value_traits<std::string> {
  static void to_json(const std::string& v, json& out) { out = v; }
  static bool from_json(const json& in, std::string& v, std::string& why) {
    if (in.is_string()) {
      v = in.get_ref<const std::string&>();
      return true;
    }
    why = std::string("expected a string, got ") + std::string(json_type_name(in));
    return false;
  }
  static bool is_null(const std::string&) noexcept { return false; }
  static std::string_view placeholder(const std::string&) noexcept { return placeholder_str; }
  static void str(const std::string& v, std::string& out) { append_python_text(v, out); }
  static void repr(const std::string& v, std::string& out) { append_python_repr(v, out); }
};

template <>
struct value_traits<json> {
  static void to_json(const json& v, json& out) { out = v; }
  static bool from_json(const json& in, json& v, std::string&) {
    v = in;
    return true;
  }
  static bool is_null(const json& v) noexcept { return v.is_null(); }
  static std::string_view placeholder(const json& v) noexcept { return placeholder_for(v); }
  static void str(const json& v, std::string& out) { append_python_str(v, out); }
  static void repr(const json& v, std::string& out) { append_python_value_repr(v, out); }
};

template <class X>
struct value_traits<std::optional<X>> {
  using inner = value_traits<X>;
  static void to_json(const std::optional<X>& v, json& out) {
    if (v)
      inner::to_json(*v, out);
    else
      out = nullptr;
  }
  static bool from_json(const json& in, std::optional<X>& v, std::string& why) {
    if (in.is_null()) {
      v.reset();
      return true;
    }
    X tmp{};
    if (!inner::from_json(in, tmp, why)) return false;
    v = std::move(tmp);
    return true;
  }
  static bool is_null(const std::optional<X>& v) noexcept { return !v || inner::is_null(*v); }
  static std::string_view placeholder(const std::optional<X>& v) noexcept {
    return v ? inner::placeholder(*v) : placeholder_int;  // never asked for None
  }
  static void str(const std::optional<X>& v, std::string& out) {
    if (v)
      inner::str(*v, out);
    else
      out += "None";
  }
  static void repr(const std::optional<X>& v, std::string& out) {
    if (v)
      inner::repr(*v, out);
    else
      out += "None";
  }
};

template <class X, class A>
struct value_traits<std::vector<X, A>> {
  using inner = value_traits<X>;
  static void to_json(const std::vector<X, A>& v, json& out) {
    out = json::array();
    auto& arr = out.get_ref<json::array_t&>();
    arr.reserve(v.size());
    for (const auto& e : v) {
      json item;
      inner::to_json(e, item);
      arr.push_back(std::move(item));
    }
  }
  static bool from_json(const json& in, std::vector<X, A>& v, std::string& why) {
    if (!in.is_array()) {
      why = std::string("expected an array, got ") + std::string(json_type_name(in));
      return false;
    }
    std::vector<X, A> tmp;
    tmp.reserve(in.size());
    std::size_t i = 0;
    for (const auto& e : in) {
      X item{};
      if (!inner::from_json(e, item, why)) {
        why = "[" + std::to_string(i) + "]: " + why;
        return false;
      }
      tmp.push_back(std::move(item));
      ++i;
    }
    v = std::move(tmp);
    return true;
  }
  static bool is_null(const std::vector<X, A>&) noexcept { return false; }
  static std::string_view placeholder(const std::vector<X, A>&) noexcept {
    return placeholder_list;
  }
  static void str(const std::vector<X, A>& v, std::string& out) {
    out += '[';
    bool first = true;
    for (const auto& e : v) {
      if (!first) out += ", ";
      first = false;
      inner::repr(e, out);
    }
    out += ']';
  }
  static void repr(const std::vector<X, A>& v, std::string& out) { str(v, out); }
};

/// Types convertible with nlohmann's ADL to_json/from_json, for bt::json directly or through
/// nlohmann::json.
template <class V>
concept ordered_json_convertible = requires(bt::json& j, const V& v) {
  nlohmann::adl_serializer<V>::to_json(j, v);
};
template <class V>
concept plain_json_convertible = requires(nlohmann::json& j, const V& v) {
  nlohmann::adl_serializer<V>::to_json(j, v);
};

template <class V>
struct value_traits {
  static_assert(ordered_json_convertible<V> || plain_json_convertible<V>,
                "bt::field: unsupported member type; give it nlohmann to_json/from_json "
                "(e.g. BT_DEFINE_TYPE_INTRUSIVE) or use bt::json");

  static void to_json(const V& v, json& out) {
    if constexpr (ordered_json_convertible<V>) {
      out = nullptr;  // to_json implementations add keys to what they are given
      nlohmann::adl_serializer<V>::to_json(out, v);
    } else {
      nlohmann::json tmp;
      nlohmann::adl_serializer<V>::to_json(tmp, v);
      out = json(tmp);
    }
  }
  static bool from_json(const json& in, V& v, std::string& why) {
    try {
      if constexpr (ordered_json_convertible<V>) {
        v = in.get<V>();
      } else {
        v = nlohmann::json(in).get<V>();
      }
      return true;
    } catch (const std::exception& e) {
      why = e.what();
      return false;
    }
  }
  static bool is_null(const V& v) {
    json j;
    to_json(v, j);
    return j.is_null();
  }
  static std::string_view placeholder(const V& v) {
    json j;
    to_json(v, j);
    return placeholder_for(j);
  }
  static void str(const V& v, std::string& out) {
    json j;
    to_json(v, j);
    append_python_str(j, out);
  }
  static void repr(const V& v, std::string& out) {
    json j;
    to_json(v, j);
    append_python_value_repr(j, out);
  }
};

template <auto Member>
const field_ops& member_field_ops() {
  using traits = member_pointer_traits<decltype(Member)>;
  using C = typename traits::class_type;
  using V = typename traits::value_type;
  using vt = value_traits<V>;
  static_assert(std::is_base_of_v<synapse, C>,
                "bt::field<&T::member>: T must derive from bt::synapse");
  static constexpr field_ops ops{
      .to_json = [](const synapse& s, const field_descriptor&,
                    json& out) { vt::to_json(static_cast<const C&>(s).*Member, out); },
      .from_json = [](synapse& s, const field_descriptor&, const json& in,
                      std::string& why) -> bool {
        try {
          return vt::from_json(in, static_cast<C&>(s).*Member, why);
        } catch (const std::exception& e) {  // e.g. bad_alloc: never escape a decoder
          why = e.what();
          return false;
        }
      },
      .is_null = [](const synapse& s, const field_descriptor&) -> bool {
        return vt::is_null(static_cast<const C&>(s).*Member);
      },
      .placeholder = [](const synapse& s, const field_descriptor&) -> std::string_view {
        return vt::placeholder(static_cast<const C&>(s).*Member);
      },
      .python_str = [](const synapse& s, const field_descriptor&,
                       std::string& out) { vt::str(static_cast<const C&>(s).*Member, out); },
      .assign =
          [](const synapse& from, synapse& to, const field_descriptor&) {
            static_cast<C&>(to).*Member = static_cast<const C&>(from).*Member;
          },
      .text = [](const synapse& s, const field_descriptor&) -> const std::string* {
        const V& v = static_cast<const C&>(s).*Member;
        if constexpr (std::is_same_v<V, std::string>) {
          return &v;
        } else if constexpr (std::is_same_v<V, std::optional<std::string>>) {
          return v ? &*v : nullptr;
        } else {
          return nullptr;
        }
      },
      .text_slot = [](synapse& s, const field_descriptor&) -> std::string* {
        V& v = static_cast<C&>(s).*Member;
        if constexpr (std::is_same_v<V, std::string>) {
          return &v;
        } else if constexpr (std::is_same_v<V, std::optional<std::string>>) {
          return &v.emplace();
        } else {
          return nullptr;
        }
      },
  };
  return ops;
}

}  // namespace bt::detail
