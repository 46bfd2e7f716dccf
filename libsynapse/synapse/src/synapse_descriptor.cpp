// The per-type descriptor (PROTOCOL 2.9, D10): built once per synapse type, then only
// read by the codec. Everything derivable from the declaration is precomputed here: the route,
// lower-case bt_header_input_obj_ names, hash-field indices and, for types without hash fields,
// the constant body hash SHA3-256("").
#include <bt/synapse_descriptor.hpp>

#include <bt/sha3.hpp>

#include "codec_detail.hpp"

#include <stdexcept>

namespace bt {

synapse_schema<synapse> synapse::schema() {
  return {.name = "Synapse", .fields = {}, .hash_fields = {}};
}

namespace detail {
namespace {

constexpr auto base_member_names = member_names(synapse_members);

}  // namespace

error check_schema(std::string_view name, const std::vector<std::string_view>& field_names,
                   const std::vector<std::string_view>& hash_fields) {
  // Names end up in the route and in header names: is_identifier's rule (BT_SYNAPSE checks a
  // literal name at compile time; a dynamic type's name arrives here).
  if (!is_identifier(name))
    return make_error(codec_errc::invalid_json, "synapse.name",
                      "not an ASCII identifier of 1 to 128 characters: " + preview(name));
  for (std::size_t i = 0; i < field_names.size(); ++i) {
    const auto f = field_names[i];
    if (!is_identifier(f))
      return make_error(
          codec_errc::invalid_json, "synapse.fields",
          "field name is not an ASCII identifier of 1 to 128 characters: " + preview(f));
    if (f == synapse_name_key || index_of(base_member_names, f) >= 0)
      return make_error(codec_errc::invalid_json, "synapse.fields." + std::string(f),
                        "the name of a base Synapse field");
    for (std::size_t j = 0; j < i; ++j)
      if (field_names[j] == f)
        return make_error(codec_errc::invalid_json, "synapse.fields." + std::string(f),
                          "duplicate field name");
  }
  for (auto h : hash_fields) {
    bool found = false;
    for (auto f : field_names) found |= f == h;
    if (!found)
      return make_error(codec_errc::invalid_json, "synapse.required_hash_fields",
                        "not a field of the type: " + preview(h));
  }
  return {};
}

}  // namespace detail

synapse_descriptor::synapse_descriptor(std::string name, std::vector<field_descriptor> fields,
                                       const std::vector<std::string_view>& hash_fields)
    : name_(std::move(name)), fields_(std::move(fields)) {
  std::vector<std::string_view> names;
  names.reserve(fields_.size());
  for (const auto& f : fields_) names.push_back(f.name);
  if (auto err = detail::check_schema(name_, names, hash_fields))
    throw std::invalid_argument("bt::synapse_descriptor: " + err.message());

  route_ = "/" + name_;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    auto& f = fields_[i];
    if (f.ops == nullptr)
      throw std::invalid_argument("bt::synapse_descriptor: field " + f.name + " has no operations");
    f.index = i;
    // Emitted names are lower case (PROTOCOL 2.7, D21); receivers match case-insensitively.
    f.header_name = "bt_header_input_obj_" + detail::to_lower(f.name);
  }
  hash_fields_.reserve(hash_fields.size());
  for (auto h : hash_fields) hash_fields_.push_back(find(h)->index);
  if (hash_fields_.empty()) constant_body_hash_ = sha3_256_hex("");
}

const field_descriptor* synapse_descriptor::find(std::string_view field_name) const noexcept {
  for (const auto& f : fields_)
    if (f.name == field_name) return &f;
  return nullptr;
}

}  // namespace bt
