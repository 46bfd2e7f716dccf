// bt::enum_error_category: the one std::error_category every error enum of the project uses
// (bt::key_errc, bt::codec_errc, bt::chain_errc, bt::dendrite_errc). A library gives its enum,
// the category's name and a message table; each library checks at compile time (is_dense_table)
// that its table lists the enumerators once each, in order, up to the last one, so that message()
// is an index and a missing or misplaced row fails to build.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>

namespace bt {

/// One row of a category's message table.
template <class E>
struct errc_message {
  E code;
  std::string_view text;
};

/// True when `rows` lists consecutive enumerators, starting at the first row's, ending at `last`.
template <class E, std::size_t N>
consteval bool is_dense_table(const std::array<errc_message<E>, N>& rows, E last) {
  if (N == 0) return false;
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<long long>(rows[i].code) !=
        static_cast<long long>(rows[0].code) + static_cast<long long>(i))
      return false;
  return rows[N - 1].code == last;
}

/// A category named `name` whose message(ev) is the table's text for ev, or `unknown` for a value
/// outside it. Objects live in a function-local static of the library's `*_category()` function:
/// std::error_code compares categories by address.
template <class E, std::size_t N>
class enum_error_category final : public std::error_category {
 public:
  constexpr enum_error_category(const char* name, const std::array<errc_message<E>, N>& rows,
                                std::string_view unknown) noexcept
      : name_(name), rows_(rows), unknown_(unknown) {}

  const char* name() const noexcept override { return name_; }

  std::string message(int ev) const override {
    const long long first = static_cast<long long>(rows_[0].code);
    const long long i = static_cast<long long>(ev) - first;
    if (i >= 0 && i < static_cast<long long>(N))
      return std::string(rows_[static_cast<std::size_t>(i)].text);
    return std::string(unknown_);
  }

 private:
  const char* name_;
  std::array<errc_message<E>, N> rows_;
  std::string_view unknown_;
};

}  // namespace bt
