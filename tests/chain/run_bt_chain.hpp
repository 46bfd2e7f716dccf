// Runs the bt-chain under test (BT_CHAIN_EXE) with `args` (shell-quoted by the caller) and
// returns its exit status, stdout and stderr, captured separately: for the chain CLI tests.
#pragma once

#include <catch2/catch.hpp>

#include "support/run_command.hpp"
#include "support/vectors.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace bt::test {

struct bt_chain_result {
  int status = -1;
  std::string out;
  std::string err;
};

inline bt_chain_result run_bt_chain(const std::string& args) {
  // One stderr file per process and call: ctest may run test cases in parallel.
  static int calls = 0;
  const std::string err_file = binary_dir() + "/bt_chain_test." + std::to_string(::getpid()) + "." +
                               std::to_string(++calls) + ".stderr";
  const std::string cmd = std::string(BT_CHAIN_EXE) + " " + args + " 2>" + err_file;
  auto [status, out] = bt::test::run_command(cmd);
  bt_chain_result r;
  r.status = status;
  r.out = std::move(out);
  std::array<char, 65536> buf{};
  std::size_t n;
  if (FILE* e = std::fopen(err_file.c_str(), "r")) {
    while ((n = fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
    std::fclose(e);
  }
  std::remove(err_file.c_str());
  return r;
}

}  // namespace bt::test
