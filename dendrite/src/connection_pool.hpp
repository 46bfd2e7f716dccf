// The dendrite's keep-alive connection pool: idle connections per axon endpoint, bounded per
// endpoint and in total, expired after dendrite_options::idle_timeout (swept lazily), checked
// for the server's FIN before reuse when idle for a while. Thread-safe (one mutex); a connection
// is owned by exactly one call while in use and by the pool while idle.
//
// Contract with the call: put() only a connection whose last exchange ended with a complete,
// well-framed keep-alive response and no unread byte; anything else is destroyed (closed).
#pragma once

#include "client_session.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace bt::detail {

/// A keep-alive connection and the buffers it reuses from call to call.
struct pooled_connection {
  boost::asio::ip::tcp::socket socket;
  boost::beast::flat_buffer buffer;   ///< response bytes; empty between calls
  std::string head, body;             ///< request buffers
  std::string scratch;                ///< the signed message
  std::string request_id;             ///< of the request last sent (see call_exchange::send)
  std::string local_ip;               ///< local address of the socket (default dendrite ip)
  std::size_t last_answer_bytes = 0;  ///< of the last response read: the next read's room
  std::chrono::steady_clock::time_point idle_since{};
  client_session session;  ///< dendrite_options::session: this connection's session, if any

  /// `read_buffer_max` caps `buffer` (see read_buffer_max() in exchange.cpp).
  pooled_connection(const boost::asio::any_io_executor& ex, std::size_t read_buffer_max)
      : socket(ex) {
    buffer.max_size(read_buffer_max);
  }
};

/// Opens `c`'s socket non-blocking (for the asynchronous connect and for writes in place) and
/// with TCP_NODELAY, and starts its connect to `ep`: no error when connected at once, in_progress
/// or would_block while the connect goes on (await the socket's writability, then
/// connect_result()), any other error when it failed. Two system calls fewer than Asio's
/// async_connect followed by setting the mode: Asio sets its own non-blocking mode before the
/// user's (two ioctls), and polls the socket before asking for the connect's result.
boost::system::error_code start_connect(pooled_connection& c,
                                        const boost::asio::ip::tcp::endpoint& ep);

/// The outcome of a connect start_connect() began, once the socket is writable.
boost::system::error_code connect_result(pooled_connection& c);

/// Limits of the pool (from dendrite_options).
struct connection_pool_limits {
  std::size_t max_idle_per_endpoint = 4;
  std::size_t max_idle_total = 512;
  std::chrono::milliseconds idle_timeout{15'000};
};

class connection_pool {
 public:
  using endpoint = boost::asio::ip::tcp::endpoint;
  using clock = std::chrono::steady_clock;

  explicit connection_pool(connection_pool_limits limits) : limits_(limits) {}

  /// An idle connection to `ep` still usable at `now` (the caller's clock reading), or null.
  /// Expired ones, and ones the server closed (checked by a non-blocking peek when idle for more
  /// than peek_after), are dropped on the way.
  std::unique_ptr<pooled_connection> take(const endpoint& ep, clock::time_point now);

  /// Keeps `c`, idle since `now` (the caller's clock reading), for reuse if the limits allow and
  /// the pool is open; otherwise closes it. Shrinks buffers a one-off huge request or response
  /// grew, and sweeps expired connections at most once a second.
  void put(const endpoint& ep, std::unique_ptr<pooled_connection> c, clock::time_point now);

  /// Closes every idle connection now.
  void close_idle();

  /// Closes every idle connection and refuses every later put() (the dendrite is stopping).
  void close();

  std::size_t idle_count() const;

  /// Servers close idle connections after seconds (uvicorn 5 s), so a connection idle for less
  /// than this is reused without the extra system call; the call's one retry covers the rest.
  static constexpr auto peek_after = std::chrono::milliseconds(500);

  /// Request buffers are kept between calls, but a one-off huge request or response should not
  /// pin its memory for the life of the connection.
  static constexpr std::size_t keep_buffer_bytes = 1u << 20;

 private:
  using idle_list = std::vector<std::unique_ptr<pooled_connection>>;
  struct endpoint_hash {
    std::size_t operator()(const endpoint& e) const noexcept { return std::hash<endpoint>()(e); }
  };

  static bool still_open(pooled_connection& c);
  /// Closes expired connections (into `out`) and drops emptied endpoint lists.
  void sweep_locked(clock::time_point now, idle_list& out);

  const connection_pool_limits limits_;
  mutable std::mutex mu_;  // guards everything below
  bool closed_ = false;
  std::unordered_map<endpoint, idle_list, endpoint_hash> idle_;
  std::size_t idle_total_ = 0;
  clock::time_point last_sweep_{};
};

}  // namespace bt::detail
