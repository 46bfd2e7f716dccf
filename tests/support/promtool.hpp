// `promtool check metrics` on a rendered exposition text: Prometheus' own parser and linter
// judges what bt::metrics writes. promtool must be installed (scripts/setup: the prometheus
// package); a test that cannot find it fails rather than skipping.
#pragma once

#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace bt::test {

struct promtool_result {
  int exit_code = -1;
  std::string output;  // what promtool printed (its findings), stdout and stderr
};

inline promtool_result promtool_check_metrics(const std::string& text) {
  const int found = std::system("command -v promtool >/dev/null 2>&1");
  INFO("promtool not found on PATH (Debian: the prometheus package; scripts/setup installs it)");
  REQUIRE(found == 0);
  temp_dir dir("bt-promtool");
  const auto in = dir.path / "metrics.txt";
  const auto out = dir.path / "promtool.out";
  {
    std::ofstream f(in, std::ios::binary);
    f << text;
  }
  const std::string cmd = "promtool check metrics < " + shell_quote(in.string()) + " > " +
                          shell_quote(out.string()) + " 2>&1";
  const int status = std::system(cmd.c_str());
  promtool_result r;
  r.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(out, std::ios::binary);
  r.output.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return r;
}

}  // namespace bt::test
