// bt-chain: read from and write to subtensor, the Bittensor chain. Each subcommand lives in its
// own <name>_command.{hpp,cpp} exposing add_<name>_command(app, cfg) and run_<name>(cfg, ...);
// adding one is a config and an entry of run_subcommand's list below.
#include "metagraph_command.hpp"
#include "serve_axon_command.hpp"

#include <bt_cli.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"bt-chain: read a subnet's metagraph from subtensor and publish an axon"};
  bt::cli::metagraph_config metagraph_cfg;
  bt::cli::serve_axon_config serve_axon_cfg;
  // A usage error is 2 with {"error": "<the option, what it expects and what it got>"} on stderr.
  return bt::cli::run_subcommand(
      app, argc, argv,
      {{bt::cli::add_metagraph_command(app, metagraph_cfg),
        [&] { return bt::cli::run_metagraph(metagraph_cfg, std::cout, std::cerr); }},
       {bt::cli::add_serve_axon_command(app, serve_axon_cfg),
        [&] { return bt::cli::run_serve_axon(serve_axon_cfg, std::cout, std::cerr); }}});
}
