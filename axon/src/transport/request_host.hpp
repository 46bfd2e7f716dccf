// The narrow face of a connection that a request's handler side sees: the pipeline's forward
// stage (start_forward), a request_job finishing on the strand, and a streaming handler's
// bt::stream_writer (stream_writer.cpp). They reach the connection's strand, stream, caller
// and stop flags through it, and nothing else of the session (its buffers, parser, timers
// and per-request strings stay private to connection, session.hpp). Non-virtual: every call
// is inlined, so the per-request path pays nothing for the narrowing.
#pragma once

#include "transport/byte_stream.hpp"
#include "transport/net.hpp"

#include <bt/axon.hpp>

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace bt::detail {

struct request_job;

class request_host : public std::enable_shared_from_this<request_host> {
 public:
  request_host(const request_host&) = delete;
  request_host& operator=(const request_host&) = delete;

  /// The connection's strand (a copy taken at construction; safe to read from any thread).
  const strand_t& strand() const noexcept { return strand_; }

  // ---- on strand() only ----
  axon::impl& core() const noexcept { return core_; }
  /// The connection's byte stream: a streamed answer's chunks are written straight to it.
  byte_stream& stream() const noexcept { return *stream_; }
  std::string_view peer_ip() const noexcept { return peer_ip_; }
  std::uint16_t peer_port() const noexcept { return peer_port_; }
  /// The axon is stopping: the current request is finished, then the connection closes.
  bool stop_requested() const noexcept { return stop_requested_; }
  /// The drain deadline passed: nothing more is written.
  bool aborted() const noexcept { return aborted_; }
  /// The handler of `job` finished; wakes the session if it waits for that job.
  void job_finished(const request_job* job) noexcept {
    if (waiting_job_ == job) job_timer_.cancel();
  }

 private:
  friend class connection;  // the only implementation; it owns and sets all of this

  request_host(axon::impl& core, strand_t strand, std::unique_ptr<byte_stream> stream,
               std::string peer_ip, std::uint16_t peer_port)
      : core_(core),
        strand_(std::move(strand)),
        stream_(std::move(stream)),
        peer_ip_(std::move(peer_ip)),
        peer_port_(peer_port),
        job_timer_(strand_) {}
  ~request_host() = default;

  axon::impl& core_;
  const strand_t strand_;
  const std::unique_ptr<byte_stream> stream_;
  // The caller. Set at construction; replaced once, before the first request, by the source of
  // a PROXY protocol header (opts.proxy_protocol); constant afterwards.
  std::string peer_ip_;
  std::uint16_t peer_port_;
  bool stop_requested_ = false;  // the axon is stopping: finish this request, then close
  bool aborted_ = false;         // the drain deadline passed
  net::steady_timer job_timer_;  // the body watchdog, then the request deadline
  const request_job* waiting_job_ = nullptr;  // the job job_timer_ waits for
};

}  // namespace bt::detail
