// bt::synapse_descriptor: everything the codec needs to know about one synapse type, computed
// once per type and shared by to_headers, from_headers, the JSON body codec and the body hash
// (the structural form of the per-class schema cache Bittensor's Python lost; PROTOCOL 2.9).
#pragma once

#include <bt/codec_error.hpp>
#include <bt/json.hpp>
#include <bt/synapse.hpp>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bt {

/// Type-erased operations on one field of a synapse object. For typed synapses they are
/// generated from the member pointer (bt::field<&T::member>); dynamic synapses have their own.
/// `s` is always an object of the descriptor's type.
struct field_ops {
  /// The value as model_dump() would give it (typed: a double field dumps as a JSON float).
  void (*to_json)(const synapse& s, const field_descriptor& f, json& out);
  /// Assigns from untrusted JSON; on a type mismatch returns false and sets `why`
  /// (e.g. "expected an integer, got string"). Never throws.
  bool (*from_json)(synapse& s, const field_descriptor& f, const json& in, std::string& why);
  /// True when the value is Python's None (an empty optional / JSON null).
  bool (*is_null)(const synapse& s, const field_descriptor& f);
  /// The bt_header_input_obj_ placeholder for the value's runtime type (PROTOCOL 2.3):
  /// "MA==", "IiI=", "W10=", "e30=", "MC4w" or "ZmFsc2U=". Only called when !is_null.
  std::string_view (*placeholder)(const synapse& s, const field_descriptor& f);
  /// Appends CPython str() of the value (PROTOCOL 3.3) for the body hash.
  void (*python_str)(const synapse& s, const field_descriptor& f, std::string& out);
  /// Copies this field from `from` to `to` (same type).
  void (*assign)(const synapse& from, synapse& to, const field_descriptor& f);
  /// The value when it is a string (a std::string member, an engaged std::optional<std::string>,
  /// a dynamic field holding a JSON string), else null: the JSON writer then writes it without
  /// first copying it into a bt::json (a large text field costs one copy less).
  const std::string* (*text)(const synapse& s, const field_descriptor& f);
  /// Where a string value is stored (a std::string member; a std::optional<std::string> member,
  /// engaged), else null: the JSON reader then moves a decoded string there instead of copying.
  std::string* (*text_slot)(synapse& s, const field_descriptor& f);
};

struct field_descriptor {
  std::string name;
  field_kind kind = field_kind::optional;
  std::string header_name;  ///< "bt_header_input_obj_" + name, precomputed
  std::size_t index = 0;    ///< position in synapse_descriptor::fields
  const field_ops* ops = nullptr;

  bool required() const noexcept { return kind == field_kind::required; }
};

/// Descriptor of one synapse type. Immutable once built; safe to share between threads.
class synapse_descriptor {
 public:
  synapse_descriptor(std::string name, std::vector<field_descriptor> fields,
                     const std::vector<std::string_view>& hash_fields);

  const std::string& name() const noexcept { return name_; }
  const std::string& route() const noexcept { return route_; }  ///< "/" + name
  const std::vector<field_descriptor>& fields() const noexcept { return fields_; }
  /// Indices into fields(), in required_hash_fields order.
  const std::vector<std::size_t>& hash_fields() const noexcept { return hash_fields_; }
  /// Body hash when there are no hash fields (SHA3-256 of ""), or empty when there are some.
  const std::string& constant_body_hash() const noexcept { return constant_body_hash_; }
  const field_descriptor* find(std::string_view field_name) const noexcept;

 private:
  std::string name_;
  std::string route_;
  std::vector<field_descriptor> fields_;
  std::vector<std::size_t> hash_fields_;
  std::string constant_body_hash_;
};

namespace detail {
template <class T>
struct member_pointer_traits;
template <class C, class V>
struct member_pointer_traits<V C::*> {
  using class_type = C;
  using value_type = V;
};
/// Field operations for a member of type V (int, double, bool, std::string, std::optional<X>,
/// std::vector<X>, bt::json, or any type with nlohmann to_json/from_json). Defined in
/// <bt/detail/field_traits.hpp>.
template <auto Member>
const field_ops& member_field_ops();
}  // namespace detail

/// Declares one field of a typed synapse; see <bt/synapse.hpp>.
template <auto Member>
field_descriptor field(std::string_view name, field_kind kind = field_kind::optional) {
  static_assert(std::is_member_object_pointer_v<decltype(Member)>,
                "bt::field<&T::member>: Member must point to a data member");
  return field_descriptor{.name = std::string(name),
                          .kind = kind,
                          .header_name = "bt_header_input_obj_" + std::string(name),
                          .index = 0,
                          .ops = &detail::member_field_ops<Member>()};
}

/// Marks a field of the short form (BT_FIELD) as one of required_hash_fields.
struct hashed_t {
  explicit constexpr hashed_t() = default;
};
inline constexpr hashed_t hashed{};

namespace detail {
/// The rule for the name of a synapse type and of its fields: an ASCII identifier of 1 to 128
/// characters (letters, digits and '_', not starting with a digit). A type's name is the class
/// name a Python peer declares and the route ("/" + name); a field's name is a Python attribute
/// and part of a header name (bt_header_input_obj_<field>). Checked at compile time by
/// BT_SYNAPSE and when a descriptor is built.
constexpr bool is_identifier(std::string_view s) noexcept {
  if (s.empty() || s.size() > 128 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

/// One field of the short form: its descriptor and whether it is hashed. `name` is a string
/// literal (the stringified member), so views of it stay valid.
struct field_spec {
  field_descriptor field;
  std::string_view name;
  bool hashed = false;
};

template <auto Member, class... Markers>
field_spec field_spec_of(std::string_view name, Markers... markers) {
  static_assert(((std::is_same_v<Markers, field_kind> || std::is_same_v<Markers, hashed_t>)&&...),
                "BT_FIELD(member, markers...): the markers are bt::required and bt::hashed");
  field_kind kind = field_kind::optional;
  bool is_hashed = false;
  [[maybe_unused]] const auto mark = [&](auto m) {  // unused when there are no markers
    if constexpr (std::is_same_v<decltype(m), hashed_t>)
      is_hashed = true;
    else
      kind = m;
  };
  (mark(markers), ...);
  return {.field = field<Member>(name, kind), .name = name, .hashed = is_hashed};
}

/// The schema of the short form: fields in declaration order, the hashed ones as
/// required_hash_fields in the same order.
template <class T>
synapse_schema<T> schema_of(std::string_view name, std::initializer_list<field_spec> specs) {
  synapse_schema<T> s{.name = name, .fields = {}, .hash_fields = {}};
  s.fields.reserve(specs.size());
  for (const auto& f : specs) {
    s.fields.push_back(f.field);
    if (f.hashed) s.hash_fields.push_back(f.name);
  }
  return s;
}
}  // namespace detail

/// The short form of a synapse declaration, inside the class: each field is named once, the wire
/// name being the member's name (see <bt/synapse.hpp>):
///
///   BT_SYNAPSE(echo, "Echo", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(reply))
///
/// defines `static bt::synapse_schema<echo> schema()`. Markers: bt::required (Python field
/// without a default) and bt::hashed (in required_hash_fields; hashing follows declaration order).
/// Use the long form (bt::field<&T::member>("wire_name")) when a wire name differs from the member
/// name or the hashing order differs from the declaration order.
#define BT_SYNAPSE(Type, Name, ...)                                                        \
  static_assert(                                                                           \
      ::bt::detail::is_identifier(Name),                                                   \
      "BT_SYNAPSE(Type, Name, ...): Name must be an ASCII identifier of 1 to 128 "         \
      "characters (letters, digits and '_', not starting with a digit), as a Python "      \
      "class name and the route /Name are; e.g. \"Summarize_v2\", not \"Sum-marize v2\""); \
  static ::bt::synapse_schema<Type> schema() {                                             \
    using bt_synapse_self_ [[maybe_unused]] = Type;                                        \
    return ::bt::detail::schema_of<Type>(Name, {__VA_ARGS__});                             \
  }
/// One field of BT_SYNAPSE: the member, then optional markers (bt::required, bt::hashed).
#define BT_FIELD(member, ...) \
  ::bt::detail::field_spec_of<&bt_synapse_self_::member>(#member __VA_OPT__(, ) __VA_ARGS__)

/// The descriptor of synapse type T, built from T::schema() on first use (thread-safe).
template <class T>
const synapse_descriptor& descriptor_of() {
  static_assert(std::is_base_of_v<synapse, T>, "a synapse type derives from bt::synapse");
  static_assert(std::is_same_v<decltype(T::schema()), synapse_schema<T>>,
                "T must declare its own `static bt::synapse_schema<T> schema()`");
  static const synapse_descriptor d = [] {
    auto s = T::schema();
    return synapse_descriptor(std::string(s.name), std::move(s.fields), s.hash_fields);
  }();
  return d;
}

/// The descriptor of an object: its static type's for typed synapses; dynamic_synapse overloads it.
template <class T>
requires std::is_base_of_v<synapse, T>
const synapse_descriptor& descriptor_for(const T&) {
  return descriptor_of<T>();
}

}  // namespace bt

#include <bt/detail/field_traits.hpp>
