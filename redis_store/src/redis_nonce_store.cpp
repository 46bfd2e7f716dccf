// redis_nonce_store: see the contract in bt/redis_nonce_store.hpp and the design in
// redis_store_impl.hpp. Here: the requests (keys, sending, replies, the timeout watchdog) and the
// public functions.
#include "redis_store_impl.hpp"

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
using clock_type = detail::redis_clock;
using detail::lua_script;
using detail::redis_request;
using detail::release;

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

}  // namespace

void redis_nonce_store::impl::on_reply(redisAsyncContext* ac, void* rp, void* priv) {
  auto* r = static_cast<redis_request*>(priv);
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

void redis_nonce_store::impl::send(conn& c, redis_request& r) {
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

void redis_nonce_store::impl::arm_watchdog(conn& c) {
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
    std::vector<redis_request*> late;
    for (redis_request* r : c.in_flight)
      if (!r->finished && r->deadline <= now) late.push_back(r);
    for (redis_request* r : late) r->finish(nonce_verdict::unavailable);
    if (!late.empty() && c.ac != nullptr) {
      c.last_error = "redis " + c.s.where + " did not answer within " +
                     std::to_string(c.s.opts.timeout.count()) + " ms";
      redisAsyncFree(c.ac);  // every pending callback runs (null reply), then on_gone
      return;
    }
    c.s.arm_watchdog(c);
  });
}

void redis_nonce_store::impl::dispatch(slot& sl, redis_request* r) {
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
  redis_request* r = nullptr;
  try {
    r = new redis_request{};
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
