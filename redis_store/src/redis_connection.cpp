// redis_nonce_store's connections (redis_store_impl.hpp): connecting with AUTH, SELECT and
// SCRIPT LOAD pipelined, readiness, reconnection with backoff, and the teardown of a detached
// slot. Everything here runs on the slot's strand, except update_readiness() and detach_slots()
// (any thread).
#include "redis_store_impl.hpp"

#include <hiredis/hiredis.h>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace bt {

namespace {

namespace net = boost::asio;
using detail::lua_script;
using detail::redis_request;
using detail::release;

}  // namespace

// Applies `delta` to `sl`'s ready connections (when given) and recomputes readiness; logs
// the transitions. `why_down`: the reason to report while not ready (kept when empty).
void redis_nonce_store::impl::update_readiness(slot* sl, int delta, const std::string& why_down) {
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

void redis_nonce_store::impl::set_conn_ready(conn& c, bool r, const std::string& why) {
  if (c.ready == r) {
    if (!r) update_readiness(nullptr, 0, why);
    return;
  }
  c.ready = r;
  update_readiness(c.home.get(), r ? 1 : -1, why);
}

void redis_nonce_store::impl::on_setup_reply(redisAsyncContext* ac, void* r, void* priv) {
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

void redis_nonce_store::impl::connect(conn& c) {
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

void redis_nonce_store::impl::on_gone(conn& c, redisAsyncContext* ac) {
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
  const std::deque<redis_request*> pending = std::exchange(c.in_flight, {});
  for (redis_request* r : pending) {
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

void redis_nonce_store::impl::schedule_reconnect(conn& c, const std::string& why) {
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

// Ends the slot's connections: their pending requests complete `unavailable` and nothing
// reconnects. On the slot's strand; the connections' cancelled timer handlers keep them
// alive until they ran.
void redis_nonce_store::impl::teardown(slot& sl) {
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
void redis_nonce_store::impl::detach_slots(std::span<net::io_context* const>* loops) noexcept {
  std::vector<std::shared_ptr<slot>> gone;
  bool none_left = false;
  {
    std::unique_lock lk(slots_m);
    auto keep = slots.begin();
    for (auto it = slots.begin(); it != slots.end(); ++it) {
      const bool leaving =
          loops == nullptr || std::find(loops->begin(), loops->end(), (*it)->loop) != loops->end();
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

}  // namespace bt
