// tools/common/bt_cli.hpp: the usage-error messages the tools share, on small CLI11 apps built
// here.
#include <bt_cli.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// Parses `args` (argv[0] is added) with app.parse; the usage message of the error, or "" when
/// the parse succeeded.
std::string message_of(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  bt::cli::strict_unsigned(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    return "";
  } catch (const CLI::ParseError& e) {
    return bt::cli::usage_message(app, e);
  }
}

}  // namespace

TEST_CASE("bt_cli: in_range and positive name the flag, the expectation and the value") {
  {
    CLI::App app{"t", "prog"};
    int port = 0;
    app.add_option("--port", port)->check(bt::cli::in_range(0, 65535));
    CHECK(message_of(app, {"--port", "abc"}) ==
          "--port: expected an integer from 0 to 65535, got 'abc'");
  }
  {
    CLI::App app{"t", "prog"};
    int port = 0;
    app.add_option("--port", port)->check(bt::cli::in_range(0, 65535));
    CHECK(message_of(app, {"--port", "70000"}) ==
          "--port: expected an integer from 0 to 65535, got '70000'");
  }
  {
    CLI::App app{"t", "prog"};
    int port = 0;
    app.add_option("--port", port)->check(bt::cli::in_range(0, 65535));
    CHECK(message_of(app, {"--port", "8091"}).empty());
    CHECK(port == 8091);
  }
  for (const char* bad : {"0", "-1", "abc", "nan", "inf", "1e400", ""}) {
    CLI::App app{"t", "prog"};
    double t = 0;
    app.add_option("--timeout", t)->check(bt::cli::positive<double>());
    INFO(bad);
    CHECK(message_of(app, {"--timeout", bad}) ==
          std::string("--timeout: expected a positive number, got '") + bad + "'");
  }
  {
    CLI::App app{"t", "prog"};
    std::size_t n = 0;
    app.add_option("--count", n)->check(bt::cli::positive<std::size_t>());
    CHECK(message_of(app, {"--count", "1.79e308"}) ==
          "--count: expected a positive integer, got '1.79e308'");
  }
}

TEST_CASE("bt_cli: values CLI11 cannot convert, and negative unsigned values, are named") {
  {
    CLI::App app{"t", "prog"};
    double t = 0;
    app.add_option("--timeout", t);
    CHECK(message_of(app, {"--timeout", "soon"}) == "--timeout: expected a number, got 'soon'");
  }
  {
    CLI::App app{"t", "prog"};
    int n = 0;
    app.add_option("--n", n);
    CHECK(message_of(app, {"--n", "x"}) == "--n: expected an integer, got 'x'");
  }
  {
    // Without strict_unsigned CLI11 stores 2^64-1 for "-1".
    CLI::App app{"t", "prog"};
    std::size_t n = 7;
    app.add_option("--connections", n);
    CHECK(message_of(app, {"--connections", "-1"}) ==
          "--connections: expected a non-negative integer, got '-1'");
    CHECK(n == 7);
  }
}

TEST_CASE("bt_cli: a misspelt or missing subcommand is named with the subcommands there are") {
  auto make = [](CLI::App& app) {
    app.require_subcommand(1);
    app.add_subcommand("show", "");
    auto* ss58 = app.add_subcommand("ss58", "");
    ss58->require_subcommand(1);
    ss58->add_subcommand("decode", "");
    ss58->add_subcommand("encode", "");
  };
  {
    CLI::App app{"t", "prog"};
    make(app);
    CHECK(message_of(app, {"shwo"}) == "unknown command 'shwo'; prog has: show, ss58");
  }
  {
    CLI::App app{"t", "prog"};
    make(app);
    CHECK(message_of(app, {}) == "a command is required; prog has: show, ss58");
  }
  {
    CLI::App app{"t", "prog"};
    make(app);
    CHECK(message_of(app, {"ss58", "dcode", "x"}) ==
          "unknown command 'dcode'; prog ss58 has: decode, encode");
  }
  {
    CLI::App app{"t", "prog"};
    make(app);
    CHECK(message_of(app, {"show", "--bogus"}) == "unknown option '--bogus' for prog show");
  }
  {
    CLI::App app{"t", "prog"};
    make(app);
    CHECK(message_of(app, {"show", "extra"}) == "unexpected argument 'extra' for prog show");
  }
}

TEST_CASE("bt_cli: an unknown option is answered with the one it was probably meant to be") {
  const auto message_for = [](std::vector<std::string> args) {
    CLI::App app{"t", "prog"};
    int port = 0, timeout = 0, workers = 0;
    app.add_option("--axon.port", port);
    app.add_option("--axon.timeout", timeout);
    app.add_option("--max_workers", workers);
    return message_of(app, std::move(args));
  };
  CHECK(message_for({"--axon.prot", "1"}) ==
        "unknown option '--axon.prot' for prog; did you mean '--axon.port'?");
  CHECK(message_for({"--axon.prot=1"}) ==
        "unknown option '--axon.prot=1' for prog; did you mean '--axon.port'?");
  CHECK(message_for({"--max-workers", "2"}) ==
        "unknown option '--max-workers' for prog; did you mean '--max_workers'?");
  // The only option it begins: a word cut short.
  CHECK(message_for({"--axon.t", "3"}) ==
        "unknown option '--axon.t' for prog; did you mean '--axon.timeout'?");
  // Nothing near: no guess.
  CHECK(message_for({"--verbose"}) == "unknown option '--verbose' for prog");
  CHECK(message_for({"--x"}) == "unknown option '--x' for prog");
  CHECK(bt::cli::detail::edit_distance("axon.prot", "axon.port") == 2);
  CHECK(bt::cli::detail::edit_distance("", "abc") == 3);
}

TEST_CASE("bt_cli: parse gives 2 with the message, 0 for --help, nullopt to go on") {
  auto run = [](std::vector<std::string> args, std::string& err,
                bt::cli::error_style style = bt::cli::error_style::text) {
    CLI::App app{"t", "prog"};
    std::size_t n = 1;
    app.add_option("--count", n)->check(bt::cli::positive<std::size_t>());
    args.insert(args.begin(), "/some/dir/prog");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream e;
    const auto rc = bt::cli::parse(app, static_cast<int>(argv.size()), argv.data(), style, e);
    err = e.str();
    return rc;
  };
  std::string err;
  CHECK(run({"--count", "abc"}, err) == std::optional<int>(2));
  CHECK(err ==
        "prog: --count: expected a positive integer, got 'abc'\nRun 'prog --help' for usage.\n");
  CHECK(run({"--count", "3"}, err) == std::nullopt);
  CHECK(err.empty());
  CHECK(run({"--help"}, err) == std::optional<int>(0));
  // A JSON tool: one object on one line, the message unchanged (quotes escaped).
  CHECK(run({"--count", "\"x\""}, err, bt::cli::error_style::json) == std::optional<int>(2));
  CHECK(err == R"({"error":"--count: expected a positive integer, got '\"x\"'"})"
               "\n");
}

TEST_CASE("bt_cli: run_subcommand runs the subcommand given, and is 2 for none or an unknown one") {
  auto run = [](std::vector<std::string> args, std::string& err) {
    CLI::App app{"t", "prog"};
    args.insert(args.begin(), "prog");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream e;
    int ran = 0;
    const int rc = bt::cli::run_subcommand(app, static_cast<int>(argv.size()), argv.data(),
                                           {{app.add_subcommand("one"),
                                             [&] {
                                               ran = 1;
                                               return 10;
                                             }},
                                            {app.add_subcommand("two"),
                                             [&] {
                                               ran = 2;
                                               return 20;
                                             }}},
                                           e);
    err = e.str();
    return std::pair{rc, ran};
  };
  std::string err;
  CHECK(run({"two"}, err) == std::pair{20, 2});
  CHECK(run({"one"}, err) == std::pair{10, 1});
  CHECK(err.empty());
  CHECK(run({}, err) == std::pair{2, 0});
  CHECK(err.rfind("{\"error\":", 0) == 0);
  CHECK(run({"three"}, err) == std::pair{2, 0});
  CHECK(err.find("three") != std::string::npos);
}

TEST_CASE("bt_cli: report_error writes one line in the tool's style") {
  std::ostringstream text, json;
  bt::cli::report_error(text, "/usr/bin/bt-ping", bt::cli::error_style::text, "no target");
  CHECK(text.str() == "bt-ping: no target\n");
  bt::cli::report_error(json, "bt-dendrite", bt::cli::error_style::json, "line1\nline2");
  CHECK(json.str() == "{\"error\":\"line1\\nline2\"}\n");
}

TEST_CASE("bt_cli: read_file says why a file cannot be read") {
  std::string out, why;
  const auto dir =
      std::filesystem::temp_directory_path() / ("bt-cli-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string missing = (dir / "none.json").string();
  CHECK_FALSE(bt::cli::read_file(missing, out, why));
  CHECK(why == "cannot read " + missing + ": No such file or directory");
  CHECK_FALSE(bt::cli::read_file(dir.string(), out, why));
  CHECK(why == "cannot read " + dir.string() + ": Is a directory");
  const std::string file = (dir / "x.txt").string();
  std::FILE* f = std::fopen(file.c_str(), "wb");
  REQUIRE(f);
  std::fputs("hello\n", f);
  std::fclose(f);
  CHECK(bt::cli::read_file(file, out, why));
  CHECK(out == "hello\n");
  std::filesystem::remove_all(dir);
}
