// Synapse.body_hash (PROTOCOL section 3): sha3_256 over the concatenated hex sha3_256 digests
// of str(value) of each required_hash_fields entry, in order.
#pragma once

#include <bt/synapse.hpp>

#include <string>

namespace bt {

/// 64 lowercase hex digits.
std::string body_hash(const synapse_descriptor& d, const synapse& s);

template <class T>
std::string body_hash(const T& s) {
  return body_hash(descriptor_for(s), s);
}

}  // namespace bt
