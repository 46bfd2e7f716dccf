// `bt-dendrite query`: query axons like a validator and print what a Python validator would see.
//
//   bt-dendrite query --axon 127.0.0.1:8091:5FHneW46... --synapse Dummy --fields '{"dummy_input":
//   3}' bt-dendrite query --axons metagraph_axons.json --synapse Synapse --timeout 5 --uri //Alice
//
// stdout: one JSON line per axon, in order: the resulting synapse as model_dump() shows it.
// With --stream (streaming synapses, PROTOCOL 7; WordStream or a dynamic type) the axons are
// queried one after another; each item is printed as it arrives (flushed), a typed item on its
// own line, a dynamic type's raw body bytes verbatim; then the final synapse's JSON line.
// With --netuid N the targets are the subnet's serving axons read from the chain (the
// --subtensor.* flags; --uids restricts them by uid, and a uid that is not in the subnet or does
// not serve is bad usage naming it); --netuid excludes --axon/--axons.
// stderr: a summary (counts by status, latency percentiles).
// Exit status: 0 when every answer was 200, 1 otherwise (also when the chain cannot be read),
// 2 for bad usage.
#pragma once

#include <bt/dendrite.hpp>

#include <endpoint_flags.hpp>
#include <signing_key.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bt::cli {

struct query_config {
  std::vector<std::string> axon;  ///< --axon IP:PORT:HOTKEY (repeatable; IPv6 as [ip]:port:hotkey)
  std::string axons_file;         ///< --axons FILE: JSON list of AxonInfo objects
  std::optional<std::uint16_t> netuid;  ///< --netuid N: the targets from the chain
  std::vector<std::uint16_t> uids;      ///< --uids 1,2,3: only these (with --netuid)
  endpoint_config chain;                ///< --subtensor.network/chain_endpoint/timeout
  std::string synapse =
      "Synapse";       ///< --synapse NAME (Synapse and Dummy are known; others dynamic)
  std::string fields;  ///< --fields JSON object of field values (declaration order)
  std::vector<std::string> required;     ///< --required NAME... (dynamic types)
  std::vector<std::string> hash_fields;  ///< --hash-fields NAME... (dynamic types)
  double timeout = 12.0;                 ///< --timeout seconds
  key_flags keys;                        ///< --uri or --wallet.*: the signing hotkey
  bool stream = false;                   ///< --stream: call_stream, items printed as they arrive
  bool dynamic = false;                  ///< --dynamic: describe even a known name by the flags
  /// The dendrite's options; the fields whose table entry names a flag are set by it
  /// (--external-ip, --concurrency, --session), the others keep their defaults.
  bt::dendrite_options dendrite;
};

/// Adds the `query` subcommand to `app`; `cfg` must outlive the parse. Returns the subcommand
/// (check `->parsed()` after parsing, then call run_query).
CLI::App* add_query_command(CLI::App& app, query_config& cfg);

/// Runs the queries; returns the exit status (0, 1 or 2) and writes diagnostics to stderr.
int run_query(const query_config& cfg);

}  // namespace bt::cli
