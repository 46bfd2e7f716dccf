// bt::rpc_client: a JSON-RPC 2.0 client over one websocket to a subtensor node (ws:// or wss://).
//
//   bt::rpc_client c(*bt::parse_endpoint("ws://127.0.0.1:9944"));
//   bt::json head = c.call("chain_getHead", bt::json::array());            // blocking, throws
//   // any completion token, signature void(bt::error, bt::json):
//   c.async_call("chain_getHeader", {head}, [](bt::error e, bt::json r) { ... });
//   auto [e, r] = co_await c.async_call("chain_getHead", bt::json::array(), asio::use_awaitable);
//
// Contract:
//  * One connection, opened on the first call. Every call gets its own id; any number may be in
//    flight at once and answers are matched by id, in whatever order they come.
//  * Each call completes exactly once, within options.request_timeout of the call (connecting
//    included): with the result, or with a bt::error whose code is a chain_errc and whose `what`
//    is the method:
//      rpc_error        the node answered with a JSON-RPC error object; the json argument is that
//                       object ({"code", "message"[, "data"]}), detail "JSON-RPC error C: M";
//      closed           the connection was lost (or never made, or the client was destroyed)
//                       after the request was sent: the requests in flight on it fail with this,
//                       except that a read (a chain_get*, state_get*, state_call or system_
//                       query: sending it twice is harmless) is sent again, once, on the next
//                       connection, within its own request_timeout. A node that restarted, or a
//                       proxy that closed the connection while it idled, is only noticed when a
//                       request meets the closed socket; a submission (author_submitExtrinsic)
//                       may have reached the node, so it is never sent twice;
//      malformed_frame  a frame that is not a JSON-RPC response (not JSON, not an object, no id):
//                       the connection can no longer be trusted, so it is closed and every
//                       request in flight fails with this;
//                       so is a frame with more JSON values than options.max_frame_values or
//                       nested deeper than options.max_frame_depth (checked while it is parsed,
//                       so such a frame never becomes a large tree);
//      frame_too_large  a frame larger than options.max_frame_bytes: likewise;
//      timeout          no answer within options.request_timeout.
//  * Requests not yet sent when a connection is lost wait for the next one: the client
//    reconnects (when there is work to send; idle it stays disconnected) with exponential,
//    jittered backoff, at most options.max_connect_attempts attempts in a row; when they all
//    fail, the waiting requests fail with `closed`, detail naming the endpoint and the last error.
//  * wss:// verifies the node's certificate against the system's CA store, for the endpoint's
//    host name (also sent as SNI).
//  * Thread safety: every member function may be called from any thread. The handler runs on its
//    associated executor (a coroutine resumes on its own); one without runs on the client's.
//    Cancellation slots are not supported: the request timeout bounds every call.
//  * Destruction fails the requests still running with `closed` and, for a client that owns its
//    io_context, joins its thread (so it must not run on that thread).
//  * No exception ends the client's thread: one while a frame is processed (std::bad_alloc)
//    closes that connection like a malformed frame; one thrown by a completion handler run on
//    the client's own io_context is written to stderr and the loop goes on (a handler must not
//    throw; the process is not ended for it).
#pragma once

#include <bt/chain/chain_error.hpp>
#include <bt/chain/endpoint.hpp>
#include <bt/error.hpp>
#include <bt/json.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace bt {

namespace detail {
struct rpc_state;
struct rpc_runner;
}  // namespace detail

struct rpc_client_options {
  /// From the call to its answer, connecting included.
  std::chrono::milliseconds request_timeout{30'000};
  /// One connection attempt: resolve, TCP connect, TLS and websocket handshakes.
  std::chrono::milliseconds connect_timeout{10'000};
  /// Largest frame (websocket message) read. The biggest real answers are runtime metadata
  /// (about 630 KB of hex for spec 393) and a metagraph's runtime calls (get_neurons_lite: 373 KB
  /// of hex on a 1,024-neuron subnet); 8 MiB leaves more than ten times that, and bounds what a
  /// hostile node can make a client buffer and decode (docs/chain.md, "Hostile nodes").
  std::size_t max_frame_bytes = 8u << 20;
  /// Largest number of JSON values (strings, numbers, arrays, objects, ...) in one frame. Real
  /// answers hold a few dozen (a header, rpc_methods' list of about a hundred names); a hex
  /// payload is one string however long. Without this bound a frame of tiny values ("[],")
  /// would build a JSON tree some twenty times its size. Over it: malformed_frame.
  std::size_t max_frame_values = 65536;
  /// Deepest nesting of arrays/objects in one frame (real answers: 4). Over it: malformed_frame.
  /// It bounds the recursion of anything that later walks the value (dump, comparison, copy).
  std::size_t max_frame_depth = 64;
  /// Connection attempts in a row before the requests waiting for a connection fail.
  unsigned max_connect_attempts = 4;
  /// Wait before the second attempt; doubled for each further one, up to backoff_max; each wait
  /// is drawn uniformly from [half, all] of that (jitter, so many clients do not retry in step).
  std::chrono::milliseconds backoff_initial{200};
  std::chrono::milliseconds backoff_max{5'000};
};

struct rpc_client_stats {
  std::uint64_t connections_opened = 0;   ///< websocket handshakes completed
  std::uint64_t requests_sent = 0;        ///< request frames written
  std::uint64_t requests_sent_again = 0;  ///< reads queued again after their connection was lost
  std::uint64_t responses = 0;            ///< calls completed (any outcome)
};

/// What the blocking call() throws: error() is the asynchronous form's bt::error; for
/// chain_errc::rpc_error, rpc_error_object() is the node's error object.
class rpc_call_error : public std::runtime_error {
 public:
  rpc_call_error(bt::error e, bt::json error_object);
  const bt::error& error() const noexcept { return error_; }
  std::error_code code() const noexcept { return error_.code; }
  const bt::json& rpc_error_object() const noexcept { return object_; }

 private:
  bt::error error_;
  bt::json object_;
};

class rpc_client {
 public:
  using options = rpc_client_options;
  using executor_type = boost::asio::any_io_executor;
  using handler_type = boost::asio::any_completion_handler<void(bt::error, bt::json)>;

  /// Owns an io_context run by one thread of its own.
  explicit rpc_client(endpoint ep, options opt = {});
  /// Runs on `ex` (through a strand). Blocking call() then needs `ex` run by another thread.
  rpc_client(executor_type ex, endpoint ep, options opt = {});
  ~rpc_client();
  rpc_client(const rpc_client&) = delete;
  rpc_client& operator=(const rpc_client&) = delete;

  executor_type get_executor() const noexcept;
  const endpoint& get_endpoint() const noexcept;
  const options& get_options() const noexcept;
  rpc_client_stats stats() const;

  /// Sends {"jsonrpc": "2.0", "id", "method", "params"}. Completion `void(bt::error, bt::json)`:
  /// on success an empty error and the response's "result" (which may be null); otherwise see
  /// the contract at the top of this file.
  template <boost::asio::completion_token_for<void(bt::error, bt::json)> Token>
  auto async_call(std::string method, bt::json params, Token&& token) {
    return boost::asio::async_initiate<Token, void(bt::error, bt::json)>(
        [this](auto handler, std::string method, bt::json params) {
          async_call_impl(std::move(method), std::move(params), handler_type(std::move(handler)));
        },
        token, std::move(method), std::move(params));
  }

  /// Blocking async_call: the result, or throws rpc_call_error. Must not be called from a thread
  /// running the client's executor.
  bt::json call(std::string method, bt::json params);

 private:
  void async_call_impl(std::string method, bt::json params, handler_type handler);
  std::unique_ptr<detail::rpc_runner> runner_;
  std::shared_ptr<detail::rpc_state> state_;
};

}  // namespace bt
