// Dynamic synapses: field values are bt::json in descriptor order, so the field operations work
// on values[field.index] and take the placeholder from the value's runtime JSON type, exactly as
// Python takes it from type(value) (PROTOCOL 2.3).
#include <bt/dynamic_synapse.hpp>

#include "codec_detail.hpp"

#include <new>

namespace bt {
namespace detail {

std::string_view placeholder_for(const json& value) noexcept {
  switch (value.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return placeholder_int;
    case json::value_t::number_float:
      return placeholder_float;
    case json::value_t::boolean:
      return placeholder_bool;
    case json::value_t::string:
      return placeholder_str;
    case json::value_t::object:
      return placeholder_dict;
    case json::value_t::array:
    case json::value_t::binary:  // never from JSON text; a sequence is the closest Python type
    case json::value_t::null:    // never asked: None gets no placeholder
    case json::value_t::discarded:
      break;
  }
  return placeholder_list;
}

std::string_view json_type_name(const json& value) noexcept {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    case json::value_t::binary:
      return "binary";
    case json::value_t::discarded:
      return "discarded";
  }
  return "unknown";
}

const json null_value = nullptr;

namespace {

const json& value_of(const synapse& s, const field_descriptor& f) noexcept {
  const auto& d = static_cast<const dynamic_synapse&>(s);
  return f.index < d.values.size() ? d.values[f.index] : null_value;
}

json& value_of(synapse& s, const field_descriptor& f) {
  auto& d = static_cast<dynamic_synapse&>(s);
  if (f.index >= d.values.size()) d.values.resize(f.index + 1);
  return d.values[f.index];
}

constexpr field_ops dynamic_ops{
    .to_json = [](const synapse& s, const field_descriptor& f, json& out) { out = value_of(s, f); },
    .from_json = [](synapse& s, const field_descriptor& f, const json& in,
                    std::string& why) -> bool {
      try {
        value_of(s, f) = in;  // untyped: any JSON value is accepted as is
        return true;
      } catch (const std::bad_alloc& e) {
        why = e.what();
        return false;
      }
    },
    .is_null = [](const synapse& s, const field_descriptor& f) -> bool {
      return value_of(s, f).is_null();
    },
    .placeholder = [](const synapse& s, const field_descriptor& f) -> std::string_view {
      return placeholder_for(value_of(s, f));
    },
    .python_str = [](const synapse& s, const field_descriptor& f,
                     std::string& out) { append_python_str(value_of(s, f), out); },
    .assign = [](const synapse& from, synapse& to,
                 const field_descriptor& f) { value_of(to, f) = value_of(from, f); },
    .text = [](const synapse& s, const field_descriptor& f) -> const std::string* {
      const json& v = value_of(s, f);
      return v.is_string() ? &v.get_ref<const std::string&>() : nullptr;
    },
    .text_slot = [](synapse&, const field_descriptor&) -> std::string* { return nullptr; },
};

}  // namespace
}  // namespace detail

std::shared_ptr<const synapse_descriptor> make_dynamic_descriptor(
    std::string name, const std::vector<dynamic_field_spec>& fields,
    const std::vector<std::string>& hash_fields, error& err) {
  err = {};
  std::vector<std::string_view> names;
  names.reserve(fields.size());
  for (const auto& f : fields) names.push_back(f.name);
  std::vector<std::string_view> hashes(hash_fields.begin(), hash_fields.end());
  if ((err = detail::check_schema(name, names, hashes))) return nullptr;

  std::vector<field_descriptor> descs;
  descs.reserve(fields.size());
  for (const auto& f : fields)
    descs.push_back(field_descriptor{.name = f.name,
                                     .kind = f.kind,
                                     .header_name = {},
                                     .index = 0,
                                     .ops = &detail::dynamic_ops});
  return std::make_shared<const synapse_descriptor>(std::move(name), std::move(descs), hashes);
}

dynamic_synapse::dynamic_synapse(std::shared_ptr<const synapse_descriptor> t) : type(std::move(t)) {
  if (type) values.assign(type->fields().size(), json(nullptr));
}

json* dynamic_synapse::get(std::string_view field_name) {
  const auto* f = type ? type->find(field_name) : nullptr;
  if (f == nullptr) return nullptr;
  if (f->index >= values.size()) values.resize(type->fields().size());
  return &values[f->index];
}

const json* dynamic_synapse::get(std::string_view field_name) const {
  const auto* f = type ? type->find(field_name) : nullptr;
  if (f == nullptr) return nullptr;
  return f->index < values.size() ? &values[f->index] : &detail::null_value;
}

}  // namespace bt
