// bt::stream_writer: how a streaming forward function sends its answer chunk by chunk
// (Python's StreamingSynapse / BTStreamingResponse, PROTOCOL 7).
//
//   ax.attach<token_stream>(
//       [](token_stream& s, bt::stream_writer& out, const bt::request_context& caller)
//           -> boost::asio::awaitable<void> {                // a coroutine on the I/O thread
//         for (const auto& token : generate(s.prompt))
//           if (!co_await out.send(token)) co_return;        // client gone, deadline, stopping
//       });
//
//   ax.attach<token_stream>(
//       [](token_stream& s, bt::stream_writer& out, const bt::request_context& caller) {
//         for (const auto& token : generate(s.prompt))      // on the worker pool
//           if (!out.send_blocking(token)) return;
//       });
//
// On the wire (PROTOCOL 7, D17): HTTP 200, first header `content-type: text/event-stream`, the bt
// headers of the synapse as it is when the first chunk is sent (axon status 200 / "Success"
// unless the handler set them, process_time up to that moment), `transfer-encoding: chunked`,
// no Content-Length; then one HTTP chunk per send() and the empty final chunk when the handler
// returns. The head goes out with the first chunk, so a handler that throws (or misses the
// deadline) before sending anything still gets the ordinary JSON error answer (500 / its
// bt::forward_error status / 408). After the head, any failure can only truncate the stream:
// the connection is closed without the final chunk, so a client can tell a cut stream from a
// complete one.
//
// Backpressure: a send completes when its bytes were handed to the socket; nothing is queued
// behind it (the coroutine form writes straight from the caller's bytes, the blocking form from
// one copy). A client that stops reading therefore stalls the handler, never grows the axon's
// memory; the request's deadline (its `timeout`, capped by max_request_timeout) and
// axon_options::write_timeout bound the stall, after which send() returns false.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>
#include <string_view>

namespace bt {

namespace detail {
struct stream_state;
}

class stream_writer {
 public:
  /// A writer that is not connected to anything: every send returns false.
  stream_writer() = default;
  explicit stream_writer(std::shared_ptr<detail::stream_state> state) noexcept
      : state_(std::move(state)) {}

  /// Coroutine form: sends `bytes` as one chunk and completes once they are written to the
  /// socket. Returns false, without sending, once the stream is over: the client closed or
  /// stopped reading (write_timeout), the request's deadline passed, the axon is cutting
  /// connections at shutdown, or an earlier send failed. The handler should then return; later
  /// sends keep returning false. An empty `bytes` sends no chunk (an empty chunk would end the
  /// stream) but does send the head if it is not out yet, committing to the streamed answer. Call
  /// it from the streaming handler's own coroutine (it runs on the connection's strand), one send
  /// at a time; `bytes` must stay valid until it completes.
  boost::asio::awaitable<bool> send(std::string_view bytes);

  /// Blocking form, for handlers on the worker pool: same contract as send(), waiting on the
  /// calling thread. Must not be called on an I/O thread (throws std::logic_error: it would wait
  /// for itself). Sends from several threads at once are not supported: one that overlaps
  /// another returns false.
  bool send_blocking(std::string_view bytes);

  /// False once a send would fail (see send()). Thread-safe.
  bool is_open() const noexcept;
  /// Payload bytes written to the socket so far (chunk framing not counted). Thread-safe.
  std::size_t bytes_sent() const noexcept;

 private:
  std::shared_ptr<detail::stream_state> state_;
};

}  // namespace bt
