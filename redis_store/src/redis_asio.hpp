// Drives a hiredis asynchronous context (redisAsyncContext) from an Asio event loop: hiredis's
// event hooks (addRead, delRead, addWrite, delWrite, cleanup) become waits on an
// asio::posix::stream_descriptor of the context's socket, whose completions call
// redisAsyncHandleRead / redisAsyncHandleWrite. Everything runs on one strand (the context is not
// thread safe): the caller issues commands on that strand too.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <cstddef>
#include <functional>

struct redisAsyncContext;

namespace bt::detail {

using redis_strand = boost::asio::strand<boost::asio::io_context::executor_type>;

/// The default bound of redis_asio_attach's `max_reply_bytes`: the replay store's replies are an
/// integer, a status line, a 40-byte script SHA or a short error.
inline constexpr std::size_t redis_default_max_reply_bytes = 64 * 1024;

/// Attaches `ac` (fresh from redisAsyncConnect, before any command) to `ex`. `on_gone` runs once,
/// on the strand, when hiredis frees the context (after its pending callbacks ran with a null
/// reply), whatever the reason: connect failure, connection lost, redisAsyncFree. The context is
/// still readable then: ac->err and ac->errstr say why when it failed. Returns false (nothing
/// attached) if the context already has an event library or its socket cannot be watched.
///
/// Reply size: hiredis buffers a bulk string until all of it arrived and allocates an array's
/// slots from the length the peer announces, so a peer (a hostile or broken server) could make
/// the process hold any amount of memory. The adapter bounds one reply to `max_reply_bytes`:
/// the unparsed input held by the reader (checked after each read of at most 16 KiB), and the
/// strings and array slots built for one reply (checked before each is built). Past either,
/// the connection is dropped (fail closed: the pending callbacks run with a null reply) with
/// ac->err = REDIS_ERR_OTHER and ac->errstr "reply exceeds <max_reply_bytes> bytes".
///
/// Writes: once connected, a command's bytes are written by a handler posted to the strand
/// (commands issued in one turn of the loop share one write), not after a wait for writability:
/// the socket almost always has room, and a wait costs an epoll round. Only a write that could
/// not finish (socket buffer full) or a connect in progress waits for writability.
bool redis_asio_attach(redisAsyncContext* ac, const redis_strand& ex, std::function<void()> on_gone,
                       std::size_t max_reply_bytes = redis_default_max_reply_bytes);

/// Runs `issue`, which queues commands on `ac` (redisAsyncCommand and kin), and writes them
/// before returning instead of from a posted handler: a request that finds its connection idle
/// then costs no turn of the event loop before its bytes leave (a turn is an extra epoll_wait
/// per request). On the strand, never from inside hiredis; inside a reply's callback, and on a
/// context that is not attached, `issue` runs alone and the write is posted as usual. The write
/// may find the connection broken: hiredis then frees `ac` (its callbacks run with a null reply
/// and on_gone follows), so the caller must not touch `ac` after this returns.
void redis_asio_write_now(redisAsyncContext* ac, void (*issue)(void*), void* arg);

/// The same for any callable (no allocation: it is called through a pointer to it).
template <class Issue>
void redis_asio_write_now(redisAsyncContext* ac, Issue& issue) {
  redis_asio_write_now(
      ac, [](void* f) { (*static_cast<Issue*>(f))(); }, &issue);
}

}  // namespace bt::detail
