// detail::name_index: a name → position lookup over a fixed list of names, built at compile time,
// for the readers' hot path (every key of every header block and JSON body is looked up).
// Names are bucketed by length and first letter; for the base Synapse and TerminalInfo names
// every bucket holds one name (the constructor refuses two in one bucket, and it runs at compile
// time, so a clash is a build error), so a lookup is one table read and one comparison instead of
// a scan of the list.
#pragma once

#include <bt/detail/text.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bt::detail {

template <std::size_t N>
class name_index {
 public:
  static constexpr std::size_t max_length = 31;

  /// `names` must be non-empty, lowercase ASCII, at most max_length bytes, and no two may share
  /// a length and a first letter (checked: a constant expression fails otherwise).
  constexpr explicit name_index(const std::array<std::string_view, N>& names) : names_(names) {
    for (auto& row : slots_) row.fill(-1);
    static_assert(N < 128);
    for (std::size_t i = 0; i < N; ++i) {
      const std::string_view n = names[i];
      if (n.empty() || n.size() > max_length) throw "name_index: a name's length is out of range";
      std::int8_t& slot = slots_[n.size()][bucket(n[0])];
      if (slot >= 0) throw "name_index: two names share a length and a first letter";
      slot = static_cast<std::int8_t>(i);
    }
  }

  /// The position of `key` in the names (exact match), or -1.
  constexpr int find(std::string_view key) const noexcept {
    const int i = candidate(key);
    return i >= 0 && names_[static_cast<std::size_t>(i)] == key ? i : -1;
  }

  /// The position of `key` in the names, ASCII case-insensitively (header names), or -1.
  constexpr int find_icase(std::string_view key) const noexcept {
    const int i = candidate(key);
    return i >= 0 && iequals(key, names_[static_cast<std::size_t>(i)]) ? i : -1;
  }

 private:
  // The low five bits tell ASCII letters apart and ignore their case.
  static constexpr std::size_t bucket(char c) noexcept {
    return static_cast<unsigned char>(c) & 31u;
  }
  constexpr int candidate(std::string_view key) const noexcept {
    if (key.empty() || key.size() > max_length) return -1;
    return slots_[key.size()][bucket(key[0])];
  }

  std::array<std::string_view, N> names_;
  std::array<std::array<std::int8_t, 32>, max_length + 1> slots_{};
};

}  // namespace bt::detail
