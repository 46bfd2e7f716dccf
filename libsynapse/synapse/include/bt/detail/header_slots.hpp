// The values of one family of signed request headers as a receiver collects them (btauth/1's
// X-Bittensor-*, Epistula's Epistula-*): one slot per name the family defines. A repeated name is
// counted, so that the family's checks can refuse it, and its first value is kept; a name of the
// family that has no slot is ignored. Internal (namespace bt::detail): no stability promise.
#pragma once

#include <bt/detail/text.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace bt::detail {

template <std::size_t N>
class header_slots {
 public:
  static constexpr std::size_t field_count = N;

  /// True once any header of the family was taken (a slot's or not).
  bool any() const noexcept { return any_; }
  /// How often slot `f`'s name occurred (saturates at 255).
  unsigned count(std::size_t f) const noexcept { return count_[f]; }
  /// The first value of slot `f` (empty when absent).
  const std::string& value(std::size_t f) const noexcept { return value_[f]; }

  void clear() noexcept {
    for (auto& v : value_) v.clear();
    count_.fill(0);
    any_ = false;
  }

 protected:
  /// Takes one header of the family; `lower_names` are the slots' names in lower case.
  void take(const std::array<std::string_view, N>& lower_names, std::string_view name,
            std::string_view value) {
    any_ = true;
    for (std::size_t i = 0; i < N; ++i) {
      if (!iequals(name, lower_names[i])) continue;
      if (count_[i] == 0) value_[i].assign(value);
      if (count_[i] < 255) ++count_[i];
      return;
    }
  }

 private:
  std::array<std::string, N> value_{};
  std::array<std::uint8_t, N> count_{};
  bool any_ = false;
};

}  // namespace bt::detail
