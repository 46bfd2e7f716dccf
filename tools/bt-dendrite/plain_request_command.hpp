// `bt-dendrite epistula` and `bt-dendrite btauth`: one signed request by method and path to one
// axon, Epistula v2 (PROTOCOL 12) or btauth/1 (PROTOCOL 14, Bittensor SDK v11's signed HTTP
// requests). The two subcommands take the same flags and print the same line; only the
// signature differs.
//
//   bt-dendrite epistula --axon 127.0.0.1:8091:5FHneW46... --path /echo --data '{"x": 1}'
//     --uri //Alice      (one command line)
//   bt-dendrite btauth --axon 127.0.0.1:8091:5FHneW46... --path '/forward?round=3'
//     --data '{"x": 1}' --uri //Alice
//
// stdout: one JSON line {"status", "body", "process_time", "response_verified"}: the HTTP status
// (or the dendrite's own status of docs/dendrite.md's table when no answer arrived), the body as
// JSON when it parses (else as a string; null when no answer arrived), seconds, and whether the
// answer's bt-response-signature verified against the --axon hotkey.
// stderr: {"error": "..."} for bad usage and for a call that got no usable answer.
// Exit status: 0 for a 2xx answer, 1 otherwise (another status, or no answer), 2 for bad usage.
#pragma once

#include <bt/dendrite.hpp>

#include <signing_key.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace bt::cli {

struct plain_request_config {
  wire_dialect dialect = wire_dialect::epistula;  ///< set by the subcommand
  std::string axon;                               ///< --axon IP:PORT:HOTKEY ([ip]:port:hotkey)
  std::string path;                               ///< --path: the request target, starting with '/'
  std::string method = "POST";                    ///< --method
  std::string data;       ///< --data: the JSON body, sent verbatim (empty: none)
  double timeout = 12.0;  ///< --timeout seconds
  std::string verify_responses = "if_present";  ///< --verify-responses off|if_present|required
  key_flags keys;                               ///< --uri or --wallet.*: the signing hotkey
};

/// Adds the `epistula` subcommand (dialect epistula) or the `btauth` one (dialect btauth) to
/// `app`; `cfg` must outlive the parse.
CLI::App* add_plain_request_command(CLI::App& app, wire_dialect dialect, plain_request_config& cfg);

/// Sends the request; returns the exit status (0, 1 or 2).
int run_plain_request(const plain_request_config& cfg);

}  // namespace bt::cli
