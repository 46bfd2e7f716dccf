// `bt-chain serve-axon`: publish this miner's axon (ip, port, protocol) on a subnet with
// SubtensorModule.serve_axon, signed by the hotkey (bt::prepare_serve_axon, serve_axon.hpp).
//
//   bt-chain serve-axon --netuid 1 --ip 203.0.113.7 --port 8091 [--protocol 4]
//            [--wallet.path P --wallet.name N --wallet.hotkey H | --uri //Alice] [--dry-run]
//
// --dry-run prints exactly one JSON object {"call_hex", "signing_payload_hex", "extrinsic_hex",
// "spec_version", "transaction_version", "nonce", "era_block"} and submits nothing. Otherwise
// the extrinsic is submitted and storage re-read until it shows the axon (--confirm-timeout
// seconds); then one JSON object {"extrinsic_hash", "netuid", "hotkey", "ip", "port",
// "ip_type", "protocol", "version"}.
// Exit status: 0 on success; 2 on any failure, with {"error": "..."} on stderr naming what
// failed (a refused argument, the endpoint, the method, the decode offset).
#pragma once

#include <signing_key.hpp>

#include <endpoint_flags.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>

namespace bt::cli {

struct serve_axon_config {
  endpoint_config endpoint;
  std::uint16_t netuid = 0;
  std::string ip;
  int port = 0;
  int protocol = 4;
  std::int64_t version = 0;  ///< 0: this library's bittensor version_as_int
  key_flags keys;            ///< --uri or --wallet.*: the hotkey that signs
  bool dry_run = false;
  double confirm_timeout = 60.0;
};

CLI::App* add_serve_axon_command(CLI::App& app, serve_axon_config& cfg);
int run_serve_axon(const serve_axon_config& cfg, std::ostream& out, std::ostream& err);

}  // namespace bt::cli
