// Runtime metadata V14/V15/V16 (frame-metadata's RuntimeMetadataPrefixed), read strictly with
// bt::scale_reader. The layouts follow frame-metadata's v14.rs, v15.rs and v16.rs and
// scale-info's portable registry; everything is read, only what runtime_metadata keeps is
// stored.
#include <bt/chain/metadata.hpp>
#include <bt/chain/scale_reader.hpp>

#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace bt {
namespace {

constexpr std::uint32_t meta_magic = 0x6174656d;  // "meta", little-endian

// The smallest encodings of the elements whose vectors are kept: a reservation is for no more
// elements than the bytes left could hold (scale_reader::reservable), so no reservation
// exceeds a fixed multiple of the input, whatever count the metadata claims. A type_field: name
// Option, type id, type_name Option, docs length (one byte each); a type_variant: name, fields
// length, index, docs length; a type: id, path length, params length, TypeDef tag and at least one
// byte of it, docs length; a storage entry: name, modifier, type tag, value type, default length,
// docs length; a pallet (V14): name, the storage, calls, event and error Options, constants length,
// index; an extension: identifier, two type ids.
constexpr std::size_t field_min_bytes = 4;
constexpr std::size_t variant_min_bytes = 4;
constexpr std::size_t type_min_bytes = 6;
constexpr std::size_t storage_entry_min_bytes = 6;
constexpr std::size_t pallet_min_bytes = 7;
constexpr std::size_t extension_min_bytes = 3;

[[noreturn]] void bad(scale_reader& r, std::string field, std::string problem) {
  throw chain_decode_error(chain_errc::bad_metadata, std::move(field), std::move(problem),
                           r.offset());
}

std::uint32_t type_id(scale_reader& r, std::string_view field) {
  return r.compact_u32(field);
}

std::vector<std::string> strings(scale_reader& r, std::string_view field) {
  const std::size_t n = r.length(field);
  std::vector<std::string> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(r.text(field));
  return out;
}

void skip_strings(scale_reader& r, std::string_view field) {
  const std::size_t n = r.length(field);
  for (std::size_t i = 0; i < n; ++i) r.text(field);
}

std::optional<std::string> opt_text(scale_reader& r, std::string_view field) {
  if (!r.option(field)) return std::nullopt;
  return r.text(field);
}

std::vector<type_field> fields(scale_reader& r, std::string_view where) {
  const std::size_t n = r.length(where);
  std::vector<type_field> out;
  out.reserve(r.reservable(n, field_min_bytes));
  for (std::size_t i = 0; i < n; ++i) {
    // Read whole before it is appended: the vector grows past the reservation only for
    // elements that are actually there.
    type_field f;
    f.name = opt_text(r, "field.name");
    f.type = type_id(r, "field.ty");
    f.type_name = opt_text(r, "field.type_name");
    skip_strings(r, "field.docs");
    out.push_back(std::move(f));
  }
  return out;
}

portable_type read_type(scale_reader& r) {
  portable_type t;
  t.path = strings(r, "type.path");
  const std::size_t params = r.length("type.type_params");
  for (std::size_t i = 0; i < params; ++i) {
    r.text("type_param.name");
    if (r.option("type_param.ty")) type_id(r, "type_param.ty");
  }
  const std::size_t def_offset = r.offset();
  const std::uint8_t tag = r.u8("type.type_def");
  switch (tag) {
    case 0:
      t.shape = portable_type::kind::composite;
      t.fields = fields(r, "composite.fields");
      break;
    case 1: {
      t.shape = portable_type::kind::variant;
      const std::size_t n = r.length("variant.variants");
      t.variants.reserve(r.reservable(n, variant_min_bytes));
      for (std::size_t i = 0; i < n; ++i) {
        type_variant v;
        v.name = r.text("variant.name");
        v.fields = fields(r, "variant.fields");
        v.index = r.u8("variant.index");
        skip_strings(r, "variant.docs");
        t.variants.push_back(std::move(v));
      }
      break;
    }
    case 2:
      t.shape = portable_type::kind::sequence;
      t.element = type_id(r, "sequence.type_param");
      break;
    case 3:
      t.shape = portable_type::kind::array;
      t.array_length = r.u32("array.len");
      t.element = type_id(r, "array.type_param");
      break;
    case 4: {
      t.shape = portable_type::kind::tuple;
      const std::size_t n = r.length("tuple.fields");
      t.tuple.reserve(n);
      for (std::size_t i = 0; i < n; ++i) t.tuple.push_back(type_id(r, "tuple.fields"));
      break;
    }
    case 5: {
      t.shape = portable_type::kind::primitive;
      const std::uint8_t p = r.u8("primitive");
      if (p > static_cast<std::uint8_t>(scale_primitive::i256))
        throw chain_decode_error(chain_errc::bad_metadata, "primitive",
                                 "unknown primitive " + std::to_string(p), r.offset() - 1);
      t.primitive = static_cast<scale_primitive>(p);
      break;
    }
    case 6:
      t.shape = portable_type::kind::compact;
      t.element = type_id(r, "compact.type_param");
      break;
    case 7:
      t.shape = portable_type::kind::bit_sequence;
      t.element = type_id(r, "bit_sequence.bit_store_type");
      t.bit_order = type_id(r, "bit_sequence.bit_order_type");
      break;
    default:
      throw chain_decode_error(chain_errc::bad_metadata, "type.type_def",
                               "unknown TypeDef tag " + std::to_string(tag), def_offset);
  }
  skip_strings(r, "type.docs");
  return t;
}

std::vector<portable_type> read_registry(scale_reader& r) {
  const std::size_t n = r.length("types");
  std::vector<portable_type> out;
  out.reserve(r.reservable(n, type_min_bytes));
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = r.offset();
    const std::uint32_t id = type_id(r, "types.id");
    if (id != i)
      throw chain_decode_error(chain_errc::bad_metadata, "types[" + std::to_string(i) + "].id",
                               "type ids must be 0..n-1 in order, found " + std::to_string(id), at);
    try {
      out.push_back(read_type(r));
    } catch (const chain_decode_error& e) {
      throw e.with_prefix("types[" + std::to_string(i) + "]");
    }
  }
  return out;
}

// V16's deprecation notes (ItemDeprecationInfo; VariantDeprecationInfo starts at index 1).
void skip_item_deprecation(scale_reader& r) {
  const std::size_t at = r.offset();
  switch (r.u8("deprecation_info")) {
    case 0:
    case 1:
      return;
    case 2:
      r.text("deprecation_info.note");
      opt_text(r, "deprecation_info.since");
      return;
    default:
      throw chain_decode_error(chain_errc::bad_metadata, "deprecation_info",
                               "unknown ItemDeprecationInfo tag", at);
  }
}

void skip_enum_deprecation(scale_reader& r) {
  const std::size_t n = r.length("enum_deprecation_info");
  for (std::size_t i = 0; i < n; ++i) {
    r.u8("enum_deprecation_info.variant");
    const std::size_t at = r.offset();
    switch (r.u8("enum_deprecation_info.info")) {
      case 1:
        break;
      case 2:
        r.text("deprecation_info.note");
        opt_text(r, "deprecation_info.since");
        break;
      default:
        throw chain_decode_error(chain_errc::bad_metadata, "enum_deprecation_info",
                                 "unknown VariantDeprecationInfo tag", at);
    }
  }
}

storage_entry read_storage_entry(scale_reader& r, int version) {
  storage_entry e;
  e.name = r.text("name");
  const std::size_t at = r.offset();
  const std::uint8_t modifier = r.u8("modifier");
  if (modifier > 1)
    throw chain_decode_error(chain_errc::bad_metadata, "modifier", "unknown modifier", at);
  e.optional = modifier == 0;
  const std::size_t ty_at = r.offset();
  switch (r.u8("ty")) {
    case 0:
      e.value_type = type_id(r, "ty.plain");
      break;
    case 1: {
      e.is_map = true;
      const std::size_t n = r.length("ty.hashers");
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t h_at = r.offset();
        const std::uint8_t h = r.u8("ty.hashers");
        if (h > static_cast<std::uint8_t>(storage_hasher::identity))
          throw chain_decode_error(chain_errc::bad_metadata, "ty.hashers", "unknown hasher", h_at);
        e.hashers.push_back(static_cast<storage_hasher>(h));
      }
      e.key_type = type_id(r, "ty.key");
      e.value_type = type_id(r, "ty.value");
      break;
    }
    default:
      throw chain_decode_error(chain_errc::bad_metadata, "ty", "unknown StorageEntryType", ty_at);
  }
  const std::size_t d = r.length("default");
  const auto def = r.bytes(d, "default");
  e.default_value.assign(def.begin(), def.end());
  skip_strings(r, "docs");
  if (version >= 16) skip_item_deprecation(r);
  return e;
}

// Function parameters of runtime APIs and view functions: {name, ty}.
void skip_params(scale_reader& r) {
  const std::size_t n = r.length("inputs");
  for (std::size_t i = 0; i < n; ++i) {
    r.text("inputs.name");
    type_id(r, "inputs.ty");
  }
}

pallet_metadata read_pallet(scale_reader& r, int version) {
  pallet_metadata p;
  p.name = r.text("name");
  if (r.option("storage")) {
    p.storage_prefix = r.text("storage.prefix");
    const std::size_t n = r.length("storage.entries");
    p.storage.reserve(r.reservable(n, storage_entry_min_bytes));
    for (std::size_t i = 0; i < n; ++i) {
      try {
        p.storage.push_back(read_storage_entry(r, version));
      } catch (const chain_decode_error& e) {
        throw e.with_prefix("storage.entries[" + std::to_string(i) + "]");
      }
    }
  }
  if (r.option("calls")) {
    p.call_type = type_id(r, "calls.ty");
    if (version >= 16) skip_enum_deprecation(r);
  }
  if (r.option("event")) {
    type_id(r, "event.ty");
    if (version >= 16) skip_enum_deprecation(r);
  }
  const std::size_t constants = r.length("constants");
  for (std::size_t i = 0; i < constants; ++i) {
    r.text("constants.name");
    type_id(r, "constants.ty");
    r.bytes(r.length("constants.value"), "constants.value");
    skip_strings(r, "constants.docs");
    if (version >= 16) skip_item_deprecation(r);
  }
  if (r.option("error")) {
    type_id(r, "error.ty");
    if (version >= 16) skip_enum_deprecation(r);
  }
  if (version >= 16) {
    const std::size_t assoc = r.length("associated_types");
    for (std::size_t i = 0; i < assoc; ++i) {
      r.text("associated_types.name");
      type_id(r, "associated_types.ty");
      skip_strings(r, "associated_types.docs");
    }
    const std::size_t views = r.length("view_functions");
    for (std::size_t i = 0; i < views; ++i) {
      r.bytes(32, "view_functions.id");
      r.text("view_functions.name");
      skip_params(r);
      type_id(r, "view_functions.output");
      skip_strings(r, "view_functions.docs");
      skip_item_deprecation(r);
    }
  }
  p.index = r.u8("index");
  if (version >= 15) skip_strings(r, "docs");
  if (version >= 16) skip_item_deprecation(r);
  return p;
}

std::vector<extension_metadata> read_extensions(scale_reader& r) {
  const std::size_t n = r.length("extensions");
  std::vector<extension_metadata> out;
  out.reserve(r.reservable(n, extension_min_bytes));
  for (std::size_t i = 0; i < n; ++i) {
    extension_metadata x;
    x.identifier = r.text("extension.identifier");
    x.extra_type = type_id(r, "extension.ty");
    x.implicit_type = type_id(r, "extension.implicit");
    out.push_back(std::move(x));
  }
  return out;
}

void read_extrinsic(scale_reader& r, int version, runtime_metadata& m) {
  if (version == 14) {
    const std::uint32_t ty = type_id(r, "ty");
    m.extrinsic_versions.push_back(r.u8("version"));
    m.extensions = read_extensions(r);
    (void)ty;  // the UncheckedExtrinsic type; V14 has no separate address/signature types
    return;
  }
  if (version == 15) {
    m.extrinsic_versions.push_back(r.u8("version"));
    m.address_type = type_id(r, "address_ty");
    type_id(r, "call_ty");
    m.signature_type = type_id(r, "signature_ty");
    type_id(r, "extra_ty");
    m.extensions = read_extensions(r);
    return;
  }
  // V16: versions, address/call/signature types, extension indices by extension version, then
  // all extensions.
  const std::size_t nv = r.length("versions");
  for (std::size_t i = 0; i < nv; ++i) m.extrinsic_versions.push_back(r.u8("versions"));
  m.address_type = type_id(r, "address_ty");
  type_id(r, "call_ty");
  m.signature_type = type_id(r, "signature_ty");
  const std::size_t nmap = r.length("transaction_extensions_by_version");
  std::optional<std::vector<std::uint32_t>> v0;
  for (std::size_t i = 0; i < nmap; ++i) {
    const std::uint8_t ext_version = r.u8("transaction_extensions_by_version.key");
    const std::size_t k = r.length("transaction_extensions_by_version.value");
    std::vector<std::uint32_t> idx;
    idx.reserve(k);
    for (std::size_t j = 0; j < k; ++j)
      idx.push_back(r.compact_u32("transaction_extensions_by_version.value"));
    if (ext_version == 0) v0 = std::move(idx);
  }
  const std::size_t at = r.offset();
  const auto all = read_extensions(r);
  if (!v0) bad(r, "transaction_extensions_by_version", "no extensions for extension version 0");
  for (const std::uint32_t i : *v0) {
    if (i >= all.size())
      throw chain_decode_error(chain_errc::bad_metadata, "transaction_extensions_by_version",
                               "extension index " + std::to_string(i) + " out of range", at);
    m.extensions.push_back(all[i]);
  }
}

void skip_apis(scale_reader& r, int version) {
  const std::size_t n = r.length("apis");
  for (std::size_t i = 0; i < n; ++i) {
    r.text("apis.name");
    const std::size_t methods = r.length("apis.methods");
    for (std::size_t j = 0; j < methods; ++j) {
      r.text("apis.methods.name");
      skip_params(r);
      type_id(r, "apis.methods.output");
      skip_strings(r, "apis.methods.docs");
      if (version >= 16) skip_item_deprecation(r);
    }
    skip_strings(r, "apis.docs");
    if (version >= 16) {
      r.compact_u32("apis.version");
      skip_item_deprecation(r);
    }
  }
}

void skip_outer_enums_and_custom(scale_reader& r) {
  type_id(r, "outer_enums.call_enum_ty");
  type_id(r, "outer_enums.event_enum_ty");
  type_id(r, "outer_enums.error_enum_ty");
  const std::size_t n = r.length("custom");
  for (std::size_t i = 0; i < n; ++i) {
    r.text("custom.key");
    type_id(r, "custom.ty");
    r.bytes(r.length("custom.value"), "custom.value");
  }
}

// Every type id kept in runtime_metadata must name a registry entry (the parsers trust it).
void check_ids(const runtime_metadata& m) {
  const auto check = [&](std::uint32_t id, const std::string& where) {
    if (id >= m.types.size())
      throw chain_decode_error(chain_errc::bad_metadata, where,
                               "type id " + std::to_string(id) + " outside the registry of " +
                                   std::to_string(m.types.size()),
                               0);
  };
  for (std::size_t i = 0; i < m.types.size(); ++i) {
    const auto& t = m.types[i];
    const std::string where = "types[" + std::to_string(i) + "]";
    for (const auto& f : t.fields) check(f.type, where);
    for (const auto& v : t.variants)
      for (const auto& f : v.fields) check(f.type, where);
    for (const auto e : t.tuple) check(e, where);
    if (t.shape == portable_type::kind::sequence || t.shape == portable_type::kind::array ||
        t.shape == portable_type::kind::compact || t.shape == portable_type::kind::bit_sequence)
      check(t.element, where);
    if (t.shape == portable_type::kind::bit_sequence) check(t.bit_order, where);
  }
  for (const auto& p : m.pallets) {
    if (p.call_type) {
      check(*p.call_type, p.name + ".calls");
      if (m.types[*p.call_type].shape != portable_type::kind::variant)
        throw chain_decode_error(chain_errc::bad_metadata, p.name + ".calls",
                                 "call type is not an enum", 0);
    }
    for (const auto& e : p.storage) {
      check(e.value_type, p.name + "." + e.name);
      if (e.is_map) check(e.key_type, p.name + "." + e.name);
    }
  }
  for (const auto& x : m.extensions) {
    check(x.extra_type, x.identifier);
    check(x.implicit_type, x.identifier);
  }
  if (m.address_type) check(*m.address_type, "extrinsic.address_ty");
  if (m.signature_type) check(*m.signature_type, "extrinsic.signature_ty");
}

}  // namespace

runtime_metadata decode_metadata(std::span<const std::uint8_t> bytes) {
  scale_reader r(bytes);
  if (r.u32("magic") != meta_magic)
    throw chain_decode_error(chain_errc::bad_metadata, "magic", "not runtime metadata (\"meta\")",
                             0);
  runtime_metadata m;
  const std::uint8_t version = r.u8("version");
  if (version < 14 || version > 16)
    throw chain_decode_error(
        chain_errc::bad_metadata, "version",
        "metadata version " + std::to_string(version) + " is not supported (14, 15 and 16 are)", 4);
  m.version = version;
  m.types = read_registry(r);
  const std::size_t np = r.length("pallets");
  m.pallets.reserve(r.reservable(np, pallet_min_bytes));
  for (std::size_t i = 0; i < np; ++i) {
    try {
      m.pallets.push_back(read_pallet(r, version));
    } catch (const chain_decode_error& e) {
      throw e.with_prefix("pallets[" + std::to_string(i) + "]");
    }
  }
  try {
    read_extrinsic(r, version, m);
  } catch (const chain_decode_error& e) {
    throw e.with_prefix("extrinsic");
  }
  if (version <= 15) type_id(r, "ty");
  if (version >= 15) {
    skip_apis(r, version);
    skip_outer_enums_and_custom(r);
  }
  r.expect_end("runtime metadata");
  check_ids(m);
  return m;
}

const portable_type& runtime_metadata::type(std::uint32_t id) const {
  if (id >= types.size())
    throw chain_decode_error(chain_errc::bad_metadata, "type id",
                             std::to_string(id) + " outside the registry", 0);
  return types[id];
}

const pallet_metadata* runtime_metadata::find_pallet(std::string_view name) const noexcept {
  for (const auto& p : pallets)
    if (p.name == name) return &p;
  return nullptr;
}

call_ref runtime_metadata::find_call(std::string_view pallet, std::string_view call) const {
  const pallet_metadata* p = find_pallet(pallet);
  if (!p)
    throw std::system_error(make_error_code(chain_errc::unknown_pallet),
                            "runtime has no pallet " + std::string(pallet));
  if (!p->call_type)
    throw std::system_error(make_error_code(chain_errc::unknown_call),
                            "pallet " + std::string(pallet) + " has no calls");
  for (const auto& v : types[*p->call_type].variants)
    if (v.name == call) return {p->index, v.index, &v};
  throw std::system_error(make_error_code(chain_errc::unknown_call),
                          "pallet " + std::string(pallet) + " has no call " + std::string(call));
}

const storage_entry* runtime_metadata::find_storage(std::string_view pallet,
                                                    std::string_view item) const noexcept {
  const pallet_metadata* p = find_pallet(pallet);
  if (!p) return nullptr;
  for (const auto& e : p->storage)
    if (e.name == item) return &e;
  return nullptr;
}

bool runtime_metadata::is_empty_type(std::uint32_t id) const {
  // The registry is the node's: it may share a type among many fields (a fan-out that a plain
  // walk would visit once per path, exponentially often), nest composites arbitrarily deep, or
  // make a composite contain itself. So the walk remembers each type's answer (every type is
  // expanded at most once: steps bounded by the types and fields of the registry), refuses a
  // nesting deeper than max_type_nesting (which also bounds the recursion) and a type that
  // contains itself, both as bad_metadata. Real extension types nest a few levels (a newtype
  // around PhantomData, a tuple of unit types); 16 is the bound through_newtypes uses too.
  constexpr int max_type_nesting = 16;
  enum class mark : std::uint8_t { unknown, visiting, empty, not_empty };
  std::vector<mark> memo(types.size(), mark::unknown);
  const auto empty = [&](auto&& self, std::uint32_t t, int depth) -> bool {
    const portable_type& ty = type(t);
    switch (memo[t]) {
      case mark::empty:
        return true;
      case mark::not_empty:
        return false;
      case mark::visiting:
        throw chain_decode_error(chain_errc::bad_metadata, "types[" + std::to_string(t) + "]",
                                 "the type contains itself", 0);
      case mark::unknown:
        break;
    }
    if (depth > max_type_nesting)
      throw chain_decode_error(
          chain_errc::bad_metadata, "types[" + std::to_string(t) + "]",
          "types nested deeper than " + std::to_string(max_type_nesting) + " levels", 0);
    memo[t] = mark::visiting;
    bool result = false;
    switch (ty.shape) {
      case portable_type::kind::composite:
        result = true;
        for (const auto& f : ty.fields)
          if (!self(self, f.type, depth + 1)) {
            result = false;
            break;
          }
        break;
      case portable_type::kind::tuple:
        result = true;
        for (const auto e : ty.tuple)
          if (!self(self, e, depth + 1)) {
            result = false;
            break;
          }
        break;
      case portable_type::kind::array:
        result = ty.array_length == 0 || self(self, ty.element, depth + 1);
        break;
      default:
        result = false;
    }
    memo[t] = result ? mark::empty : mark::not_empty;
    return result;
  };
  return empty(empty, id, 0);
}

}  // namespace bt
