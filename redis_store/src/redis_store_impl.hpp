// The private parts of bt::redis_nonce_store that its sources share: the Lua script, a request,
// and the store's state (impl: slots, connections, readiness). The connections' lifecycle is in
// redis_connection.cpp, the requests and the public functions in redis_nonce_store.cpp, the URL
// parser in redis_url.cpp.
//
// Threads: none of its own. The store runs on the event loops it is attached to (nonce_store::
// attach; bt::axon's I/O threads). Each attached loop gets a slot: a strand and its own Redis
// connections, whose hiredis contexts, timers and in-flight requests are touched only on that
// strand. async_record() (called on an axon I/O thread, inside a connection's coroutine) hashes
// the endpoint into its keys and hands the request to the slot of the loop it runs on, inline
// (asio::dispatch): the command is queued on that loop's connection and written in the same
// turn of the loop, the reply is read there, and the verdict resumes the caller's coroutine on
// the same thread. No thread hand-off on the request's path. A call from a thread that runs none
// of the loops (tools, tests) is posted to a slot round robin.
//
// The verdict goes back through the request's nonce_completion, called exactly once: from the
// reply, from the timeout watchdog, when the connection is lost, or when the slot is detached.
//
// Requests on one connection are pipelined; Redis answers them in order, so each connection
// keeps its in-flight requests in a FIFO whose front is the one the next reply belongs to.
// A request that times out is answered `unavailable` at once and stays in the FIFO until its
// reply (or the connection's teardown) arrives; the connection is then torn down (a Redis that
// stopped answering is indistinguishable from a dead one) and reconnects with backoff.
#pragma once

#include <bt/redis_nonce_store.hpp>

#include "redis_asio.hpp"

#include <hiredis/async.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bt {
namespace detail {

using redis_clock = std::chrono::steady_clock;

// The rules of memory_nonce_store (nonce_store.cpp, judge()) without its memory caps, atomically.
// Nonces, now and expiries are 20-digit fixed-width decimal strings (the int64 with its sign bit
// flipped), compared as strings: Lua numbers are doubles, which cannot hold a nanosecond nonce.
//   KEYS[1] the endpoint's record, a hash: e = expiry, f = last nonce (strictly_increasing) or
//           the window's floor (largest evicted nonce)
//   KEYS[2] window: the kept nonces, a sorted set with every score 0 (ordered by member)
//   ARGV    rule ('s', 'u', 'w'), nonce, now, expires_at, PEXPIREAT ms, window
// Returns 0 accepted, 1 stale, 2 replayed.
inline constexpr std::string_view lua_script = R"lua(
local rule, n, now, exp, px, win = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local rec = KEYS[1]
local cur = redis.call('HMGET', rec, 'e', 'f')
local e, f = cur[1], cur[2]
if e and e < now then
  redis.call('DEL', rec)
  if rule == 'w' then redis.call('DEL', KEYS[2]) end
  e, f = false, false
end
if rule == 'u' then
  if e then return 2 end
elseif rule == 's' then
  if f and n <= f then return 1 end
  redis.call('HSET', rec, 'f', n)
else
  if f and n <= f then return 1 end
  if redis.call('ZSCORE', KEYS[2], n) then return 2 end
  redis.call('ZADD', KEYS[2], 0, n)
  if redis.call('ZCARD', KEYS[2]) > win then
    local low = redis.call('ZPOPMIN', KEYS[2])
    redis.call('HSET', rec, 'f', low[1])
  end
end
if not e or e < exp then
  redis.call('HSET', rec, 'e', exp)
  redis.call('PEXPIREAT', rec, px)
  if rule == 'w' then redis.call('PEXPIREAT', KEYS[2], px) end
end
return 0
)lua";

// One async_record() call: the command's arguments and its completion, shared by the hiredis
// callback and the connection's FIFO (refs); deleted by the last release() once finished.
struct redis_request {
  nonce_completion done;
  bool finished = false;
  int refs = 0;          // hiredis callbacks and FIFO entries still pointing here
  bool retried = false;  // sent again with EVAL after NOSCRIPT
  redis_clock::time_point deadline;
  std::string key1, key2;
  std::array<char, 20> nonce, now, exp;
  std::string px, window;
  char rule;

  void finish(nonce_verdict v) noexcept {
    if (finished) return;
    finished = true;
    done(v);
  }
};

inline void release(redis_request* r) noexcept {
  if (--r->refs == 0 && r->finished) delete r;
}

}  // namespace detail

struct redis_nonce_store::impl {
  struct slot;

  // One Redis connection of a slot; everything here runs on the slot's strand. It holds its
  // slot and the slot holds it until the teardown (teardown()) breaks the cycle: a slot whose
  // loop never runs its teardown keeps its connections open until the process ends.
  struct conn : std::enable_shared_from_this<conn> {
    std::shared_ptr<slot> home;
    impl& s;
    redisAsyncContext* ac = nullptr;
    bool ready = false;    // AUTH, SELECT and SCRIPT LOAD answered
    bool closing = false;  // the slot was detached: no reconnection
    std::string sha;       // of lua_script, from this connection's SCRIPT LOAD
    std::deque<detail::redis_request*> in_flight;
    boost::asio::steady_timer watchdog;  // the oldest request's deadline
    bool watching = false;
    boost::asio::steady_timer retry;  // reconnection backoff, or the connect timeout
    std::chrono::milliseconds backoff;
    std::uint64_t generation = 0;  // bumps per context, so stale timer handlers do nothing
    std::string last_error;        // why this context is being torn down, for on_gone

    explicit conn(std::shared_ptr<slot> h)
        : home(std::move(h)),
          s(*home->s),
          watchdog(home->ex),
          retry(home->ex),
          backoff(s.opts.reconnect_min) {}
  };

  // The store's part of one attached event loop.
  struct slot : std::enable_shared_from_this<slot> {
    std::shared_ptr<impl> s;
    boost::asio::io_context* loop;
    detail::redis_strand ex;
    std::vector<std::shared_ptr<conn>> conns;  // strand only
    std::size_t next = 0;                      // strand only: round robin over conns
    bool closing = false;                      // strand only
    std::size_t ready_conns = 0;               // guarded by impl::m

    slot(std::shared_ptr<impl> st, boost::asio::io_context& l)
        : s(std::move(st)), loop(&l), ex(boost::asio::make_strand(l)) {}
  };

  options opts;
  spdlog::logger& log() const { return opts.logger ? *opts.logger : *spdlog::default_logger_raw(); }
  endpoint ep;
  std::string ip;  // the resolved host, numeric
  std::string where;

  // The attached loops. Read on every request (shared), written by attach/detach.
  mutable std::shared_mutex slots_m;
  std::vector<std::shared_ptr<slot>> slots;
  std::atomic<std::size_t> next_slot{0};  // round robin for callers outside every loop

  // Readiness: ready while every attached loop has a ready connection. Lock order: m, then
  // slots_m (shared); never the other way round.
  mutable std::mutex m;
  mutable std::condition_variable cv;
  std::string reason;
  bool ready = false;

  /// The slot whose loop runs on this thread, else null.
  std::shared_ptr<slot> local_slot() const {
    std::shared_lock lk(slots_m);
    for (const auto& sl : slots)
      if (sl->loop->get_executor().running_in_this_thread()) return sl;
    return nullptr;
  }

  // ---- connections (redis_connection.cpp; on the slot's strand unless said) ----

  // Applies `delta` to `sl`'s ready connections (when given) and recomputes readiness; logs
  // the transitions. `why_down`: the reason to report while not ready (kept when empty).
  void update_readiness(slot* sl, int delta, const std::string& why_down);
  void set_conn_ready(conn& c, bool r, const std::string& why);
  static void on_setup_reply(redisAsyncContext* ac, void* r, void* priv);
  void connect(conn& c);
  void on_gone(conn& c, redisAsyncContext* ac);
  void schedule_reconnect(conn& c, const std::string& why);
  // Ends the slot's connections: their pending requests complete `unavailable` and nothing
  // reconnects. On the slot's strand; the connections' cancelled timer handlers keep them
  // alive until they ran.
  static void teardown(slot& sl);
  /// Takes the slots of `loops` (all when null) out of the attached set and posts their
  /// teardown to their loops.
  void detach_slots(std::span<boost::asio::io_context* const>* loops) noexcept;

  // ---- requests (redis_nonce_store.cpp; on the slot's strand) ----

  static void on_reply(redisAsyncContext* ac, void* rp, void* priv);
  void send(conn& c, detail::redis_request& r);
  void arm_watchdog(conn& c);
  void dispatch(slot& sl, detail::redis_request* r);
};

}  // namespace bt
