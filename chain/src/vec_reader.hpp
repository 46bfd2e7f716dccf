// Reading a SCALE Vec<T> element by element, naming the failing element in the error.
#pragma once

#include <bt/chain/scale_reader.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace bt::detail {

/// A subnet's uids are u16: no per-neuron vector of a runtime-API answer can have more entries.
inline constexpr std::size_t max_neurons = 65536;

/// Reads `Vec<T>` with `elem(r)` for each element, each of which takes at least
/// `min_element_bytes` encoded bytes. The reservation is for no more elements than the bytes
/// left can hold at that size (scale_reader::reservable), so a hostile count costs at most
/// sizeof(T) / min_element_bytes times the input; a length above `max_count` or above the bytes
/// left is refused (too_long). An element's error is rethrown with "<name>[i]" put before its
/// field; nothing is built on the success path.
template <class T, class F>
std::vector<T> read_vec(scale_reader& r, std::string_view name, std::size_t min_element_bytes,
                        F&& elem, std::size_t max_count = static_cast<std::size_t>(-1)) {
  const std::size_t n = r.length(name, max_count);
  std::vector<T> out;
  out.reserve(r.reservable(n, min_element_bytes));
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
