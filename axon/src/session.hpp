// One client connection: a coroutine on its own strand that reads requests one after another
// (keep-alive), hands each to the pipeline (pipeline.cpp) and writes its single response.
#pragma once

#include "axon_impl.hpp"
#include "net.hpp"

#include <bt/synapse.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

namespace bt::detail {

struct request_job;

class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(axon::impl& core, socket_t socket);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// The session loop. Owns `self` (the coroutine frame keeps the connection alive; nothing else
  /// does). Returns when the peer closes, a limit or timeout is hit, or the axon stops; never
  /// throws (failures are logged). Runs on strand().
  static task<void> run(std::shared_ptr<connection> self);

  /// On strand(): stop after the current request; an idle connection closes now.
  void notify_stop();
  /// On strand(): the drain deadline passed. Cancels every pending operation and the request in
  /// progress (its handler is told through its cancellation flag); nothing more is written.
  void abort();

  /// The connection's strand (a copy taken at construction; safe to read from any thread).
  const strand_t& strand() const noexcept { return strand_; }

  /// Writes out_head_ + out_body_ (one gathered write under write_timeout). False on failure.
  task<bool> write_response();
  /// Writes "HTTP/1.1 100 Continue" (the client waits for it before sending its body).
  task<bool> write_continue();
  /// Frees the per-request strings before the connection waits for its next request, so that
  /// an idle keep-alive connection holds only its socket, read buffer and coroutine frame (10,000
  /// idle connections: docs/performance.md "Axon memory"). Costs a few allocations per request.
  void release_request_memory() noexcept;

  // ---- state shared with the pipeline; touched only on strand() ----
  axon::impl& core_;
  const strand_t strand_;
  stream_t stream_;
  beast::flat_buffer buffer_;
  net::steady_timer job_timer_;         // the request deadline while a handler runs
  request_job* waiting_job_ = nullptr;  // the job job_timer_ waits for
  std::string peer_ip_;
  std::uint16_t peer_port_ = 0;
  // Per request; released while the connection is idle (release_request_memory).
  synapse view_;                 // header view of the current request
  std::string target_;           // request-target
  std::string body_;             // request body
  std::string out_head_;         // response head
  std::string out_body_;         // response body
  std::string scratch_;          // signed message, etc.
  bool idle_ = false;            // waiting for the first byte of the next request
  bool stop_requested_ = false;  // the axon is stopping: finish this request, then close
  bool aborted_ = false;         // the drain deadline passed
  bool linger_ = false;          // unread input may remain: drain briefly before closing
  bool verified_ = false;        // the current request passed verification (D29: sign only then)
  std::size_t body_bytes_ = 0;   // the current request's body size (body_ may be freed early)

  /// Buffers larger than this are freed once used rather than kept for the next request.
  static constexpr std::size_t keep_body_bytes = 1024 * 1024;
  std::list<std::weak_ptr<connection>>::iterator registry_pos_;
  bool registered_ = false;

 private:
  task<void> close_gracefully();
};

}  // namespace bt::detail
