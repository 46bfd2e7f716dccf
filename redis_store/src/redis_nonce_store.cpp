// redis_nonce_store: see the contract in bt/redis_nonce_store.hpp.
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
#include <bt/redis_nonce_store.hpp>

#include "redis_asio.hpp"

#include <bt/keypair.hpp>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <sodium.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <vector>

namespace bt {

namespace {

namespace net = boost::asio;
using clock_type = std::chrono::steady_clock;

// The rules of memory_nonce_store (nonce_store.cpp, judge()) without its memory caps, atomically.
// Nonces, now and expiries are 20-digit fixed-width decimal strings (the int64 with its sign bit
// flipped), compared as strings: Lua numbers are doubles, which cannot hold a nanosecond nonce.
//   KEYS[1] the endpoint's record, a hash: e = expiry, f = last nonce (strictly_increasing) or
//           the window's floor (largest evicted nonce)
//   KEYS[2] window: the kept nonces, a sorted set with every score 0 (ordered by member)
//   ARGV    rule ('s', 'u', 'w'), nonce, now, expires_at, PEXPIREAT ms, window
// Returns 0 accepted, 1 stale, 2 replayed.
constexpr std::string_view lua_script = R"lua(
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

constexpr std::size_t max_prefix = 64;

// Fixed-width decimal of an int64, order-preserving as a string.
std::array<char, 20> fixed20(std::int64_t v) noexcept {
  std::uint64_t u = static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
  std::array<char, 20> out;
  for (int i = 19; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>('0' + u % 10);
    u /= 10;
  }
  return out;
}

struct request {
  nonce_completion done;
  bool finished = false;
  int refs = 0;          // hiredis callbacks and FIFO entries still pointing here
  bool retried = false;  // sent again with EVAL after NOSCRIPT
  clock_type::time_point deadline;
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

void release(request* r) noexcept {
  if (--r->refs == 0 && r->finished) delete r;
}

}  // namespace

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
    std::deque<request*> in_flight;
    net::steady_timer watchdog;  // the oldest request's deadline
    bool watching = false;
    net::steady_timer retry;  // reconnection backoff, or the connect timeout
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
    net::io_context* loop;
    detail::redis_strand ex;
    std::vector<std::shared_ptr<conn>> conns;  // strand only
    std::size_t next = 0;                      // strand only: round robin over conns
    bool closing = false;                      // strand only
    std::size_t ready_conns = 0;               // guarded by impl::m

    slot(std::shared_ptr<impl> st, net::io_context& l)
        : s(std::move(st)), loop(&l), ex(net::make_strand(l)) {}
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

  // Applies `delta` to `sl`'s ready connections (when given) and recomputes readiness; logs
  // the transitions. `why_down`: the reason to report while not ready (kept when empty).
  void update_readiness(slot* sl, int delta, const std::string& why_down) {
    {
      std::lock_guard lk(m);
      if (sl != nullptr) sl->ready_conns += static_cast<std::size_t>(delta);
      bool now_ready;
      bool attached;
      {
        std::shared_lock sk(slots_m);
        attached = !slots.empty();
        now_ready = attached && std::all_of(slots.begin(), slots.end(),
                                            [](const auto& x) { return x->ready_conns > 0; });
      }
      if (!now_ready && !why_down.empty()) reason = why_down;
      if (now_ready != ready) {
        ready = now_ready;
        if (now_ready)
          log().info("nonce store: redis {} ready", where);
        else if (attached)
          log().warn("nonce store: redis {} unavailable: {}", where, reason);
      }
    }
    cv.notify_all();
  }

  /// The slot whose loop runs on this thread, else null.
  std::shared_ptr<slot> local_slot() const {
    std::shared_lock lk(slots_m);
    for (const auto& sl : slots)
      if (sl->loop->get_executor().running_in_this_thread()) return sl;
    return nullptr;
  }

  // ---- connections (on the slot's strand) ----

  void set_conn_ready(conn& c, bool r, const std::string& why) {
    if (c.ready == r) {
      if (!r) update_readiness(nullptr, 0, why);
      return;
    }
    c.ready = r;
    update_readiness(c.home.get(), r ? 1 : -1, why);
  }

  static void on_setup_reply(redisAsyncContext* ac, void* r, void* priv) {
    auto* c = static_cast<conn*>(ac->data);
    auto* reply = static_cast<redisReply*>(r);
    const auto step = reinterpret_cast<std::uintptr_t>(priv);  // 0 AUTH, 1 SELECT, 2 SCRIPT LOAD
    if (c == nullptr || reply == nullptr) return;              // torn down meanwhile
    static constexpr const char* names[] = {"AUTH", "SELECT", "SCRIPT LOAD"};
    if (reply->type == REDIS_REPLY_ERROR) {
      c->last_error =
          std::string("redis ") + names[step] + " failed: " + std::string(reply->str, reply->len);
      redisAsyncFree(ac);  // deferred by hiredis while in a callback
      return;
    }
    if (step == 2) {
      if (reply->type != REDIS_REPLY_STRING) {
        c->last_error = "redis SCRIPT LOAD: unexpected reply";
        redisAsyncFree(ac);
        return;
      }
      c->sha.assign(reply->str, reply->len);
      c->backoff = c->s.opts.reconnect_min;
      c->s.set_conn_ready(*c, true, {});
    }
  }

  void connect(conn& c) {
    if (c.closing) return;
    const std::uint64_t gen = ++c.generation;
    redisAsyncContext* ac = redisAsyncConnect(ip.c_str(), ep.port);
    if (ac == nullptr) return schedule_reconnect(c, "redis: out of memory");
    if (ac->err != 0) {
      const std::string why = std::string("redis ") + where + " unreachable: " + ac->errstr;
      redisAsyncFree(ac);
      return schedule_reconnect(c, why);
    }
    ac->data = &c;
    if (!detail::redis_asio_attach(
            ac, c.home->ex,
            [w = c.weak_from_this(), ac] {
              if (auto self = w.lock()) self->s.on_gone(*self, ac);
            },
            opts.max_reply_bytes)) {
      redisAsyncFree(ac);
      return schedule_reconnect(c, "redis: cannot watch the socket");
    }
    c.ac = ac;
    // Pipelined behind the connect: AUTH, SELECT, SCRIPT LOAD.
    if (!ep.password.empty()) {
      if (ep.user.empty()) {
        const char* argv[] = {"AUTH", ep.password.c_str()};
        const std::size_t len[] = {4, ep.password.size()};
        redisAsyncCommandArgv(ac, &on_setup_reply, reinterpret_cast<void*>(0), 2, argv, len);
      } else {
        const char* argv[] = {"AUTH", ep.user.c_str(), ep.password.c_str()};
        const std::size_t len[] = {4, ep.user.size(), ep.password.size()};
        redisAsyncCommandArgv(ac, &on_setup_reply, reinterpret_cast<void*>(0), 3, argv, len);
      }
    }
    const std::string db = std::to_string(ep.db);
    {
      const char* argv[] = {"SELECT", db.c_str()};
      const std::size_t len[] = {6, db.size()};
      redisAsyncCommandArgv(ac, &on_setup_reply, reinterpret_cast<void*>(1), 2, argv, len);
    }
    {
      const char* argv[] = {"SCRIPT", "LOAD", lua_script.data()};
      const std::size_t len[] = {6, 4, lua_script.size()};
      redisAsyncCommandArgv(ac, &on_setup_reply, reinterpret_cast<void*>(2), 3, argv, len);
    }
    // Not ready in time (a black-holed address, a Redis that accepts but never answers): retry.
    c.retry.expires_after(opts.connect_timeout);
    c.retry.async_wait([self = c.shared_from_this(), gen](const boost::system::error_code& ec) {
      conn& c = *self;
      if (ec || c.generation != gen || c.ready || c.ac == nullptr) return;
      c.last_error = "redis " + c.s.where + " not answering (connect timeout)";
      redisAsyncFree(c.ac);
    });
  }

  void on_gone(conn& c, redisAsyncContext* ac) {
    // hiredis ran every pending callback (null replies) before this.
    std::string why = std::move(c.last_error);
    c.last_error.clear();
    if (why.empty()) {
      why = std::string("redis ") + where + " connection lost";
      if (ac->err != 0) why += std::string(": ") + ac->errstr;
    }
    c.ac = nullptr;
    // Normally empty already. Taken out first: a completion may resume its request at once
    // (nonce_completion), and that request may queue another on this slot.
    const std::deque<request*> pending = std::exchange(c.in_flight, {});
    for (request* r : pending) {
      r->finish(nonce_verdict::unavailable);
      release(r);
    }
    c.watchdog.cancel();
    c.retry.cancel();
    if (c.closing) {
      set_conn_ready(c, false, {});
      return;
    }
    set_conn_ready(c, false, why);
    // Reconnect from a fresh handler, not from inside hiredis's free.
    net::post(c.home->ex,
              [self = c.shared_from_this(), why] { self->s.schedule_reconnect(*self, why); });
  }

  void schedule_reconnect(conn& c, const std::string& why) {
    if (c.closing) return;
    update_readiness(nullptr, 0, why);
    const std::uint64_t gen = ++c.generation;
    c.retry.expires_after(c.backoff);
    c.backoff = std::min(c.backoff * 2, opts.reconnect_max);
    c.retry.async_wait([self = c.shared_from_this(), gen](const boost::system::error_code& ec) {
      conn& c = *self;
      if (ec || c.generation != gen || c.ac != nullptr) return;
      c.s.connect(c);
    });
  }

  // ---- requests (on the slot's strand) ----

  static void on_reply(redisAsyncContext* ac, void* rp, void* priv) {
    auto* r = static_cast<request*>(priv);
    auto* c = static_cast<conn*>(ac->data);
    auto* reply = static_cast<redisReply*>(rp);
    if (c != nullptr && !c->in_flight.empty() && c->in_flight.front() == r) {
      c->in_flight.pop_front();
      release(r);
    }
    if (reply == nullptr) {  // connection gone
      r->finish(nonce_verdict::unavailable);
    } else if (reply->type == REDIS_REPLY_INTEGER && reply->integer >= 0 && reply->integer <= 2) {
      static constexpr nonce_verdict verdicts[] = {nonce_verdict::accepted, nonce_verdict::stale,
                                                   nonce_verdict::replayed};
      r->finish(verdicts[reply->integer]);
    } else if (reply->type == REDIS_REPLY_ERROR && !r->retried && c != nullptr &&
               std::string_view(reply->str, reply->len).substr(0, 8) == "NOSCRIPT") {
      // The script cache was flushed (restart, SCRIPT FLUSH): EVAL sends the script again and
      // caches it, so the next EVALSHA works. Same connection, same deadline.
      r->retried = true;
      if (!r->finished) c->s.send(*c, *r);
    } else {
      if (!r->finished && reply->type == REDIS_REPLY_ERROR && c != nullptr)
        c->s.log().warn("nonce store: redis error: {}", std::string_view(reply->str, reply->len));
      r->finish(nonce_verdict::unavailable);
    }
    release(r);  // the callback's reference
  }

  void send(conn& c, request& r) {
    const std::string_view sha_or_script = r.retried ? lua_script : std::string_view(c.sha);
    const char rule[1] = {r.rule};
    const char* argv[] = {r.retried ? "EVAL" : "EVALSHA",
                          sha_or_script.data(),
                          "2",
                          r.key1.data(),
                          r.key2.data(),
                          rule,
                          r.nonce.data(),
                          r.now.data(),
                          r.exp.data(),
                          r.px.data(),
                          r.window.data()};
    const std::size_t len[] = {
        r.retried ? 4u : 7u, sha_or_script.size(), 1, r.key1.size(), r.key2.size(), 1, 20, 20, 20,
        r.px.size(),         r.window.size()};
    auto issue = [&] {
      if (redisAsyncCommandArgv(c.ac, &on_reply, &r, 11, argv, len) != REDIS_OK) {
        r.finish(nonce_verdict::unavailable);
        return;
      }
      r.refs += 2;  // the callback and the FIFO entry
      c.in_flight.push_back(&r);
      arm_watchdog(c);
    };
    // Nothing else in flight: the command is written at once, so the request waits for the
    // round trip alone. Otherwise the commands of one turn of the loop share one posted write.
    if (c.in_flight.empty())
      detail::redis_asio_write_now(c.ac, issue);  // c.ac may be gone after this
    else
      issue();
  }

  void arm_watchdog(conn& c) {
    if (c.watching || c.in_flight.empty()) return;
    c.watching = true;
    c.watchdog.expires_at(c.in_flight.front()->deadline);
    c.watchdog.async_wait([self = c.shared_from_this()](const boost::system::error_code& ec) {
      conn& c = *self;
      c.watching = false;
      if (ec) return;
      const auto now = clock_type::now();
      // Collected first: a completion may resume its request at once (nonce_completion), and
      // that request may queue another on this connection. The late ones stay in the FIFO
      // until their reply or the teardown below.
      std::vector<request*> late;
      for (request* r : c.in_flight)
        if (!r->finished && r->deadline <= now) late.push_back(r);
      for (request* r : late) r->finish(nonce_verdict::unavailable);
      if (!late.empty() && c.ac != nullptr) {
        c.last_error = "redis " + c.s.where + " did not answer within " +
                       std::to_string(c.s.opts.timeout.count()) + " ms";
        redisAsyncFree(c.ac);  // every pending callback runs (null reply), then on_gone
        return;
      }
      c.s.arm_watchdog(c);
    });
  }

  void dispatch(slot& sl, request* r) {
    r->refs += 1;  // held here
    if (sl.closing) {
      r->finish(nonce_verdict::unavailable);
    } else if (clock_type::now() >= r->deadline) {
      r->finish(nonce_verdict::unavailable);  // waited in the queue past its timeout
    } else {
      conn* chosen = nullptr;
      for (std::size_t i = 0; i < sl.conns.size() && chosen == nullptr; ++i) {
        conn& c = *sl.conns[(sl.next + i) % sl.conns.size()];
        if (c.ready && c.ac != nullptr && c.in_flight.size() < opts.max_in_flight) chosen = &c;
      }
      if (!sl.conns.empty()) sl.next = (sl.next + 1) % sl.conns.size();
      if (chosen == nullptr)
        r->finish(nonce_verdict::unavailable);
      else
        send(*chosen, *r);
    }
    release(r);
  }

  // Ends the slot's connections: their pending requests complete `unavailable` and nothing
  // reconnects. On the slot's strand; the connections' cancelled timer handlers keep them
  // alive until they ran.
  static void teardown(slot& sl) {
    sl.closing = true;
    for (auto& c : sl.conns) {
      c->closing = true;
      c->retry.cancel();
      c->watchdog.cancel();
      if (c->ac != nullptr) redisAsyncFree(c->ac);  // on_gone: no reconnection
    }
    sl.conns.clear();
  }

  /// Takes the slots of `loops` (all when null) out of the attached set and posts their
  /// teardown to their loops.
  void detach_slots(std::span<net::io_context* const>* loops) noexcept {
    std::vector<std::shared_ptr<slot>> gone;
    bool none_left = false;
    {
      std::unique_lock lk(slots_m);
      auto keep = slots.begin();
      for (auto it = slots.begin(); it != slots.end(); ++it) {
        const bool leaving = loops == nullptr ||
                             std::find(loops->begin(), loops->end(), (*it)->loop) != loops->end();
        if (leaving)
          gone.push_back(std::move(*it));
        else
          *keep++ = std::move(*it);
      }
      slots.erase(keep, slots.end());
      none_left = slots.empty();
    }
    if (gone.empty()) return;
    // With loops left, readiness is theirs (their reason, if any, stays).
    update_readiness(nullptr, 0,
                     none_left ? "redis " + where + ": the store is not attached to an event loop"
                               : std::string());
    for (auto& sl : gone) {
      auto* raw = sl.get();
      net::post(raw->ex, [sl = std::move(sl)] { teardown(*sl); });
    }
  }
};

redis_nonce_store::redis_nonce_store(options opts) : p_(std::make_shared<impl>()) {
  impl& s = *p_;
  s.ep = parse_url(opts.url);
  if (s.ep.password.empty()) s.ep.password = opts.password;
  if (s.ep.password.empty())
    if (const char* env = std::getenv("BT_REDIS_PASSWORD"); env != nullptr) s.ep.password = env;
  if (opts.key_prefix.size() > max_prefix)
    throw std::invalid_argument("redis nonce store: key prefix longer than 64 bytes");
  if (opts.timeout.count() <= 0)
    throw std::invalid_argument("redis nonce store: the timeout must be positive");
  opts.connections = std::clamp<std::size_t>(opts.connections, 1, 64);
  opts.window = std::max<std::size_t>(opts.window, 1);
  opts.max_in_flight = std::max<std::size_t>(opts.max_in_flight, 1);
  opts.max_reply_bytes = std::max<std::size_t>(opts.max_reply_bytes, 1024);
  opts.reconnect_min = std::max(opts.reconnect_min, std::chrono::milliseconds(1));
  opts.reconnect_max = std::max(opts.reconnect_max, opts.reconnect_min);
  s.opts = std::move(opts);
  s.where = (s.ep.host.find(':') != std::string::npos ? "[" + s.ep.host + "]" : s.ep.host) + ":" +
            std::to_string(s.ep.port) + "/" + std::to_string(s.ep.db);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (const int rc = getaddrinfo(s.ep.host.c_str(), nullptr, &hints, &res); rc != 0 || !res)
    throw std::invalid_argument("redis URL: cannot resolve host '" + s.ep.host +
                                "': " + gai_strerror(rc));
  char buf[NI_MAXHOST];
  const int rc =
      getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
  freeaddrinfo(res);
  if (rc != 0) throw std::invalid_argument("redis URL: cannot resolve host '" + s.ep.host + "'");
  s.ip = buf;

  init_crypto();
  s.reason = "redis " + s.where + ": the store is not attached to an event loop";
}

redis_nonce_store::~redis_nonce_store() {
  p_->detach_slots(nullptr);
}

void redis_nonce_store::attach(std::span<boost::asio::io_context* const> loops) {
  if (loops.empty()) return;
  impl& s = *p_;
  std::vector<std::shared_ptr<impl::slot>> fresh;
  // The connections, spread over the loops (at least one each).
  const std::size_t total = std::max(s.opts.connections, loops.size());
  for (std::size_t i = 0; i < loops.size(); ++i) {
    if (loops[i] == nullptr) throw std::invalid_argument("redis_nonce_store::attach: null loop");
    auto sl = std::make_shared<impl::slot>(p_, *loops[i]);
    const std::size_t n = total / loops.size() + (i < total % loops.size() ? 1 : 0);
    for (std::size_t k = 0; k < n; ++k) sl->conns.push_back(std::make_shared<impl::conn>(sl));
    fresh.push_back(std::move(sl));
  }
  {
    std::unique_lock lk(s.slots_m);
    bool twice = false;
    for (const auto& sl : fresh)
      for (const auto& have : s.slots) twice = twice || have->loop == sl->loop;
    if (twice) {
      for (auto& sl : fresh) sl->conns.clear();  // each connection holds its slot
      throw std::logic_error("redis_nonce_store::attach: this event loop is already attached");
    }
    s.slots.insert(s.slots.end(), fresh.begin(), fresh.end());
  }
  s.update_readiness(nullptr, 0, "redis " + s.where + " not connected yet");
  for (auto& sl : fresh) {
    auto* raw = sl.get();
    net::post(raw->ex, [sl = std::move(sl)] {
      for (auto& c : sl->conns) sl->s->connect(*c);
    });
  }
}

void redis_nonce_store::detach(std::span<boost::asio::io_context* const> loops) noexcept {
  p_->detach_slots(&loops);
}

void redis_nonce_store::async_record(std::string_view hotkey, std::string_view uuid,
                                     std::int64_t nonce, std::int64_t now_ns,
                                     std::int64_t expires_at_ns, nonce_completion done) noexcept {
  impl& s = *p_;
  request* r = nullptr;
  try {
    r = new request{};
    r->done = done;
    r->deadline = clock_type::now() + s.opts.timeout;
    r->rule = s.opts.rule == nonce_rule::strictly_increasing ? 's'
              : s.opts.rule == nonce_rule::unique            ? 'u'
                                                             : 'w';
    // The endpoint's key: BLAKE2b-128 over length-prefixed fields, so that no two distinct
    // (hotkey, uuid[, nonce]) share an input.
    crypto_generichash_state st;
    crypto_generichash_init(&st, nullptr, 0, 16);
    const auto absorb = [&st](const void* p, std::size_t n) {
      const std::uint64_t len = n;
      crypto_generichash_update(&st, reinterpret_cast<const unsigned char*>(&len), sizeof len);
      crypto_generichash_update(&st, static_cast<const unsigned char*>(p), n);
    };
    absorb(hotkey.data(), hotkey.size());
    absorb(uuid.data(), uuid.size());
    if (r->rule == 'u') absorb(&nonce, sizeof nonce);
    unsigned char h[16];
    crypto_generichash_final(&st, h, sizeof h);
    char hex[33];
    sodium_bin2hex(hex, sizeof hex, h, sizeof h);
    r->key1.reserve(s.opts.key_prefix.size() + 40);
    r->key1.append(s.opts.key_prefix).append(1, r->rule).append(":{").append(hex, 32).append("}");
    r->key2 = r->key1 + ":n";
    r->nonce = fixed20(nonce);
    r->now = fixed20(now_ns);
    r->exp = fixed20(expires_at_ns);
    const std::int64_t px =
        expires_at_ns / 1'000'000 + 1 + static_cast<std::int64_t>(s.opts.expiry_margin.count());
    r->px = std::to_string(std::max<std::int64_t>(px, 1));
    r->window = std::to_string(s.opts.window);

    // This loop's slot, inline; from outside every loop, one round robin.
    std::shared_ptr<impl::slot> sl = s.local_slot();
    const bool local = sl != nullptr;
    if (!local) {
      std::shared_lock lk(s.slots_m);
      if (!s.slots.empty())
        sl = s.slots[s.next_slot.fetch_add(1, std::memory_order_relaxed) % s.slots.size()];
    }
    if (sl == nullptr) {
      delete r;
      done(nonce_verdict::unavailable);  // not attached to any loop
      return;
    }
    auto* raw = sl.get();
    auto job = [sl = std::move(sl), r] { sl->s->dispatch(*sl, r); };
    if (local)
      net::dispatch(raw->ex, std::move(job));
    else
      net::post(raw->ex, std::move(job));
  } catch (...) {
    if (r != nullptr) delete r;
    done(nonce_verdict::unavailable);
  }
}

nonce_verdict redis_nonce_store::record(std::string_view hotkey, std::string_view uuid,
                                        std::int64_t nonce, std::int64_t now_ns,
                                        std::int64_t expires_at_ns) noexcept {
  // Waiting on a thread that runs one of the loops would wait for itself.
  try {
    if (p_->local_slot() != nullptr) return nonce_verdict::unavailable;
  } catch (...) {
    return nonce_verdict::unavailable;
  }
  struct waiter {
    std::mutex m;
    std::condition_variable cv;
    std::optional<nonce_verdict> v;
    static void complete(void* arg, nonce_verdict v) noexcept {
      auto& w = *static_cast<waiter*>(arg);
      std::lock_guard lk(w.m);
      w.v = v;
      w.cv.notify_one();
    }
  } w;
  async_record(hotkey, uuid, nonce, now_ns, expires_at_ns, nonce_completion{&waiter::complete, &w});
  std::unique_lock lk(w.m);
  w.cv.wait(lk, [&] { return w.v.has_value(); });
  return *w.v;
}

std::string redis_nonce_store::unavailable_reason() const {
  std::lock_guard lk(p_->m);
  return p_->ready ? std::string() : p_->reason;
}

bool redis_nonce_store::wait_ready(std::chrono::milliseconds within) const {
  std::unique_lock lk(p_->m);
  return p_->cv.wait_for(lk, within, [&] { return p_->ready; });
}

const std::string& redis_nonce_store::where() const noexcept {
  return p_->where;
}

}  // namespace bt
