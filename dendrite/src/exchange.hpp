// One call of the dendrite, as I/O: call_exchange runs the exchange (one coroutine on the call's
// own strand) and leaves what a request says and what its answer means to the call's dialect
// (call_dialect.hpp). dialect_call<D> is the concrete call: the exchange and its dialect in one
// allocation.
#pragma once

#include "call_dialect.hpp"
#include "signing_pool.hpp"

#include <bt/sha256.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/parser.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace bt::detail {

/// The deadline of a call started now with `timeout` seconds (clamped: every call has one).
std::chrono::steady_clock::time_point dendrite_deadline_after(double timeout);

/// One call: its own strand, deadline timer, connection and parser, and the coroutine that runs
/// the exchange on them.
class call_exchange : public std::enable_shared_from_this<call_exchange> {
 public:
  using steady = std::chrono::steady_clock;

  std::function<void()> on_done;  // set before start(); runs on the op's executor

  /// Begins the call; on_done runs when it has completed, never inside start().
  /// `cancel_reason` non-empty: the call is cancelled before it begins (a fan-out cancelled
  /// while this call was queued).
  void start(std::string cancel_reason = {});

  /// Thread-safe: ends the call as cancelled (no effect once it has ended).
  void cancel(std::string reason);

  /// Before start(): the call's signatures are made by `pool` (outliving the call) instead of on
  /// the call's executor, where the dialect supports it (call_dialect::begin_signed_try).
  void sign_in(signing_pool* pool) noexcept { signer_ = pool; }

  /// Before start(): the call arms no deadline timer of its own; whoever made it (a fan-out, one
  /// timer for all its calls) calls expire() once the deadline has passed.
  void deadline_watched_elsewhere() noexcept { own_timer_ = false; }

  /// Thread-safe: ends the call as timed out (no effect once it has ended). For a call whose
  /// deadline is watched elsewhere; the call's own checks of the clock stay as they are.
  void expire();

 protected:
  /// `target` and `dialect` outlive the op (`dialect` is the concrete call's member).
  call_exchange(std::shared_ptr<dendrite_state> st, const axon_info& target, double timeout,
                steady::time_point deadline, call_dialect& dialect);
  /// A call destroyed without having finished (its io_context destroyed with the call's
  /// handler pending) leaves the dendrite's list of running calls here.
  ~call_exchange() {
    if (registered_) st_->unregister_op(active_link_);
  }

 private:
  void stop(dendrite_errc e, std::string detail);
  void throw_if_stopped(steady::time_point now);
  void throw_if_stopped() { throw_if_stopped(steady::now()); }
  boost::asio::awaitable<bool> exchange(std::optional<call_failure> stopped_before_start);
  void check_address(std::string problem);
  boost::asio::awaitable<void> connect();
  boost::asio::awaitable<boost::beast::error_code> send();
  boost::asio::awaitable<boost::beast::error_code> read_final_head();
  boost::asio::awaitable<void> read_stream(http_response& res);
  void skip_interim(std::size_t head_bytes);
  bool got_some_response() const;
  void new_parser();
  bool check_response_signature(const http_response& res,
                                const sha256_digest* streamed = nullptr) const;
  void on_chunk_header(boost::beast::string_view ext, boost::beast::error_code& ec);
  void trailers_fit();
  call_failure head_limit_failure() const;
  call_failure meta_limit_failure() const;
  call_failure io_failure(boost::beast::error_code ec) const;
  void deliver_stream_bytes();
  void finish(std::exception_ptr ep, bool keep);
  std::unique_ptr<pooled_connection> take_pooled(steady::time_point now);
  call_context context() const { return {*st_, target_, timeout_, host_}; }

  std::shared_ptr<dendrite_state> st_;
  boost::asio::any_io_executor exec_;
  signing_pool* signer_ = nullptr;  ///< see sign_in()
  /// In the dendrite's list of running calls from start() to finish() (the list's mutex guards
  /// the links; registered_ is the call's own, set by start(), cleared by finish()).
  active_call_link active_link_{this};
  bool registered_ = false;
  boost::asio::steady_timer timer_;
  bool own_timer_ = true;  ///< see deadline_watched_elsewhere()
  const axon_info& target_;
  call_dialect& dialect_;
  const std::string& name_;  ///< dialect_.name()
  double timeout_;
  steady::time_point deadline_;
  sha256_hasher stream_hash_;                       ///< a streaming call's body so far
  const steady::time_point begun_ = steady::now();  ///< for the call duration metric
  /// The clock as the exchange's last stage (the answer read) ended: what a completed exchange
  /// reports to finish() (the duration metric, the pooled connection's idle start).
  steady::time_point ended_{};

  /// Set once: the deadline passed, or the call was cancelled (see stop()).
  std::optional<call_failure> stop_;
  boost::asio::ip::tcp::endpoint ep_;
  std::string host_;
  std::unique_ptr<pooled_connection> conn_;
  std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser_;
  /// The parser's chunk-header callback (Beast keeps a reference: it lives as long as the op).
  std::function<void(std::uint64_t, boost::beast::string_view, boost::beast::error_code&)>
      chunk_cb_;
  std::size_t interim_ = 0;            ///< 1xx interim responses skipped
  std::size_t interim_bytes_ = 0;      ///< their heads' bytes (count against the head limit)
  std::size_t head_fields_bytes_ = 0;  ///< fields_bytes of the final head, before trailers
  std::size_t meta_bytes_ = 0;  ///< chunked bodies: head + chunk extensions so far (0: none yet)
  bool meta_over_ = false;      ///< header_limit came from extensions or trailers
  bool close_after_ = false;    ///< never pool this connection (the dialect's on_final_head)
};

/// Holds a call's dialect ahead of its exchange (base-from-member: the exchange gets a reference
/// to a constructed dialect).
template <class D>
struct dialect_holder {
  D dialect;
};

/// A call in dialect D: make_shared<dialect_call<D>>(state, target, timeout, deadline, D's
/// constructor arguments...) makes the whole call in one allocation.
template <class D>
class dialect_call final : private dialect_holder<D>, public call_exchange {
 public:
  template <class... A>
  dialect_call(std::shared_ptr<dendrite_state> st, const axon_info& target, double timeout,
               steady::time_point deadline, A&&... dialect_args)
      : dialect_holder<D>{D(std::forward<A>(dialect_args)...)},
        call_exchange(std::move(st), target, timeout, deadline, this->dialect) {}
};

}  // namespace bt::detail
