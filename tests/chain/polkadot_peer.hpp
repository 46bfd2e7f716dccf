// Runs one of tests/node's @polkadot/types checkers (chain_decode_peer.mjs,
// chain_extrinsic_peer.mjs) for the chain tests: `node <script> <args...>` in tests/node, bounded
// by `timeout 120` (a hung peer fails the test instead of hanging it), then the JSON the script
// wrote to `out`. Node or the pinned npm packages missing fail the test with how to install them;
// a failing script fails it with the script's stderr.
#pragma once

#include <bt/json.hpp>

#include <catch2/catch.hpp>
#include <support/temp_dir.hpp>

#include "support/vectors.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bt::test {

inline bt::json run_polkadot_peer(const std::string& script, const std::vector<std::string>& args,
                                  const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  const fs::path node_dir = fs::path(source_dir()) / "tests" / "node";
  REQUIRE(fs::exists(node_dir / script));
  {
    INFO("tests/node/node_modules is missing: run scripts/setup (npm ci in tests/node)");
    REQUIRE(fs::exists(node_dir / "node_modules" / "@polkadot" / "types" / "package.json"));
  }
  {
    INFO("node not found on PATH");
    REQUIRE(std::system("node --version > /dev/null 2>&1") == 0);
  }
  const fs::path err = fs::path(out).concat(".stderr");
  std::string cmd = "cd " + shell_quote(node_dir.string()) + " && timeout 120 node " + script;
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " 2> " + shell_quote(err.string());
  const int rc = std::system(cmd.c_str());
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  INFO("peer stderr: " << slurp(err));
  REQUIRE(rc == 0);
  REQUIRE(fs::exists(out));
  return bt::json::parse(slurp(out));
}

}  // namespace bt::test
