// Runs a shell command line for the command-line tests: its exit status and standard output
// (standard error goes wherever the command line redirects it, else to the test log).
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace bt::test {

struct command_result {
  int status = -1;  ///< the exit status; -1 when the command did not exit normally
  std::string out;
};

inline command_result run_command(const std::string& command_line) {
  command_result r;
  FILE* p = ::popen(command_line.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 65536> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace bt::test
