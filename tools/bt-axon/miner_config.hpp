// bt-axon's configuration: everything its flags set, in one struct, and the binder that registers
// the flags and checks what they cannot check alone. The axon's own options are
// bt::axon_options, bound field by field from its table (axon_flags.hpp); the rest (identity,
// access policy, replay store, logging, the example routes) is bt-axon's.
#pragma once

#include <bt/axon_options.hpp>
#include <bt/nonce_store.hpp>
#include <bt/redis_nonce_store.hpp>
#include <bt/wallet.hpp>

#include <endpoint_flags.hpp>
#include <log_setup.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace bt::miner {

struct miner_config {
  // ---- identity ----
  bt::wallet_config wallet = bt::wallet_config::from_env();
  std::string uri;  ///< --uri: a secret URI instead of the wallet
  // ---- access policy (miner_policy.hpp, chain_policy.hpp) ----
  std::string deny_file, metagraph_file;
  std::optional<std::uint16_t> netuid;  ///< --netuid: the metagraph from the chain
  bt::cli::endpoint_config chain;
  unsigned refresh_s = 300;
  bool allow_non_registered = false, force_validator_permit = false;
  // ---- replay store (docs/axon.md "Nonces", docs/deployment.md "Replay store in Redis") ----
  std::string nonce_store = "memory";  ///< or a redis:// URL
  bt::memory_nonce_store::options nonces;
  std::string nonce_rule = "window";
  bt::redis_nonce_store::options redis;  ///< url, rule and window are set from the above
  // ---- logging and the example routes ----
  bool debug = false;
  log_config log;
  int stream_delay_ms = 0;
  bool test_routes = false;
  // ---- the axon (bt-axon's defaults: dual-stack, sessions on) ----
  bt::axon_options axon = [] {
    bt::axon_options o;
    o.ip = "[::]";
    o.accept_sessions = true;
    return o;
  }();
  /// Set by --axon.ip when it named a host: the address it resolved to (for the log).
  std::string ip_resolved;
};

/// Parses argv into `cfg`. nullopt: go on; otherwise the exit status (0 after --help, 2 after a
/// usage error, reported on stderr as "bt-axon: <message>").
std::optional<int> parse_miner_config(int argc, char** argv, miner_config& cfg);

}  // namespace bt::miner
