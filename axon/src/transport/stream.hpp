// The state of one streamed answer (PROTOCOL 7), shared by the pipeline (which creates it, and
// ends the stream when the handler returns or the deadline passes) and the handler's
// bt::stream_writer (stream_writer.cpp). See the top of axon/include/bt/stream_writer.hpp for the
// wire format and the failure rules.
#pragma once

#include "transport/net.hpp"

#include <bt/sha256.hpp>
#include <bt/stream_writer.hpp>
#include <bt/synapse.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace bt::detail {

class request_host;
struct route;

struct stream_state {
  using clock_type = std::chrono::steady_clock;

  stream_state(std::weak_ptr<request_host> c, std::weak_ptr<void> request, strand_t ex,
               const route& rt, synapse& body, clock_type::time_point start,
               clock_type::time_point end, bool close_after)
      : conn(std::move(c)),
        owner(std::move(request)),
        strand(std::move(ex)),
        r(rt),
        s(body),
        t0(start),
        deadline(end),
        close(close_after) {}

  // ---- fixed at creation ----
  const std::weak_ptr<request_host> conn;
  const std::weak_ptr<void> owner;  // the request_job that owns `s` (and this state)
  const strand_t strand;
  const route& r;  // outlives the axon's connections
  synapse& s;      // the body synapse (owned by the request_job, which owns this state too)
  const clock_type::time_point t0;        // the request's head arrived (process_time)
  const clock_type::time_point deadline;  // the request's deadline bounds the whole stream

  // ---- strand only ----
  bool close;                        // the head says `connection: close`
  bool head_started = false;         // from here on, failures can only truncate
  bool writing = false;              // a chunk write is in flight
  bool failed = false;               // a write failed: the connection must close
  std::string head;                  // the response head, built at the first send
  std::array<char, 20> size_line{};  // "<hex size>\r\n" of the chunk in flight
  sha256_hasher body_hash;           // of every chunk's bytes so far (the trailer's signature)

  // ---- any thread ----
  std::atomic<bool> open{true};  // sends are still accepted
  std::atomic<std::size_t> payload_bytes{0};
  std::atomic<bool> blocking_busy{false};  // a send_blocking is in progress
  // A send was refused because the stream is over (the deadline passed, the axon is cutting
  // connections at shutdown): a handler that then returns normally has not completed its
  // stream, so it must be cut, not ended with the final chunk (which would present a prefix as
  // a whole answer).
  std::atomic<bool> cut{false};
  // send_blocking waits here; close() wakes it.
  std::mutex m;
  std::condition_variable cv;

  /// Ends the stream for the writer (any later send returns false) and wakes a blocked sender.
  void close_writer() {
    open.store(false, std::memory_order_relaxed);
    { std::lock_guard lk(m); }
    cv.notify_all();
  }

  /// On the strand: the buffers of the next write: the head if it has not gone out yet
  /// (built now, from the synapse as the handler left it), then `payload` as one chunk unless it
  /// is empty. Returns how many of `out` are used.
  std::size_t prepare(const request_host& c, std::string_view payload,
                      std::array<net::const_buffer, 4>& out);
};

/// "0\r\n\r\n": the end of a chunked body without trailers.
inline constexpr std::string_view last_chunk = "0\r\n\r\n";

}  // namespace bt::detail
