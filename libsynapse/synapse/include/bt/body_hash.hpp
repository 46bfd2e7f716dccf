// Synapse.body_hash (PROTOCOL section 3): sha3_256 over the concatenated hex sha3_256 digests
// of str(value) of each required_hash_fields entry, in order.
#pragma once

#include <bt/synapse.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bt {

/// 64 lowercase hex digits.
std::string body_hash(const synapse_descriptor& d, const synapse& s);

template <class T>
std::string body_hash(const T& s) {
  return body_hash(descriptor_for(s), s);
}

/// body_hash() of one object, remembered with the str() text of each hashed field it was
/// computed from, so that the same object's hash can be had again without a SHA3 pass while no
/// hashed field changed: the axon hashes a request to check it and answers with the same object,
/// which the handler usually leaves alone in its hashed (input) fields. Checking costs each hashed
/// field's str() and a comparison, a fraction of a SHA3 pass; the price is a copy of those texts
/// (about the size of the hashed fields) for as long as the memo is kept.
class body_hash_memo {
 public:
  /// body_hash(d, s), remembering the texts it hashed.
  const std::string& compute(const synapse_descriptor& d, const synapse& s);
  /// body_hash(d, s): the remembered hash when the last compute() was for `d` and every hashed
  /// field's text is unchanged, otherwise a fresh pass (remembered in turn).
  const std::string& current(const synapse_descriptor& d, const synapse& s);

 private:
  const synapse_descriptor* type_ = nullptr;  // null until compute()
  std::vector<std::string> texts_;            // in hash_fields() order
  std::string hash_;
};

namespace detail {
/// How many times body_hash() has hashed a type's fields (one SHA3 pass over each hashed field's
/// text) in this process; a type without hash fields costs nothing and is not counted. A relaxed
/// counter, for tests and benchmarks that prove how many passes a call costs.
std::uint64_t body_hash_passes() noexcept;
}  // namespace detail

}  // namespace bt
