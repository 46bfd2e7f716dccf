// bt::dynamic_synapse: a synapse whose fields are known only at run time (tools such as
// `bt-dendrite encode`/`query`, proxies, tests). Values are bt::json in descriptor order.
#pragma once

#include <bt/synapse.hpp>

#include <memory>
#include <string>
#include <vector>

namespace bt {

struct dynamic_field_spec {
  std::string name;
  field_kind kind = field_kind::optional;
};

/// Builds a descriptor for a dynamic type. Build it once per type and share it: every
/// dynamic_synapse of that type points at the same descriptor.
/// Fails (invalid_json) on duplicate names, a hash field that is not a field, or a field named
/// like a base field.
std::shared_ptr<const synapse_descriptor> make_dynamic_descriptor(
    std::string name, const std::vector<dynamic_field_spec>& fields,
    const std::vector<std::string>& hash_fields, error& err);

struct dynamic_synapse : synapse {
  std::shared_ptr<const synapse_descriptor> type;  ///< never null for a usable object
  std::vector<json> values;                        ///< one per type->fields(), JSON null = None

  dynamic_synapse() = default;
  explicit dynamic_synapse(std::shared_ptr<const synapse_descriptor> t);

  /// Value of a field by name; nullptr when the type has no such field.
  json* get(std::string_view field_name);
  const json* get(std::string_view field_name) const;
};

inline const synapse_descriptor& descriptor_for(const dynamic_synapse& s) {
  return *s.type;
}

}  // namespace bt
