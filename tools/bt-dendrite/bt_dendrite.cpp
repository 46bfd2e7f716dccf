// bt-dendrite: the validator-side command-line tool. Each subcommand lives in its own
// <name>_command.{hpp,cpp} exposing add_<name>_command(app, cfg) and run_<name>(cfg, ...);
// adding one is a config and an entry of run_subcommand's list below.
#include "encode_command.hpp"
#include "plain_request_command.hpp"
#include "query_command.hpp"

#include <bt_cli.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"bt-dendrite: query Bittensor axons and inspect what a dendrite sends"};
  bt::cli::encode_config encode_cfg;
  bt::cli::query_config query_cfg;
  bt::cli::plain_request_config epistula_cfg, btauth_cfg;
  // A usage error is 2 with {"error": "<the flag and what is wrong, or the unknown command>"} on
  // stderr, as every error of bt-dendrite.
  return bt::cli::run_subcommand(
      app, argc, argv,
      {{bt::cli::add_encode_command(app, encode_cfg),
        [&] { return bt::cli::run_encode(encode_cfg, std::cin, std::cout); }},
       {bt::cli::add_query_command(app, query_cfg), [&] { return bt::cli::run_query(query_cfg); }},
       {bt::cli::add_plain_request_command(app, bt::wire_dialect::epistula, epistula_cfg),
        [&] { return bt::cli::run_plain_request(epistula_cfg); }},
       {bt::cli::add_plain_request_command(app, bt::wire_dialect::btauth, btauth_cfg),
        [&] { return bt::cli::run_plain_request(btauth_cfg); }}});
}
