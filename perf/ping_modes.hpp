// bt-ping's configuration and the pieces of its modes: setting up the axon (in-process or a
// spawned bt-axon), the floor (--baseline), axon CPU per request (--axon-cpu) and axon memory
// (--memory).
#pragma once

#include "ping_driver.hpp"
#include "proc.hpp"
#include "report.hpp"

#include <bt/axon.hpp>
#include <bt/dendrite.hpp>

#include <signing_key.hpp>

#include <cstddef>
#include <string>

namespace bt::perf {

struct ping_config {
  std::size_t count = 10'000;
  std::string target;          ///< IP:PORT:HOTKEY of a running axon; empty: our own
  bool cross_process = false;  ///< spawn bt-axon instead of an in-process axon
  std::string axon_binary;     ///< empty: the bt-axon built with bt-ping, else PATH
  /// The dendrite's hotkey (--uri or --wallet.*, signing_key.hpp); none given: //Alice, a dev
  /// key (the benchmark holds no funds).
  cli::key_flags key;
  std::string axon_uri = "//Bob";  ///< hotkey of the axon we start
  double timeout = 5.0;            ///< the original measurement's timeout
  std::size_t warmup = 0;          ///< the original loop had none
  std::size_t concurrency = 1;
  std::size_t payload = 0;  ///< 0: the base Synapse; else Payload with this many bytes
  /// --no-crypto: no request signature, no verification or nonce record at the axon, and no
  /// answer signatures (the in-process or spawned axon signs none, the dendrite checks none).
  bool no_crypto = false;
  /// --no-response-signatures: the in-process axon does not sign its answers (PROTOCOL 5.15)
  /// and the dendrite does not check them; the A/B of what authenticated responses cost.
  bool no_response_signatures = false;
  bool baseline = false;
  /// --session: the dendrite offers sessions (PROTOCOL 13) and the in-process axon accepts them
  /// (a spawned bt-axon accepts by default).
  bool session = false;
  /// --epistula: Epistula-signed POST /echo (PROTOCOL 12) instead of the signed Synapse ping;
  /// the in-process axon serves bt-axon's /echo (bt/examples/echo_route.hpp).
  bool epistula = false;
  /// --btauth: btauth/1-signed POST /echo (PROTOCOL 14, Bittensor SDK v11) instead; the
  /// in-process axon's /echo accepts Epistula and btauth/1, as bt-axon's does.
  bool btauth = false;
  std::string json_file;
  std::string histogram_file;
  bool verbose = false;
  double axon_cpu_seconds = 0;  ///< > 0: axon CPU mode for this long
  bool memory = false;
  std::size_t connections = 10'000;
  std::size_t axon_threads = 2;
  unsigned dendrite_threads = 1;
  /// --rounds N (with --baseline): the calls split into N ping rounds alternated with N floor
  /// rounds of as many bare round trips (floor first); the ratio compares the best of each.
  std::size_t rounds = 1;
};

/// Whether the axon signs its answers (PROTOCOL 5.15) and the dendrite checks them: not with
/// --no-crypto nor --no-response-signatures.
inline bool answers_signed(const ping_config& cfg) {
  return !cfg.no_crypto && !cfg.no_response_signatures;
}

/// The dendrite's hotkey: cfg.key's (signing_key.hpp: --uri and --wallet.* are exclusive), or
/// //Alice when no key flag was given.
keypair dendrite_key(const ping_config& cfg);

/// bt::axon_info::parse, its message naming the flag: "--target 'TEXT': <what is wrong>".
axon_info parse_target(const std::string& text);
/// Whether the target's IP is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback_target(const std::string& text);

axon_options in_process_axon_options(const ping_config& cfg);
/// Serves payload_synapse with a coroutine that echoes it back (the request's data travels
/// both ways, as a real answer of that size would).
void attach_payload_route(axon& ax);
/// Starts bt-axon on 127.0.0.1 port 0 with --uri cfg.axon_uri and waits (20 s at most) for its
/// AxonInfo line. Throws std::runtime_error when it does not come.
child_process spawn_axon(const ping_config& cfg, axon_info& info);
/// Logs loudly (stderr, warn) that verification and signing are off.
void warn_no_crypto(const axon_info& target);
dendrite_options dendrite_options_for(const ping_config& cfg);

/// drive() with the base Synapse, or with a Payload of cfg.payload bytes; with cfg.epistula or
/// cfg.btauth, a plain_ping in that dialect whose body is {} (or {"data": cfg.payload bytes}).
ping_run drive_any(const ping_config& cfg, caller_set& callers, const axon_info& target,
                   const drive_options& opt);

/// drive_any() with the CPU time of its calls: this process's (the in-process axon and the
/// dendrite) plus, when `axon_pid` > 0, the spawned bt-axon's (/proc); for a --target axon the
/// dendrite's alone (ping_run::cpu_both_ends false).
ping_run drive_measured(const ping_config& cfg, caller_set& callers, const axon_info& target,
                        const drive_options& opt, pid_t axon_pid);

/// The floor of one ping of this configuration, measured now in this process.
baseline_figures measure_baseline(const ping_config& cfg, const keypair& key,
                                  const axon_info& target);

/// A measured run with its floor (--baseline): `run` is every ping call, `ping` the summary the
/// ratio uses.
struct measured_with_floor {
  ping_run run;
  summary ping;
  baseline_figures floor;
};
/// --rounds N: floor round, ping round, floor round, ... (N of each, opt.count / N calls each);
/// the floor figures are the best floor round's, `ping` the best ping round's.
measured_with_floor measure_alternated(const ping_config& cfg, caller_set& callers,
                                       const axon_info& target, const keypair& key,
                                       const drive_options& opt, pid_t axon_pid);

/// --axon-cpu: drives the spawned axon `axon_pid` and prints its CPU time per request.
int run_cpu_mode(const ping_config& cfg, caller_set& callers, const axon_info& target,
                 const keypair& key, pid_t axon_pid, drive_options opt);
/// --memory: RSS of the spawned axon idle, then with cfg.connections idle keep-alive connections.
int run_memory_mode(const ping_config& cfg, const axon_info& target, pid_t axon_pid);

/// Whether the pings are plain requests to /echo (--epistula or --btauth), not synapses.
inline bool plain_pings(const ping_config& cfg) {
  return cfg.epistula || cfg.btauth;
}

std::string mode_name(const ping_config& cfg);
std::string histogram_title(const ping_config& cfg, const summary& s);

}  // namespace bt::perf
