// Tables of options: the one place where the fields of an option struct (bt::axon_options,
// bt::dendrite_options, bt::route_options) are named, with a line of help and the bounds a front
// end checks. The struct exposes `static constexpr auto option_table()`, a std::tuple of
// bt::option_field in declaration order; the command-line flags of the tools, the Python keyword
// arguments and the docs test all walk it (with bt::detail::for_each_member / find_member), so a
// field added to the struct but not to its table is missing everywhere at once, which the docs
// test reports.
//
// A table is read at configuration time only: nothing on a request's path looks at it.
#pragma once

#include <bt/detail/member_table.hpp>

#include <string_view>

namespace bt {

/// How a front end spells an option's value when the C++ type alone does not say it.
enum class option_unit {
  plain,         ///< the value itself (a number, a string, a list of strings)
  seconds,       ///< a duration, given in (fractional) seconds
  milliseconds,  ///< a duration, given in whole milliseconds
  on_off,        ///< a bool given as "on" or "off" (for options whose default is on)
  flag,          ///< a bool given as a switch that turns it on
};

/// How bt-axon / bt-dendrite expose an option, if at all.
struct option_cli {
  /// The flag without its leading dashes ("axon.max_workers"); empty: no flag.
  std::string_view flag{};
  option_unit unit = option_unit::plain;
  /// Accepted range, in `unit` (checked by the flag; the library checks its own invariants).
  double min = 0, max = 0;
};

/// One field of an option struct C: its name (the C++ member's and the Python keyword's) and the
/// member, as in a message's member table, plus one line of help and its command-line form.
template <class C, class V>
struct option_field : detail::named_member<C, V> {
  constexpr option_field(std::string_view name, V C::*ptr, std::string_view help_line,
                         option_cli cli_form = {})
      : detail::named_member<C, V>{name, ptr}, help(help_line), cli(cli_form) {}
  std::string_view help;
  option_cli cli;
};

}  // namespace bt
