// bt::synapse: the base message (Python's bittensor.Synapse, PROTOCOL 1.2) and the way a user
// declares a typed synapse.
//
// Declaring a synapse type, all in one place, each field named once (the short form):
//
//   struct dummy : bt::synapse {
//     std::int64_t dummy_input = 0;                // required (no default in Python)
//     std::optional<std::int64_t> dummy_output;    // Optional[int] = None
//
//     BT_SYNAPSE(dummy, "Dummy", BT_FIELD(dummy_input, bt::required), BT_FIELD(dummy_output))
//   };
//
// The wire name of a field is its member's name; markers are bt::required and bt::hashed (one of
// required_hash_fields, hashed in declaration order). The long form, for a wire name that differs
// from the member name or another hashing order, writes the schema out:
//
//     static bt::synapse_schema<dummy> schema() {
//       return {.name = "Dummy",
//               .fields = {bt::field<&dummy::dummy_input>("dummy_input", bt::required),
//                          bt::field<&dummy::dummy_output>("dummy_output")},
//               .hash_fields = {}};  // required_hash_fields, in hashing order
//     }
//
// bt::descriptor_of<dummy>() turns that schema into a synapse_descriptor once per type
// (a function-local static) and every encoder and decoder reuses it.
#pragma once

#include <bt/terminal_info.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace bt {

class synapse_descriptor;
struct field_descriptor;
template <class T>
struct synapse_schema;

/// The base synapse. Its own route is "/Synapse" (the ping every axon serves).
/// `name` is not stored: it is the descriptor's name, as Python overwrites it with the class name.
struct synapse {
  std::optional<double> timeout = 12.0;  ///< seconds; set by the dendrite per call
  std::optional<std::int64_t> total_size = 0;
  std::optional<std::int64_t> header_size = 0;
  terminal_info dendrite;          ///< the caller (validator)
  terminal_info axon;              ///< the server (miner)
  std::string computed_body_hash;  ///< carried in the header; "" in bodies

  /// Status helpers, reading dendrite.status_code as Python's properties do.
  bool is_success() const noexcept { return dendrite.status_code == 200; }
  bool is_failure() const noexcept { return !is_success(); }
  bool is_timeout() const noexcept { return dendrite.status_code == 408; }
  bool is_blacklist() const noexcept { return dendrite.status_code == 403; }
  bool failed_verification() const noexcept { return dendrite.status_code == 401; }

  static synapse_schema<synapse> schema();

  friend bool operator==(const synapse&, const synapse&) = default;
};

/// The base fields in declaration (= JSON body) order, named once: the JSON writer and readers,
/// the header writer and reader (which emit them in Python's header order, a protocol fact) and
/// the schema check walk this table. "name" is not a member: it is the descriptor's name.
inline constexpr std::string_view synapse_name_key = "name";
inline constexpr auto synapse_members =
    std::tuple{detail::named_member{"timeout", &synapse::timeout},
               detail::named_member{"total_size", &synapse::total_size},
               detail::named_member{"header_size", &synapse::header_size},
               detail::named_member{"dendrite", &synapse::dendrite},
               detail::named_member{"axon", &synapse::axon},
               detail::named_member{"computed_body_hash", &synapse::computed_body_hash}};

/// Whether Python considers a field required (no default; PROTOCOL 1.3). Required fields travel
/// as bt_header_input_obj_<name> placeholders and must be present in bodies.
enum class field_kind { optional, required };
inline constexpr field_kind required = field_kind::required;

/// What a type declares about itself; see the example at the top of this file.
template <class T>
struct synapse_schema {
  std::string_view name;                      ///< class name == HTTP route
  std::vector<field_descriptor> fields;       ///< subclass fields, declaration order
  std::vector<std::string_view> hash_fields;  ///< required_hash_fields, hashing order
};

}  // namespace bt

#include <bt/synapse_descriptor.hpp>
