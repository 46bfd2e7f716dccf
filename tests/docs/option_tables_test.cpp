// The option tables (bt/option_table.hpp) against their copies: every field of
// bt::axon_options::option_table() has a row in docs/axon.md's options table and no row names a
// field the table lacks; docs/python.md's list of Axon keywords names exactly the fields Python
// accepts; and bt-axon --help and bt-dendrite query --help list the flag of every field that has
// one. A field added to the struct and its table but not documented, or a flag lost, fails here.
#include <bt/axon_options.hpp>
#include <bt/dendrite.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>

namespace {

/// The text of `path`, relative to the source tree.
std::string read_source(const std::string& path) {
  std::ifstream in(std::string(BT_SOURCE_DIR) + "/" + path);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The lines of `doc` from the one starting with `heading` to the next heading of any level.
std::string section(const std::string& doc, const std::string& heading) {
  const auto start = doc.find("\n" + heading);
  REQUIRE(start != std::string::npos);
  const auto end = doc.find("\n#", start + 1);
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

/// The `identifiers` (lower case, digits, underscores) quoted in `text`.
std::set<std::string> quoted_names(const std::string& text) {
  std::set<std::string> names;
  static const std::regex name("`([a-z][a-z0-9_]*)`");
  for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it)
    names.insert((*it)[1]);
  return names;
}

template <class Table>
std::set<std::string> field_names(const Table& table) {
  std::set<std::string> names;
  bt::detail::for_each_member(table, [&](const auto& m) { names.emplace(m.name); });
  return names;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// What `a` has and `b` has not.
std::set<std::string> minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  for (const auto& n : a)
    if (!b.count(n)) out.insert(n);
  return out;
}

}  // namespace

TEST_CASE("docs: docs/axon.md's options table has a row for exactly the fields of axon_options") {
  const auto table = field_names(bt::axon_options::option_table());
  // The first cell of each row: "| `name` |" or "| `a` / `b` |".
  std::set<std::string> documented;
  std::istringstream rows(
      section(read_source("docs/axon.md"), "## Options and defaults (`bt::axon_options`)"));
  for (std::string line; std::getline(rows, line);)
    if (line.rfind("| `", 0) == 0) {
      const auto cell = line.substr(0, line.find('|', 1));
      for (const auto& n : quoted_names(cell)) documented.insert(n);
    }
  INFO("fields without a row: " << joined(minus(table, documented)));
  INFO("rows without a field: " << joined(minus(documented, table)));
  CHECK(documented == table);
}

/// The keywords Python's Axon() takes from the table: every value field; ip and port are
/// arguments of their own, and the nonce store and the logger are objects (python/src/axon.cpp,
/// options_from).
std::set<std::string> python_axon_keywords() {
  std::set<std::string> keywords = field_names(bt::axon_options::option_table());
  for (const char* n : {"ip", "port", "nonces", "logger"}) keywords.erase(n);
  return keywords;
}

TEST_CASE("docs: docs/python.md lists exactly the Axon keywords the table gives Python") {
  const auto keywords = python_axon_keywords();
  const std::string doc = read_source("docs/python.md");
  const auto start = doc.find("Axon options are");
  REQUIRE(start != std::string::npos);
  const auto end = doc.find("An unknown keyword", start);
  REQUIRE(end != std::string::npos);
  const auto documented = quoted_names(doc.substr(start, end - start));
  INFO("keywords not listed: " << joined(minus(keywords, documented)));
  INFO("listed, not keywords: " << joined(minus(documented, keywords)));
  CHECK(documented == keywords);
}

/// The keyword parameters ("name: type") of `cls`'s __init__ in the type stub, without the
/// arguments of its own (`own`).
std::set<std::string> stub_keywords(const std::string& cls,
                                    std::initializer_list<const char*> own) {
  const std::string stub = read_source("python/bittensor_cpp.pyi");
  const auto start = stub.find("class " + cls + ":");
  REQUIRE(start != std::string::npos);
  const auto end = stub.find(") -> None", start);
  REQUIRE(end != std::string::npos);
  std::set<std::string> stubbed;
  const std::string params = stub.substr(start, end - start);
  static const std::regex param("([a-z][a-z0-9_]*): ");
  for (std::sregex_iterator it(params.begin(), params.end(), param), e; it != e; ++it)
    stubbed.insert((*it)[1]);
  for (const char* n : own) stubbed.erase(n);
  return stubbed;
}

TEST_CASE("docs: the type stub's Axon() names exactly the keywords the table gives Python") {
  const auto stubbed = stub_keywords("Axon", {"keypair", "ip", "port", "loop"});
  const auto keywords = python_axon_keywords();
  INFO("keywords not in the stub: " << joined(minus(keywords, stubbed)));
  INFO("in the stub, not keywords: " << joined(minus(stubbed, keywords)));
  CHECK(stubbed == keywords);
}

TEST_CASE("docs: the type stub's Dendrite() names exactly the keywords the table gives Python") {
  // Every value field of dendrite_options; the logger is an object (python/src/dendrite.cpp).
  auto keywords = field_names(bt::dendrite_options::option_table());
  keywords.erase("logger");
  const auto stubbed = stub_keywords("Dendrite", {"keypair"});
  INFO("keywords not in the stub: " << joined(minus(keywords, stubbed)));
  INFO("in the stub, not keywords: " << joined(minus(stubbed, keywords)));
  CHECK(stubbed == keywords);
}

TEST_CASE("docs: docs/dendrite.md's dendrite_options declares exactly the table's fields") {
  // The struct as docs/dendrite.md's "API" block shows it: one member per line,
  // "type name = default;" or "type name{...};".
  const std::string doc = read_source("docs/dendrite.md");
  const auto start = doc.find("struct dendrite_options {");
  REQUIRE(start != std::string::npos);
  const auto end = doc.find("\n};", start);
  REQUIRE(end != std::string::npos);
  std::set<std::string> documented;
  static const std::regex member("^  [A-Za-z0-9_:<>, ]+[ >]([a-z][a-z0-9_]*) *(=|\\{|;)");
  std::istringstream lines(doc.substr(start, end - start));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, member)) documented.insert(m[1]);
  }
  const auto table = field_names(bt::dendrite_options::option_table());
  INFO("fields not declared: " << joined(minus(table, documented)));
  INFO("declared, not fields: " << joined(minus(documented, table)));
  CHECK(documented == table);
}

namespace {

/// The flags (--name) that `command`'s --help lists: an option line starts with spaces and the
/// flag, followed by a space or '='.
std::set<std::string> help_flags(const std::string& command) {
  std::string help;
  {
    FILE* p = ::popen((command + " --help 2>&1").c_str(), "r");
    REQUIRE(p);
    std::array<char, 4096> buf{};
    for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
      help.append(buf.data(), n);
    REQUIRE(::pclose(p) == 0);
  }
  std::set<std::string> listed;
  static const std::regex flag("^ +(--[a-z][a-z0-9_.-]*)");
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, flag)) listed.insert(m[1]);
  }
  return listed;
}

/// The flags that the fields of `table` name.
template <class Table>
std::set<std::string> table_flags(const Table& table) {
  std::set<std::string> flags;
  bt::detail::for_each_member(table, [&](const auto& m) {
    if (!m.cli.flag.empty()) flags.insert("--" + std::string(m.cli.flag));
  });
  return flags;
}

}  // namespace

TEST_CASE("docs: bt-axon --help lists the flag of every axon_options field that has one") {
  const auto listed = help_flags(BT_AXON_EXE);
  const auto flags = table_flags(bt::axon_options::option_table());
  CHECK(flags.size() > 30);
  INFO("flags missing from --help: " << joined(minus(flags, listed)));
  CHECK(minus(flags, listed).empty());
}

TEST_CASE(
    "docs: bt-dendrite query --help lists the flag of every dendrite_options field that "
    "has one") {
  const auto listed = help_flags(BT_DENDRITE_EXE " query");
  const auto flags = table_flags(bt::dendrite_options::option_table());
  // The documented names of bt-dendrite's flags: the table must keep them.
  CHECK(flags ==
        std::set<std::string>{"--concurrency", "--external-ip", "--session", "--verify-responses"});
  INFO("flags missing from --help: " << joined(minus(flags, listed)));
  CHECK(minus(flags, listed).empty());
}
