// bt::redis_nonce_store: the replay store shared by every axon of a fleet, kept in Redis.
//
// Several axons pointed at one Redis accept a given (hotkey, uuid, nonce) at most once between
// them, and a nonce one of them finds stale is stale for all. Each request costs one round trip:
// a Lua script (loaded once with SCRIPT LOAD, run with EVALSHA, re-sent with EVAL when Redis
// answers NOSCRIPT, e.g. after a restart or SCRIPT FLUSH) applies the in-memory store's rules
// (nonce_rule: strictly_increasing, unique and window, exactly as memory_nonce_store decides them
// without its memory caps) atomically, and sets the record's expiry (PEXPIREAT) from
// `expires_at_ns` plus `expiry_margin`.
//
// Keys: `key_prefix` + rule letter + ":{" + 32 hex digits + "}" (+ ":n" for a window's nonces),
// the hex digits a BLAKE2b-128 of the length-prefixed hotkey and uuid (and nonce, under
// `unique`): a key's size is fixed whatever the caller sends, and the same on every axon.
//
// Fail closed: when no connection is up, or Redis does not answer within `timeout`, the verdict
// is nonce_verdict::unavailable (the axon answers 503 with Retry-After); nothing is accepted
// that Redis did not record. A connection that times out is dropped; every connection reconnects
// by itself with exponential backoff (`reconnect_min` .. `reconnect_max`), and the store serves
// again as soon as one is back. unavailable_reason() says why while the store is not ready
// (some attached loop has no ready connection, or none is attached).
//
// Driven by the caller's Asio event loops, with no thread of its own: bt::axon attaches the store
// to its I/O threads' io_contexts when it starts (nonce_store::attach) and detaches it when it
// stops. Each attached loop gets its own Redis connections (a strand each loop), so a request is
// sent, answered and resumed on the I/O thread that read it: no thread hand-off, no thread per
// request, and async_record() never blocks. Until it is attached the store is not ready and
// answers `unavailable`.
#pragma once

#include <bt/nonce_store.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace spdlog {
class logger;
}

namespace bt {

class redis_nonce_store final : public nonce_store {
 public:
  /// Where Redis is: `redis://[[user]:password@]host[:port][/db]` (port 6379 and db 0 by
  /// default; host a name, an IPv4 address or a bracketed IPv6 one; the password may be
  /// percent-encoded).
  struct endpoint {
    std::string host;
    std::uint16_t port = 6379;
    unsigned db = 0;
    std::string user;      // empty: AUTH password (Redis < 6 style)
    std::string password;  // empty: no AUTH
  };
  /// Parses a URL (RFC 3986, with Boost.URL): a user or password holding a reserved character
  /// ('@', ':' in the user, '/', '?', '#', '%', ...) must percent-encode it, or come from
  /// BT_REDIS_PASSWORD. Throws std::invalid_argument with a message that names what is wrong
  /// (and never contains the password).
  static endpoint parse_url(std::string_view url);

  struct options {
    std::string url = "redis://127.0.0.1:6379/0";
    /// When the URL has no password, this one; when that is empty too, the environment
    /// variable BT_REDIS_PASSWORD (so the secret need not appear on a command line).
    std::string password;
    /// At most 64 bytes.
    std::string key_prefix = "bt:nonce:";
    nonce_rule rule = nonce_rule::window;
    /// `window` rule: nonces kept per endpoint (as memory_nonce_store::options::window).
    std::size_t window = 256;
    /// Per operation: from async_record() to Redis's answer. Past it: unavailable (503).
    std::chrono::milliseconds timeout{50};
    /// Connections to Redis per attach() (at least 1, at most 64), spread over the attached
    /// loops with at least one each (so max(connections, loops) in all); a loop's requests use
    /// its own connections round robin, pipelined on each.
    std::size_t connections = 2;
    /// Requests in flight per connection; beyond, the next is answered unavailable at once.
    std::size_t max_in_flight = 4096;
    /// Redis deletes a record this long after its expiry by the axon's clock, so that a Redis
    /// clock ahead of the axons' by less than this cannot forget a record too early.
    std::chrono::milliseconds expiry_margin{5'000};
    /// Reconnection backoff: the first retry after `reconnect_min`, doubling up to the max.
    std::chrono::milliseconds reconnect_min{50};
    std::chrono::milliseconds reconnect_max{1'000};
    /// A connection (TCP connect, AUTH, SELECT, SCRIPT LOAD) not ready after this is retried.
    std::chrono::milliseconds connect_timeout{1'000};
    /// The largest reply accepted from Redis (at least 1 KiB). The store's replies are an
    /// integer, a status, a 40-byte script SHA or a short error; a reply that grows past this
    /// (a hostile or broken server streaming a huge bulk string or array) drops the connection
    /// at once, before more is buffered, with the reason "reply exceeds N bytes" (fail closed:
    /// requests in flight on it are unavailable, then the store reconnects).
    std::size_t max_reply_bytes = 64 * 1024;
    /// Where the store reports becoming ready or unavailable and Redis errors; null: spdlog's
    /// default logger (stdout). bt-axon passes its own, so stdout keeps only the ready line.
    std::shared_ptr<spdlog::logger> logger;
  };

  /// Parses the URL and resolves its host (may block briefly: call at startup). Connects only
  /// once attached to an event loop (see attach(), wait_ready()). Throws std::invalid_argument
  /// for a bad URL, prefix or unresolvable host.
  explicit redis_nonce_store(options opts);
  /// Detaches from every loop still attached: each request still in flight there completes
  /// with `unavailable`, on its loop. Destroy the store (or detach it) while its loops still
  /// run; otherwise its connections stay open until the process ends.
  ~redis_nonce_store() override;
  redis_nonce_store(const redis_nonce_store&) = delete;
  redis_nonce_store& operator=(const redis_nonce_store&) = delete;

  /// Starts connecting on each of `loops` (the connections spread over them, at least one
  /// each). Throws std::logic_error if one of them is already attached.
  void attach(std::span<boost::asio::io_context* const> loops) override;
  /// Closes the connections on `loops` (from a handler posted to each: call while they run).
  void detach(std::span<boost::asio::io_context* const> loops) noexcept override;

  bool answers_inline() const noexcept override { return false; }
  void async_record(std::string_view hotkey, std::string_view uuid, std::int64_t nonce,
                    std::int64_t now_ns, std::int64_t expires_at_ns,
                    nonce_completion done) noexcept override;
  /// Blocks until the answer (at most about `timeout`). For tools and tests; never called by the
  /// axon. `unavailable` at once when called on a thread that runs one of the attached loops
  /// (it would wait for itself) or when not attached.
  nonce_verdict record(std::string_view hotkey, std::string_view uuid, std::int64_t nonce,
                       std::int64_t now_ns, std::int64_t expires_at_ns) noexcept override;
  std::string unavailable_reason() const override;

  /// Waits until every attached loop has a ready connection or `within` passed; returns
  /// whether that is so (false while not attached).
  bool wait_ready(std::chrono::milliseconds within) const;

  /// "host:port/db" (never the password), for logs.
  const std::string& where() const noexcept;

 private:
  struct impl;
  std::shared_ptr<impl> p_;  // shared with the handlers pending on the loops
};

}  // namespace bt
