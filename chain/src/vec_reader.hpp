// Reading a SCALE Vec<T> element by element, naming the failing element in the error, and a
// SCALE struct from its member table (each field named once: name, member, reader).
#pragma once

#include <bt/chain/scale_reader.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
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

/// One field of a SCALE struct C: its name (the error's field), its member, and `Read`, called as
/// std::invoke(Read, reader, name) (a scale_reader member function such as &scale_reader::u64,
/// or a function such as read_nested / read_vec_of). Read is a template argument, so the call is
/// direct and inlinable, as if written out field by field.
template <auto Read, class C, class V>
struct scale_field {
  static constexpr auto read = Read;
  std::string_view name;
  V C::*member;
};

template <auto Read, class C, class V>
constexpr scale_field<Read, C, V> field(std::string_view name, V C::*member) {
  return {name, member};
}

/// Reads a C field by field in the table's order (a std::tuple of scale_field: the encoding
/// order). Errors name the failing field as its reader reports it.
template <class C, class Table>
C read_struct(scale_reader& r, const Table& fields) {
  C out;
  std::apply(
      [&](const auto&... f) {
        ((out.*f.member = std::invoke(std::remove_cvref_t<decltype(f)>::read, r, f.name)), ...);
      },
      fields);
  return out;
}

/// A nested struct read with its own table, its fields' errors prefixed by the field's name
/// ("axon_info.port").
template <class C, const auto& Table>
C read_nested(scale_reader& r, std::string_view name) {
  return with_prefix(name, [&] { return read_struct<C>(r, Table); });
}

/// A Vec of elements each read by `Elem` (unnamed: errors say "name[i]"), each at least
/// `MinBytes` encoded bytes, at most `MaxCount` of them (read_vec).
template <auto Elem, std::size_t MinBytes, std::size_t MaxCount = max_neurons>
auto read_vec_of(scale_reader& r, std::string_view name) {
  using T = std::decay_t<std::invoke_result_t<decltype(Elem), scale_reader&, std::string_view>>;
  return read_vec<T>(
      r, name, MinBytes, [](scale_reader& s) { return std::invoke(Elem, s, std::string_view{}); },
      MaxCount);
}

}  // namespace bt::detail
