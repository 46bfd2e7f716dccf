// Reading a SCALE Vec<T> element by element, naming the failing element in the error.
#pragma once

#include <bt/chain/scale_reader.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace bt::detail {

/// Reads `Vec<T>` with `elem(r)` for each element. The length is bounded by the bytes left
/// (scale_reader::length), so the reservation is bounded by the input. An element's error is
/// rethrown with "<name>[i]" put before its field; nothing is built on the success path.
template <class T, class F>
std::vector<T> read_vec(scale_reader& r, std::string_view name, F&& elem) {
  const std::size_t n = r.length(name);
  std::vector<T> out;
  out.reserve(n);
  std::size_t i = 0;
  try {
    for (; i < n; ++i) out.push_back(elem(r));
  } catch (const chain_decode_error& e) {
    throw e.with_prefix(std::string(name) + "[" + std::to_string(i) + "]");
  }
  return out;
}

/// Runs f(r), rethrowing its error with `prefix` put before the field ("axon_info").
template <class F>
auto with_prefix(std::string_view prefix, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const chain_decode_error& e) {
    throw e.with_prefix(prefix);
  }
}

}  // namespace bt::detail
