// bt-dendrite: the validator-side command-line tool. Each subcommand lives in its own
// <name>_command.{hpp,cpp} exposing add_<name>_command(app, cfg) and run_<name>(cfg, ...);
// adding one is a registration line and a dispatch line below.
#include "encode_command.hpp"
#include "epistula_command.hpp"
#include "query_command.hpp"

#include <bt_cli.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"bt-dendrite: query Bittensor axons and inspect what a dendrite sends"};
  app.require_subcommand(1);

  bt::cli::encode_config encode_cfg;
  auto* encode = bt::cli::add_encode_command(app, encode_cfg);
  bt::cli::query_config query_cfg;
  auto* query = bt::cli::add_query_command(app, query_cfg);
  bt::cli::epistula_config epistula_cfg;
  auto* epistula = bt::cli::add_epistula_command(app, epistula_cfg);

  // --help is 0. Any usage error is 2, reported as every error of bt-dendrite: one JSON object on
  // stderr, {"error": "<the flag and what is wrong, or the unknown command>"}.
  if (const auto rc = bt::cli::parse(app, argc, argv, bt::cli::error_style::json)) return *rc;

  if (encode->parsed()) return bt::cli::run_encode(encode_cfg, std::cin, std::cout);
  if (query->parsed()) return bt::cli::run_query(query_cfg);
  if (epistula->parsed()) return bt::cli::run_epistula(epistula_cfg);
  return 2;
}
