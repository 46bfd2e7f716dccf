// A loopback subtensor for the tests: a websocket JSON-RPC server on 127.0.0.1 (port 0) that
// replays recorded sessions (files of {"calls": [{"method", "params", "response"}]}) and can be
// told to misbehave.
//
// A request is answered by its method and params: hex strings are compared without their "0x"
// and case-insensitively, and trailing null params are dropped (chain_getHeader [null] is
// chain_getHeader []). A method never recorded gets JSON-RPC error -32601 "Method not found"; a
// recorded method with other params gets -32602 naming them. Answers carry the request's id.
// Requests are handled concurrently (a delayed answer does not hold up the others).
//
// Two kinds of answer go beyond replaying (for a submitted extrinsic, whose bytes change with
// every run, and the storage it changes); in a session file they are marked per call:
//   "params": "*"        any params: the answer when no exact one matches (set_any_response);
//   "after": "METHOD"    the answer exists only once a request of METHOD has been received, and
//                        then wins over the others for its params (set_response_after): e.g.
//                        state_getStorage of SubtensorModule.Axons after author_submitExtrinsic.
//
// Faults (per method, for every later request of it, or for the next `times` of them):
//   close_mid_response  half of the answer's frame (a non-final websocket fragment), then the TCP
//                       connection is closed without a websocket close;
//   drop                no answer: the TCP connection is closed on receipt of the request (a
//                       node that restarted, or a proxy that closed an idle connection);
//   oversized_frame     a well-formed answer whose frame is `size` bytes;
//   malformed_frame     a frame that is not JSON;
//   delay               the normal answer after `delay`.
#pragma once

#include <bt/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace bt::test {

struct fake_fault {
  enum class kind { none, close_mid_response, drop, oversized_frame, malformed_frame, delay };
  kind what = kind::none;
  std::chrono::milliseconds delay{0};  ///< for delay
  std::size_t size = 0;                ///< for oversized_frame
  std::size_t times = 0;               ///< requests it applies to; 0: every later one
};

/// Parses "close", "drop", "oversized:BYTES", "malformed", "delay:MS" (the standalone program's
/// --fault; `times` stays 0).
/// Throws std::invalid_argument on anything else.
fake_fault parse_fake_fault(std::string_view text);

class fake_subtensor {
 public:
  /// Listens on 127.0.0.1:`port` (0: any free port) with one I/O thread of its own, and loads
  /// `session_path` if given. A fixed port lets a test stop a node and start another in its place.
  explicit fake_subtensor(const std::string& session_path = {}, std::uint16_t port = 0);
  ~fake_subtensor();
  fake_subtensor(const fake_subtensor&) = delete;
  fake_subtensor& operator=(const fake_subtensor&) = delete;

  std::uint16_t port() const noexcept;
  std::string url() const;  ///< "ws://127.0.0.1:PORT"

  /// Adds the calls of a recorded session file (later entries replace earlier ones). Throws
  /// std::runtime_error if the file is missing or not a session.
  void load(const std::string& session_path);
  /// Adds or replaces one answer; `response` is {"result": ...} or {"error": {...}}.
  void set_response(const std::string& method, const bt::json& params, bt::json response);
  /// Answers `method` with `response` whatever its params, when no exact answer matches.
  void set_any_response(const std::string& method, bt::json response);
  /// Adds an answer that applies only once a request of `trigger` has been received; from then
  /// on it wins over the other answers for these params.
  void set_response_after(const std::string& trigger, const std::string& method,
                          const bt::json& params, bt::json response);
  /// Forgets every recorded answer of `method` (it then gets "Method not found").
  void remove_method(const std::string& method);
  void set_fault(const std::string& method, fake_fault f);
  void clear_faults();

  /// Calls `observer` with each request's method as it arrives, on the fake's I/O thread (so it
  /// must not call back into the fake). Replaces any earlier observer.
  void set_request_observer(std::function<void(const std::string& method)> observer);

  /// Requests of `method` received so far.
  std::size_t requests(const std::string& method) const;
  /// The most requests that were received and not yet answered at one time.
  std::size_t max_outstanding() const;
  /// Connections accepted so far.
  std::size_t connections() const;
  /// Closes every open connection abruptly (TCP close, no websocket close).
  void drop_connections();

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace bt::test
