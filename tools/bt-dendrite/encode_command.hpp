// `bt-dendrite encode`: what a dendrite would send for one synapse, without signing or sending
// (the interop and conformance entry point).
//
//   echo '{"name": "Dummy", "fields": {"dummy_input": 1, "dummy_output": null},
//          "required": ["dummy_input"]}' | bt-dendrite encode
//
// stdin: one JSON object
//   {"name": str, "timeout": float|null (default 12.0), "fields": {ordered field values},
//    "required": [field...], "required_hash_fields": [field...],
//    "dendrite": {TerminalInfo}, "axon": {TerminalInfo}}
// stdout: one JSON object
//   {"headers": [[name, value], ...] (emission order), "body": request body text, "body_hash": hex}
// Exit status: 0, or 2 with {"error": "..."} on stdout for invalid input.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>

namespace bt::cli {

struct encode_config {
  bool compact = false;  ///< --compact: body as a response (Starlette compact UTF-8)
};

/// Adds the `encode` subcommand to `app`; `cfg` must outlive the parse. Returns the subcommand
/// (check `->parsed()` after parsing, then call run_encode).
CLI::App* add_encode_command(CLI::App& app, encode_config& cfg);

/// Reads the description from `in` and writes the result (or the error object) to `out`;
/// returns the exit status (0 or 2).
int run_encode(const encode_config& cfg, std::istream& in, std::ostream& out);

}  // namespace bt::cli
