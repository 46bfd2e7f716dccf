// bt_cli: what every command-line tool (bt-axon, bt-dendrite, bt-wallet, bt-ping) shares about
// bad usage. Header-only, included as <bt_cli.hpp> through the CMake INTERFACE target `bt_cli`
// (cli/CMakeLists.txt); neither installed nor exported: it belongs to the tools, not the libraries.
//
// Contract:
// - bt::cli::parse(app, argc, argv, style) parses; --help and --version print and give 0; any
//   usage error is reported on stderr by report_error() and gives 2; success gives std::nullopt
//   (go on). bt-wallet, whose errors go to stdout, calls usage_message() instead.
// - report_error(err, tool, style, message) is how a tool states what stopped it (bad usage,
//   exit 2, or a failure, exit 1): error_style::text, "<tool>: <message>", for tools whose
//   stderr is a log or whose output is a report for people (bt-axon, bt-ping);
//   error_style::json, one line {"error": "<message>"}, for tools whose output scripts parse
//   (bt-dendrite, bt-chain).
// - usage_message() names the problem: for a value that does not convert or validate, the option,
//   what it expects and what it got ("--count: expected a positive integer, got 'abc'"); for an
//   unknown or missing subcommand, the word that was given and the subcommands there are; for an
//   unknown option, the option it was probably meant to be ("did you mean '--axon.port'?").
// - in_range<T>(lo, hi) and positive<T>() are validators whose messages read that way; use them
//   instead of CLI::Range / CLI::PositiveNumber (whose message for a non-number is "Value abc not
//   in range 0 to 1.79769e+308").
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bt::cli {

namespace detail {

/// "an integer", "a non-negative integer" or "a number", for T.
template <class T>
std::string kind_of() {
  if constexpr (std::is_floating_point_v<T>) return "a number";
  if constexpr (std::is_unsigned_v<T>) return "a non-negative integer";
  return "an integer";
}

/// The whole of `text` as a T (integers: decimal digits, optional '-' for signed types; numbers:
/// finite decimal), or nullopt.
template <class T>
std::optional<T> parse_value(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
      return std::nullopt;
    return static_cast<T>(v);
  } else {
    T v{};
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
    return v;
  }
}

template <class T>
std::string to_text(T v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// The expectation for an option CLI11 could not convert, from its type name.
inline std::string expected_for(const CLI::Option& opt) {
  const std::string t = opt.get_type_name();
  if (t.rfind("UINT", 0) == 0) return "a non-negative integer";
  if (t.rfind("INT", 0) == 0) return "an integer";
  if (t.rfind("FLOAT", 0) == 0) return "a number";
  if (t.rfind("BOOLEAN", 0) == 0) return "true or false";
  return "a valid value";
}

/// The subcommand the parse reached last (the app itself when none was parsed).
inline const CLI::App* deepest_parsed(const CLI::App& app) {
  const CLI::App* cur = &app;
  for (;;) {
    const auto subs = cur->get_subcommands();
    if (subs.empty()) return cur;
    cur = subs.back();
  }
}

/// The option named `name` ("--count", "-c") in `app` or its subcommands, or null.
inline const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::App* a = deepest_parsed(app); a; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      if (o->get_name() == name || o->check_name(name)) return o;
    }
  }
  return nullptr;
}

/// "a, b, c": the names of the subcommands of `app`.
inline std::string subcommand_list(const CLI::App& app) {
  std::string out;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name().empty()) continue;  // option groups
    if (!out.empty()) out += ", ";
    out += s->get_name();
  }
  return out;
}

/// "bt-wallet ss58": the command line path of `app`.
inline std::string command_path(const CLI::App& app) {
  std::string out;
  for (const CLI::App* p = &app; p; p = p->get_parent()) {
    std::string name = p->get_name();
    if (!p->get_parent()) name = name.substr(name.find_last_of('/') + 1);  // argv[0]
    out = out.empty() ? name : name + " " + out;
  }
  return out;
}

/// The edit distance (insertions, deletions, substitutions) between `a` and `b`.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The long option of `app` (or of a command above it) that an unknown `given` ("--axon.prot",
/// "--axon.prot=1") was probably meant to be: the nearest within two edits and less than half
/// the word, else the only one that begins with it; empty when there is none.
inline std::string nearest_option(const CLI::App& app, std::string_view given) {
  given = given.substr(0, given.find('='));
  const auto start = given.find_first_not_of('-');
  if (start == std::string_view::npos) return {};
  const std::string_view word = given.substr(start);
  std::string nearest, only_prefixed;
  std::size_t nearest_distance = std::min<std::size_t>(3, (word.size() + 1) / 2), prefixed = 0;
  for (const CLI::App* a = &app; a; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& name : o->get_lnames()) {
        if (const std::size_t d = edit_distance(word, name); d < nearest_distance) {
          nearest_distance = d;
          nearest = name;
        }
        if (name.starts_with(word)) {
          ++prefixed;
          only_prefixed = name;
        }
      }
    }
  }
  if (!nearest.empty()) return "--" + nearest;
  return prefixed == 1 ? "--" + only_prefixed : std::string();
}

}  // namespace detail

/// Accepts an integer (or, for floating-point T, a finite number) from lo to hi inclusive.
/// Failure: "expected an integer from 0 to 65535, got 'abc'".
template <class T>
CLI::Validator in_range(T lo, T hi) {
  const std::string what =
      detail::kind_of<T>() + " from " + detail::to_text(lo) + " to " + detail::to_text(hi);
  return CLI::Validator(
      [lo, hi, what](std::string& in) -> std::string {
        const auto v = detail::parse_value<T>(in);
        if (!v || *v < lo || *v > hi) return "expected " + what + ", got '" + in + "'";
        return {};
      },
      std::string(std::is_floating_point_v<T> ? "FLOAT" : "INT") + " in [" + detail::to_text(lo) +
          " - " + detail::to_text(hi) + "]");
}

/// Accepts a positive integer (or, for floating-point T, a finite positive number).
/// Failure: "expected a positive integer, got 'abc'".
template <class T>
CLI::Validator positive() {
  const std::string what = std::is_floating_point_v<T> ? "a positive number" : "a positive integer";
  return CLI::Validator(
      [what](std::string& in) -> std::string {
        const auto v = detail::parse_value<T>(in);
        if (!v || !(*v > T{})) return "expected " + what + ", got '" + in + "'";
        return {};
      },
      "POSITIVE");
}

/// Reads the whole file at `path` into `out`. On failure returns false and sets `why` to
/// "cannot read PATH: <reason>" (the system's reason: no such file, permission denied, a
/// directory...), so that a message never says only "cannot read".
inline bool read_file(const std::string& path, std::string& out, std::string& why) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  auto failed = [&](int e) {
    why = "cannot read " + path + ": " + std::strerror(e ? e : EIO);
    return false;
  };
  if (!f) return failed(errno);
  out.clear();
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool error = std::ferror(f) != 0;
  const int e = errno;  // before fclose, which may change it
  std::fclose(f);
  if (error) return failed(e);
  return true;
}

/// Makes every unsigned-integer option of `app` and its subcommands refuse what is not a plain
/// non-negative integer: CLI11 itself accepts "-1" for a std::size_t and stores 2^64-1. Appended
/// after the option's own validators, so an in_range<> message still comes first. parse() calls
/// it; a tool that calls app.parse itself calls it before.
inline void strict_unsigned(CLI::App& app) {
  for (CLI::Option* o : app.get_options([](const CLI::Option*) { return true; })) {
    if (o->get_type_name().rfind("UINT", 0) != 0) continue;
    o->check(CLI::Validator(
        [](std::string& in) -> std::string {
          if (detail::parse_value<unsigned long long>(in)) return {};
          return "expected a non-negative integer, got '" + in + "'";
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    strict_unsigned(*sub);
}

/// The message for a usage error of `app` (see the top of this file); without a trailing newline.
inline std::string usage_message(const CLI::App& app, const CLI::ParseError& e) {
  const std::string what = e.what();
  const CLI::App* cur = detail::deepest_parsed(app);

  // A subcommand misspelt (CLI11 calls it an extra argument) or missing.
  const bool has_subcommands = !detail::subcommand_list(*cur).empty();
  const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
  const bool missing_sub =
      dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && what.rfind("A subcommand", 0) == 0;
  if (has_subcommands && cur->get_subcommands().empty() && (extras || missing_sub)) {
    const std::string path = detail::command_path(*cur);
    std::string word;
    for (const std::string& r : cur->remaining()) {
      if (!r.empty() && r[0] != '-') {
        word = r;
        break;
      }
    }
    if (!word.empty())
      return "unknown command '" + word + "'; " + path + " has: " + detail::subcommand_list(*cur);
    if (missing_sub)
      return "a command is required; " + path + " has: " + detail::subcommand_list(*cur);
  }

  // Words left over: an unknown option, or an argument nothing takes.
  if (extras) {
    const std::vector<std::string> left = app.remaining(true);
    std::string options, others, suggestion;
    std::size_t unknown_options = 0;
    for (const std::string& r : left) {
      const bool option = !r.empty() && r[0] == '-';
      std::string& to = option ? options : others;
      to += (to.empty() ? "'" : ", '") + r + "'";
      if (option && ++unknown_options == 1) suggestion = detail::nearest_option(*cur, r);
    }
    const std::string path = detail::command_path(*cur);
    if (!options.empty())
      return "unknown option " + options + " for " + path +
             (unknown_options == 1 && !suggestion.empty() ? "; did you mean '" + suggestion + "'?"
                                                          : std::string());
    if (!others.empty()) return "unexpected argument " + others + " for " + path;
  }

  // A value that does not convert ("Could not convert: --count = abc") or validate.
  if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    const std::string prefix = "Could not convert: ";
    const auto eq = what.find(" = ");
    if (what.rfind(prefix, 0) == 0 && eq != std::string::npos) {
      const std::string name = what.substr(prefix.size(), eq - prefix.size());
      const std::string got = what.substr(eq + 3);
      if (const CLI::Option* o = detail::find_option(app, name))
        return name + ": expected " + detail::expected_for(*o) + ", got '" + got + "'";
    }
  }
  return what;
}

/// How a tool reports what stopped it; see the top of this file.
enum class error_style { text, json };

/// Writes `message` on `err` in `style`, as one line. `tool` is the program's name ("bt-ping";
/// a path is cut to its last component); json leaves it out, as the whole stream is the tool's.
inline void report_error(std::ostream& err, std::string_view tool, error_style style,
                         const std::string& message) {
  if (style == error_style::json) {
    err << nlohmann::json{{"error", message}}.dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace)
        << std::endl;
    return;
  }
  if (const auto slash = tool.find_last_of('/'); slash != std::string_view::npos)
    tool.remove_prefix(slash + 1);
  err << tool << ": " << message << std::endl;
}

/// Parses argv. nullopt: go on. 0: --help or --version was printed. 2: a usage error was
/// reported on `err` in `style` (text adds a line pointing to --help).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv,
                                error_style style = error_style::text,
                                std::ostream& err = std::cerr) {
  strict_unsigned(app);
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version: on stdout, exit 0
  } catch (const CLI::ParseError& e) {
    const std::string tool = app.get_name();  // CLI11 sets it from argv[0] when unnamed
    const std::string base = tool.substr(tool.find_last_of('/') + 1);
    report_error(err, base, style, usage_message(app, e));
    if (style == error_style::text) err << "Run '" << base << " --help' for usage.\n";
    return 2;
  }
}

/// One subcommand of a tool: what its add_<name>_command registered, and its run_<name>.
struct subcommand {
  const CLI::App* command;
  std::function<int()> run;
};

/// The main of a tool made of subcommands (bt-chain, bt-dendrite): exactly one must be given.
/// --help is 0; a usage error is 2 with one JSON object on stderr (parse, error_style::json), as
/// every other failure of those tools; else the exit code of the given subcommand's run.
inline int run_subcommand(CLI::App& app, int argc, char** argv,
                          std::initializer_list<subcommand> commands,
                          std::ostream& err = std::cerr) {
  app.require_subcommand(1);
  if (const auto rc = parse(app, argc, argv, error_style::json, err)) return *rc;
  for (const auto& c : commands)
    if (c.command->parsed()) return c.run();
  return 2;
}

}  // namespace bt::cli
