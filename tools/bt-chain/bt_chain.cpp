// bt-chain: read from and write to subtensor, the Bittensor chain. Each subcommand lives in its
// own <name>_command.{hpp,cpp} exposing add_<name>_command(app, cfg) and run_<name>(cfg, ...);
// adding one is a registration line and a dispatch line below.
#include "metagraph_command.hpp"
#include "serve_axon_command.hpp"

#include <bt_cli.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"bt-chain: read a subnet's metagraph from subtensor and publish an axon"};
  app.require_subcommand(1);

  bt::cli::metagraph_config metagraph_cfg;
  auto* metagraph = bt::cli::add_metagraph_command(app, metagraph_cfg);
  bt::cli::serve_axon_config serve_axon_cfg;
  auto* serve_axon = bt::cli::add_serve_axon_command(app, serve_axon_cfg);

  // --help is 0. Any usage error is 2 with one JSON object on stderr, as every other failure of
  // bt-chain: {"error": "<the option, what it expects and what it got>"}.
  if (const auto rc = bt::cli::parse(app, argc, argv, bt::cli::error_style::json)) return *rc;

  if (metagraph->parsed()) return bt::cli::run_metagraph(metagraph_cfg, std::cout, std::cerr);
  if (serve_axon->parsed()) return bt::cli::run_serve_axon(serve_axon_cfg, std::cout, std::cerr);
  return 2;
}
