// bt::endpoint: where a subtensor node listens, named as bittensor names it.
//
//   --subtensor.chain_endpoint URL   wins over everything
//   --subtensor.network NAME         finney | test | local (or a ws:// / wss:// URL, as bittensor
//                                    accepts one there too)
//   BT_SUBTENSOR_CHAIN_ENDPOINT      the default when neither flag is given
//   finney                           the default when nothing is given (as bittensor)
//
// A URL is ws://host[:port][/path] or wss://host[:port][/path]; host may be a name, a dotted IPv4
// address or a bracketed IPv6 address ("[::1]"). The port defaults to 80 (ws) or 443 (wss).
#pragma once

#include <bt/error.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bt {

struct endpoint {
  bool tls = false;          ///< wss:// (TLS, peer verified with the system's CA store, SNI sent)
  std::string host;          ///< without brackets for IPv6 ("::1")
  std::uint16_t port = 0;    ///< never 0 in a parsed endpoint
  std::string target = "/";  ///< path and query sent in the websocket handshake
  /// The canonical URL ("wss://entrypoint-finney.opentensor.ai:443/"), for messages.
  std::string url() const;
  /// The Host header value: host, bracketed if IPv6, ":port" unless the scheme's default.
  std::string host_header() const;
};

/// Parses a ws:// or wss:// URL. A URL that is not one (another scheme, no host, a port that is
/// not 1-65535, user info, a fragment, spaces or control characters) gives chain_errc::bad_endpoint
/// with what = "chain endpoint" and detail naming the problem and the URL.
std::optional<endpoint> parse_endpoint(std::string_view url, bt::error* err = nullptr);

/// The URL of a named network: "finney" -> wss://entrypoint-finney.opentensor.ai:443,
/// "test" -> wss://test.finney.opentensor.ai:443, "local" -> ws://127.0.0.1:9944; nullopt for
/// any other name.
std::optional<std::string> network_url(std::string_view network);

/// The endpoint flags' rule (see the top of this file). `chain_endpoint` and `network` are the
/// flags' values, empty when not given; `env` is the environment variable's value (nullptr: not
/// set; empty counts as not set). An unknown network name or a bad URL gives
/// chain_errc::bad_endpoint naming the flag or the variable it came from.
std::optional<endpoint> resolve_endpoint(std::string_view chain_endpoint, std::string_view network,
                                         const char* env, bt::error* err = nullptr);

/// resolve_endpoint with env = getenv("BT_SUBTENSOR_CHAIN_ENDPOINT").
std::optional<endpoint> resolve_endpoint_from_env(std::string_view chain_endpoint,
                                                  std::string_view network,
                                                  bt::error* err = nullptr);

}  // namespace bt
