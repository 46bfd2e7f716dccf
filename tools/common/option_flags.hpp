// Command-line flags generated from an option table (bt/option_table.hpp): one flag per field
// whose option_cli names one, with the table's help, the unit appended ("(seconds)"), the table's
// range as the check, and the field's current value as the default shown. Parsing writes straight
// into the options struct. bt-axon (axon_options) and bt-dendrite query (dendrite_options) use it,
// so a flag's name, range and help have one source: the table.
//
// How a field's form becomes a flag:
// - bool: unit::flag is a switch; otherwise "on"/"off".
// - std::chrono::milliseconds: unit::milliseconds in whole milliseconds, otherwise (fractional)
//   seconds; both checked against [min, max].
// - an integer: checked against [min, max] (a type narrower than int as an int, so "-1" reads
//   "expected an integer from 0 to 65535"); a range [1, the type's maximum] is checked as
//   "expected a positive integer", the same set of values in plainer words.
// - std::string: as given; std::vector<std::string>: kept as given ("a,b,c"), one element, for
//   the tool to split and check.
// - an enum with option_value_names (has_value_names): one of its names ("off", "if_present").
// Fields of other types (an object such as a logger) get no flag from add_flags_of.
#pragma once

#include <bt/option_table.hpp>

#include <bt_cli.hpp>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bt::cli {

/// The environment variable of a flag: "axon.max_workers" -> "BT_AXON_MAX_WORKERS".
inline std::string flag_env_name(std::string_view flag) {
  std::string env = "BT_";
  for (const char ch : flag)
    env += std::isalnum(static_cast<unsigned char>(ch))
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch)))
               : '_';
  return env;
}

/// An enum whose values have names: `option_value_names(E{})`, found by argument-dependent
/// lookup next to the enum, gives (name, value) pairs; its flag takes one of the names.
template <class E>
concept has_value_names = std::is_enum_v<E> && requires {
  option_value_names(E{});
};

/// The flag of one table field `m` of `o`, registered on `app`; null when the field names none.
/// `o` must outlive the parse.
template <class Options, class Field>
CLI::Option* add_flag_of(CLI::App& app, Options& o, const Field& m) {
  using V = typename Field::value_type;
  using unit = bt::option_unit;
  const bt::option_cli& c = m.cli;
  if (c.flag.empty()) return nullptr;
  const std::string name = "--" + std::string(c.flag);
  std::string help(m.help);
  V& field = o.*m.ptr;
  CLI::Option* opt = nullptr;
  [[maybe_unused]] std::string_view opt_default;
  if constexpr (std::is_same_v<V, bool>) {
    if (c.unit == unit::flag) return app.add_flag(name, field, help);
    opt = app.add_option_function<std::string>(
                 name, [&field](const std::string& v) { field = v == "on"; }, help)
              ->check(CLI::IsMember({"on", "off"}))
              ->default_str(field ? "on" : "off");
  } else if constexpr (std::is_same_v<V, std::chrono::milliseconds>) {
    if (c.unit == unit::milliseconds) {
      using ms = std::uint32_t;
      opt = app.add_option_function<ms>(
                   name, [&field](const ms& v) { field = std::chrono::milliseconds(v); },
                   help + " (milliseconds)")
                ->check(in_range(static_cast<ms>(c.min), static_cast<ms>(c.max)))
                ->default_str(std::to_string(field.count()));
    } else {
      opt = app.add_option_function<double>(
                   name,
                   [&field](const double& s) {
                     field = std::chrono::milliseconds(std::llround(s * 1000));
                   },
                   help + " (seconds)")
                ->check(in_range(c.min, c.max))
                ->default_str(fmt::format("{}", std::chrono::duration<double>(field).count()));
    }
  } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
    opt = app.add_option_function<std::string>(
        name, [&field](const std::string& text) { field = {text}; }, help);
  } else if constexpr (std::is_same_v<V, std::string>) {
    opt = app.add_option(name, field, help);
    if (!field.empty()) opt->capture_default_str();
  } else if constexpr (std::is_integral_v<V>) {
    using checked = std::conditional_t<(sizeof(V) < sizeof(int)), int, V>;
    opt = app.add_option(name, field, help)->capture_default_str();
    // The type's maximum as a double may round above it: compare, never convert it back.
    if (c.min == 1 && c.max >= static_cast<double>(std::numeric_limits<checked>::max()))
      opt->check(positive<checked>());
    else
      opt->check(in_range(static_cast<checked>(c.min), static_cast<checked>(c.max)));
  } else if constexpr (has_value_names<V>) {
    std::vector<std::string> names;
    for (const auto& [spelled, value] : option_value_names(V{})) {
      names.emplace_back(spelled);
      if (value == field) opt_default = spelled;
    }
    opt = app.add_option_function<std::string>(
                 name,
                 [&field](const std::string& text) {
                   for (const auto& [spelled, value] : option_value_names(V{}))
                     if (spelled == text) field = value;
                 },
                 help)
              ->check(CLI::IsMember(names))
              ->default_str(std::string(opt_default));
  } else {
    static_assert(!sizeof(V), "an option of this type cannot have a flag");
  }
  return opt;
}

/// Registers the flag of every field of `Options::option_table()` that names one; calls
/// `each(field, option)` for each flag registered (e.g. to add an environment variable or keep
/// the option for a check of the tool's own). The defaults shown are `o`'s values at this call,
/// so set a tool's own defaults first.
template <class Options, class Each>
void add_flags_of(CLI::App& app, Options& o, Each&& each) {
  bt::detail::for_each_member(Options::option_table(), [&](const auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, bool> ||
                  std::is_arithmetic_v<V> || std::is_same_v<V, std::chrono::milliseconds> ||
                  std::is_same_v<V, std::vector<std::string>> || has_value_names<V>) {
      if (CLI::Option* opt = add_flag_of(app, o, m)) each(m, opt);
    }  // other types (an object such as a logger, an enum without names) have no flag
  });
}

}  // namespace bt::cli
