// Tables of named data members: the one place where the base fields of a message (TerminalInfo,
// the base Synapse) are named, and the helpers every codec uses to walk them. A table is a
// std::tuple of bt::detail::named_member, in wire order; the header writer and reader, the JSON
// writer and readers and the schema check all iterate it, so that a field is added or renamed in
// one place. Each codec dispatches on the member's C++ type (an overload per type), so a member of
// a type a codec does not handle is a compile error there, not a silently skipped field.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace bt::detail {

/// One data member of C with its wire name.
template <class C, class V>
struct named_member {
  using class_type = C;
  using value_type = V;
  std::string_view name;
  V C::*ptr;
};
template <class C, class V>
named_member(const char*, V C::*) -> named_member<C, V>;

/// Calls f(member) for each member of `table`, in order.
template <class Table, class F>
constexpr void for_each_member(const Table& table, F&& f) {
  std::apply([&](const auto&... m) { (f(m), ...); }, table);
}

template <class Table, class F, std::size_t... I>
decltype(auto) visit_member_at(const Table& table, std::size_t index, F& f,
                               std::index_sequence<I...>) {
  // A jump table, as a switch would be: one indirect call, then f inlined for that member; its
  // result is returned straight from there (no assignment through a captured variable).
  using result = decltype(f(std::get<0>(table)));
  using entry = result (*)(const Table&, F&);
  static constexpr entry entries[] = {
      [](const Table& t, F& fn) -> result { return fn(std::get<I>(t)); }...};
  return entries[index](table, f);
}

/// Returns f(member) for the member at `index`, which must be less than the table's size; f
/// returns the same type for every member.
template <class Table, class F>
decltype(auto) visit_member(const Table& table, std::size_t index, F&& f) {
  return visit_member_at(table, index, f, std::make_index_sequence<std::tuple_size_v<Table>>{});
}

/// Calls f(member) for the first member for which pred(member) holds and stops there; returns
/// whether there was one.
template <class Table, class Pred, class F>
constexpr bool find_member(const Table& table, Pred&& pred, F&& f) {
  return std::apply([&](const auto&... m) { return ((pred(m) ? (f(m), true) : false) || ...); },
                    table);
}

/// The names of a table's members, in order.
template <class Table>
constexpr auto member_names(const Table& table) {
  return std::apply(
      [](const auto&... m) { return std::array<std::string_view, sizeof...(m)>{m.name...}; },
      table);
}

/// The index of `name` in `names`, or -1.
template <std::size_t N>
constexpr int index_of(const std::array<std::string_view, N>& names,
                       std::string_view name) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

/// The wire name of the member `ptr` points to (a compile-time lookup: `ptr` must be in `table`).
template <class Table, class C, class V>
constexpr std::string_view member_name(const Table& table, V C::*ptr) {
  std::string_view found;
  for_each_member(table, [&](const auto& m) {
    if constexpr (std::is_same_v<decltype(m.ptr), V C::*>)
      if (m.ptr == ptr) found = m.name;
  });
  return found;
}

}  // namespace bt::detail
