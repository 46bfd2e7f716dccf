// The subtensor endpoint flags of every tool that reads the chain (bt-chain's subcommands,
// bt-axon --netuid, bt-dendrite query --netuid); bt/chain/endpoint.hpp has the rule:
// --subtensor.network, --subtensor.chain_endpoint, BT_SUBTENSOR_CHAIN_ENDPOINT, a timeout
// per JSON-RPC request (named --timeout in bt-chain; --subtensor.timeout in the tools whose
// --timeout means something else), and the largest answer frame (--subtensor.max_frame_mib).
//
// Header-only and part of bt_cli, but it needs bt::chain: only targets that link bt::chain may
// include it.
#pragma once

#include <bt/chain/endpoint.hpp>
#include <bt/chain/rpc_client.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

namespace bt::cli {

struct endpoint_config {
  std::string network;         ///< --subtensor.network finney|test|local|URL
  std::string chain_endpoint;  ///< --subtensor.chain_endpoint URL (wins)
  double timeout = 30.0;       ///< seconds per JSON-RPC request
  /// --subtensor.max_frame_mib: the largest answer frame read, in MiB (rpc_client_options::
  /// max_frame_bytes; the default is the client's, 8 MiB, ten times the largest real answer).
  unsigned max_frame_mib = static_cast<unsigned>(rpc_client_options{}.max_frame_bytes >> 20);
};

/// Adds the flags to `cmd`; `timeout_flag` names the request-timeout option.
inline void add_endpoint_flags(CLI::App* cmd, endpoint_config& cfg,
                               const std::string& timeout_flag = "--timeout") {
  cmd->add_option("--subtensor.network", cfg.network,
                  "finney, test or local (default: BT_SUBTENSOR_CHAIN_ENDPOINT, else finney)");
  cmd->add_option("--subtensor.chain_endpoint", cfg.chain_endpoint,
                  "ws:// or wss:// URL of a subtensor node (wins over --subtensor.network)");
  cmd->add_option(timeout_flag, cfg.timeout, "Seconds per JSON-RPC request (default 30)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--subtensor.max_frame_mib", cfg.max_frame_mib,
                  "Largest answer frame read from the node, in MiB (default 8)")
      ->check(CLI::Range(1u, 1024u));
}

/// The endpoint the flags name, or nullopt and `err`.
inline std::optional<endpoint> resolve(const endpoint_config& cfg, bt::error& err) {
  return resolve_endpoint_from_env(cfg.chain_endpoint, cfg.network, &err);
}

inline rpc_client_options client_options(const endpoint_config& cfg) {
  rpc_client_options o;
  o.request_timeout = std::chrono::milliseconds(static_cast<long long>(cfg.timeout * 1000.0));
  o.connect_timeout = std::min(o.connect_timeout, o.request_timeout);
  o.max_frame_bytes = static_cast<std::size_t>(cfg.max_frame_mib) << 20;
  return o;
}

}  // namespace bt::cli
