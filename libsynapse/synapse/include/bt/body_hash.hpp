// Synapse.body_hash (PROTOCOL section 3): sha3_256 over the concatenated hex sha3_256 digests
// of str(value) of each required_hash_fields entry, in order.
#pragma once

#include <bt/synapse.hpp>

#include <cstdint>
#include <string>

namespace bt {

/// 64 lowercase hex digits.
std::string body_hash(const synapse_descriptor& d, const synapse& s);

template <class T>
std::string body_hash(const T& s) {
  return body_hash(descriptor_for(s), s);
}

namespace detail {
/// How many times body_hash() has hashed a type's fields (one SHA3 pass over each hashed field's
/// text) in this process; a type without hash fields costs nothing and is not counted. A relaxed
/// counter, for tests and benchmarks that prove how many passes a call costs.
std::uint64_t body_hash_passes() noexcept;
}  // namespace detail

}  // namespace bt
