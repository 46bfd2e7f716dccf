// Keyword arguments onto an option struct, by its table (bt/option_table.hpp): Axon(**kw) and
// Dendrite(**kw) set each field the keyword names, so a field added to a table is a keyword at
// once. Durations are given in seconds; objects (loggers, stores) are not keywords.
#pragma once

#include "common.hpp"

#include <bt/option_table.hpp>

#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace btpy {

/// A non-negative, finite number of seconds, as milliseconds; otherwise ValueError naming `name`.
inline std::chrono::milliseconds seconds_option(py::handle v, const std::string& name) {
  const double x = v.cast<double>();
  if (!std::isfinite(x) || x < 0)
    throw py::value_error(name + " must be a non-negative number of seconds");
  return std::chrono::milliseconds(static_cast<std::int64_t>(x * 1000));
}

/// Sets `o.*m.ptr` from `v` by the member's type: durations in seconds, the other values as
/// pybind11 casts them. False for members that are objects, not values. A value of the wrong type
/// throws py::cast_error.
template <class Options, class Field>
bool set_option(Options& o, const Field& m, py::handle v) {
  using V = typename Field::value_type;
  if constexpr (std::is_same_v<V, std::chrono::milliseconds>) {
    o.*m.ptr = seconds_option(v, std::string(m.name));
    return true;
  } else if constexpr (std::is_arithmetic_v<V> || std::is_same_v<V, std::string> ||
                       std::is_same_v<V, std::vector<std::string>>) {
    o.*m.ptr = v.cast<V>();
    return true;
  } else {
    return false;
  }
}

/// Applies each keyword of `kw` to `o` through `set(o, field, value)` (set_option, or a caller's
/// function that handles its own types first). `what` names the callable in errors ("Axon()");
/// names in `skip` are no keywords (they are arguments of their own). An unknown keyword, or a
/// value of the wrong type, is a TypeError naming it.
template <class Options, class Table, class Set>
void apply_keywords(Options& o, const Table& table, const py::kwargs& kw, const char* what,
                    std::initializer_list<std::string_view> skip, Set&& set) {
  for (auto kv : kw) {
    const std::string k = kv.first.cast<std::string>();
    py::handle v = kv.second;
    bool known = false;
    for (const auto s : skip)
      if (s == k)
        throw py::type_error(std::string(what) + " got an unexpected keyword argument '" + k + "'");
    try {
      bt::detail::find_member(
          table, [&](const auto& m) { return m.name == k; },
          [&](const auto& m) { known = set(o, m, v); });
    } catch (py::cast_error&) {
      throw py::type_error(std::string(what) + ": " + k + " has the wrong type (" +
                           py::str(v.get_type().attr("__name__")).cast<std::string>() + ")");
    }
    if (!known)
      throw py::type_error(std::string(what) + " got an unexpected keyword argument '" + k + "'");
  }
}

}  // namespace btpy
