// bt::runtime_metadata: the parts of a Substrate runtime's metadata (V14, V15, V16) that a client
// needs to build extrinsics and storage keys by name: the portable type registry, the pallets
// (index, call enum, storage entries) and the extrinsic's signed/transaction extensions.
//
// Contract: decode_metadata() reads the whole of `state_getMetadata`'s bytes (the "meta" magic,
// the version byte, the body) strictly: a truncated input, trailing bytes, a tag out of range,
// a type id outside the registry or a registry whose ids are not 0..n-1 in order all throw
// bt::chain_decode_error (codes truncated, trailing_bytes, invalid_option, bad_metadata, ...)
// naming the field and the offset. Documentation strings, constants, events, errors, runtime
// APIs and deprecation notes are read (so that strictness holds) and dropped. Lookups by name
// throw std::system_error with chain_errc::unknown_pallet / unknown_call when the runtime has no
// such item; a decoded runtime_metadata never refers to a type id outside `types`.
#pragma once

#include <bt/chain/chain_error.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bt {

/// scale-info's primitive types, in their encoded order.
enum class scale_primitive : std::uint8_t {
  bool_,
  char_,
  str,
  u8,
  u16,
  u32,
  u64,
  u128,
  u256,
  i8,
  i16,
  i32,
  i64,
  i128,
  i256
};

struct type_field {
  std::optional<std::string> name;  ///< none for tuple-struct fields
  std::uint32_t type = 0;
  std::optional<std::string> type_name;
};

struct type_variant {
  std::string name;
  std::vector<type_field> fields;
  std::uint8_t index = 0;
};

/// One type of the registry: its path ("sp_runtime", "multiaddress", "MultiAddress") and shape.
struct portable_type {
  enum class kind : std::uint8_t {
    composite,
    variant,
    sequence,
    array,
    tuple,
    primitive,
    compact,
    bit_sequence
  };
  std::vector<std::string> path;
  kind shape = kind::composite;
  std::vector<type_field> fields;      ///< composite
  std::vector<type_variant> variants;  ///< variant
  std::uint32_t element = 0;           ///< sequence, array, compact: the element type; bit
                                       ///< sequence: the store type
  std::uint32_t array_length = 0;      ///< array
  std::vector<std::uint32_t> tuple;    ///< tuple
  scale_primitive primitive = scale_primitive::bool_;  ///< primitive
  std::uint32_t bit_order = 0;                         ///< bit sequence

  /// The last path segment ("" for anonymous types such as tuples and primitives).
  std::string_view name() const noexcept {
    return path.empty() ? std::string_view{} : std::string_view(path.back());
  }
};

enum class storage_hasher : std::uint8_t {
  blake2_128,
  blake2_256,
  blake2_128_concat,
  twox128,
  twox256,
  twox64_concat,
  identity
};

struct storage_entry {
  std::string name;
  bool optional = false;  ///< modifier Optional (absent value = None) rather than Default
  bool is_map = false;
  std::vector<storage_hasher> hashers;  ///< map: one per key (the key type is a tuple when > 1)
  std::uint32_t key_type = 0;           ///< map only
  std::uint32_t value_type = 0;
  std::vector<std::uint8_t> default_value;
};

struct pallet_metadata {
  std::string name;
  std::uint8_t index = 0;
  std::optional<std::uint32_t> call_type;  ///< the pallet's call enum (a variant type)
  std::string storage_prefix;              ///< empty when the pallet has no storage
  std::vector<storage_entry> storage;
};

/// A signed extension (V14/V15) or transaction extension (V16): what it adds to the extrinsic
/// (`extra`, the "ty" of the metadata) and to the signing payload only (`implicit`, V14/V15's
/// "additional_signed").
struct extension_metadata {
  std::string identifier;
  std::uint32_t extra_type = 0;
  std::uint32_t implicit_type = 0;
};

/// A call found by name: what goes in front of its arguments, and their types.
struct call_ref {
  std::uint8_t pallet_index = 0;
  std::uint8_t call_index = 0;
  const type_variant* variant = nullptr;  ///< points into the runtime_metadata it came from
};

struct runtime_metadata {
  std::uint8_t version = 0;          ///< 14, 15 or 16
  std::vector<portable_type> types;  ///< types[id]
  std::vector<pallet_metadata> pallets;
  /// The extrinsic format versions the runtime accepts (V14/V15: the one "version"; V16: the
  /// "versions" list).
  std::vector<std::uint8_t> extrinsic_versions;
  /// The extensions of a version-4 signed extrinsic, in the order they are encoded (V16: those
  /// that transaction_extensions_by_version lists for extension version 0, the version v4
  /// extrinsics use).
  std::vector<extension_metadata> extensions;
  /// The extrinsic's address and signature types: V15/V16 only (V14 states them only as type
  /// parameters of the extrinsic type, which are not kept).
  std::optional<std::uint32_t> address_type;
  std::optional<std::uint32_t> signature_type;

  /// The type with this id; throws chain_decode_error(bad_metadata) when out of range.
  const portable_type& type(std::uint32_t id) const;
  /// The pallet of this name, or nullptr.
  const pallet_metadata* find_pallet(std::string_view name) const noexcept;
  /// Pallet and call index and argument list of pallet.call; throws std::system_error with
  /// unknown_pallet or unknown_call.
  call_ref find_call(std::string_view pallet, std::string_view call) const;
  /// The storage entry pallet.item, or nullptr.
  const storage_entry* find_storage(std::string_view pallet, std::string_view item) const noexcept;
  /// True when values of the type encode to zero bytes: the unit tuple, an empty composite, or
  /// composites/tuples/arrays of such (PhantomData and the no-data extensions). Each type is
  /// expanded at most once per call, so the cost is linear in the registry whatever its shape.
  /// Throws chain_decode_error(bad_metadata) for a composite/tuple/array nesting deeper than 16
  /// levels or one that contains itself (neither occurs in a real runtime), and for an id
  /// outside the registry.
  bool is_empty_type(std::uint32_t id) const;
};

/// Decodes state_getMetadata's bytes (RuntimeMetadataPrefixed). Throws chain_decode_error.
runtime_metadata decode_metadata(std::span<const std::uint8_t> bytes);

}  // namespace bt
