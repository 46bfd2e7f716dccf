// `bt-chain metagraph`: read a subnet's metagraph from subtensor (bt::subtensor).
//
//   bt-chain metagraph --netuid 1 [--block 6852690] [--json] [--subtensor.network finney]
//
// stdout: with --json exactly one JSON object (bt::to_json(metagraph)); otherwise a table.
// Exit status: 0 on success; 2 on any failure (bad usage, endpoint, RPC, decode), with
// {"error": "..."} on stderr naming what failed (the endpoint, the method, the decode offset).
#pragma once

#include <endpoint_flags.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>

namespace bt::cli {

struct metagraph_config {
  endpoint_config endpoint;
  std::uint16_t netuid = 0;
  std::optional<std::uint64_t> block;
  bool json = false;
};

CLI::App* add_metagraph_command(CLI::App& app, metagraph_config& cfg);
int run_metagraph(const metagraph_config& cfg, std::ostream& out, std::ostream& err);

}  // namespace bt::cli
