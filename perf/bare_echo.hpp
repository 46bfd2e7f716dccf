// The floor of a ping: a bare Boost.Beast HTTP/1.1 keep-alive exchange on loopback with the
// same request and response sizes (and header counts) as a signed ping, and nothing else: no
// codec, no signature, no routing. bt-ping --baseline compares the framework against it.
#pragma once

#include "proc.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bt::perf {

/// One HTTP exchange to replay: the request the client sends and the response the server
/// answers, byte for byte the same on every round trip.
struct http_exchange {
  std::string target = "/Synapse";
  std::vector<std::pair<std::string, std::string>>
      request_headers;  ///< besides Host/Content-Length
  std::string request_body;
  std::vector<std::pair<std::string, std::string>> response_headers;  ///< besides Content-Length
  std::string response_body;
};

struct bare_echo_result {
  std::vector<double> rtt_us;      ///< one per measured round trip
  std::size_t request_bytes = 0;   ///< serialized request: start line, headers, body
  std::size_t response_bytes = 0;  ///< serialized response
  /// CPU time of this process over the timed round trips: both ends (the server thread and the
  /// client), as the in-process axon and dendrite share bt-ping's process.
  cpu_times cpu;
};

/// Runs a Beast coroutine server on 127.0.0.1 (port 0, one I/O thread of its own) that answers
/// every request on a keep-alive connection with the prebuilt response, and a blocking Beast
/// client on the calling thread doing `warmup` untimed then `count` timed round trips on one
/// connection. TCP_NODELAY is set on both ends. Throws std::system_error on a socket failure.
bare_echo_result run_bare_echo(const http_exchange& ex, std::size_t count,
                               std::size_t warmup = 200);

}  // namespace bt::perf
