// The request pipeline: everything between "headers received" and "response written" for one
// request. See the top of pipeline.cpp for the stages and their order.
#pragma once

#include "net.hpp"
#include "request_parser.hpp"
#include "stream.hpp"
#include "worker_pool.hpp"

#include <bt/axon.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <exception>
#include <memory>

namespace bt::detail {

class connection;
struct route;

/// A request once it passed verification: owns the header view, the body synapse and the
/// caller's context, which handlers see by reference. Shared by the session and whichever
/// executes the handler (a worker thread or a coroutine), because a handler may outlive the
/// request's answer (after a 408). Holds no I/O objects, so it may die on any thread.
struct request_job final : pool_job, std::enable_shared_from_this<request_job> {
  const route* r = nullptr;
  synapse headers;                     // header view; ctx's strings point into it
  synapse_ptr body{nullptr, nullptr};  // the body synapse handed to the handler
  request_context ctx;
  std::atomic<bool> cancel{false};  // ctx.cancel_flag
  std::exception_ptr error;         // what the handler threw
  bool done = false;                // strand only: the handler finished
  std::weak_ptr<connection> conn;
  net::cancellation_signal coro_cancel;  // stops a coroutine handler at the deadline
  std::shared_ptr<stream_state> stream;  // streaming routes only (PROTOCOL 7)
  stream_writer writer;                  // handed to a streaming handler; shares `stream`
  worker_pool* slot = nullptr;           // a queue slot this request holds (released at the end)

  request_job() = default;
  request_job(const request_job&) = delete;
  request_job& operator=(const request_job&) = delete;
  ~request_job() override {
    if (slot) slot->release();
  }

  void run() noexcept override;
  void complete(std::shared_ptr<pool_job> self) noexcept override;
  /// On the connection's strand: the handler finished; wake the session if it waits for us.
  void finish_on_strand(connection& c) noexcept;
};

/// Serves one request whose head `p` was just read on `c`. Writes exactly one response (or none
/// if the connection dies or the axon aborts). Returns whether the connection may carry another
/// request. Runs on c.strand(); never throws.
task<bool> serve_request(connection& c, request_parser& p);

/// Answers a request that failed before it reached the pipeline (431 header too large, 400
/// unparsable HTTP) and returns false (the connection closes).
task<bool> reject_unparsed(connection& c, int status, std::string_view message);

}  // namespace bt::detail
