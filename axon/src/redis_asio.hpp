// Drives a hiredis asynchronous context (redisAsyncContext) from an Asio event loop: hiredis's
// event hooks (addRead, delRead, addWrite, delWrite, cleanup) become waits on an
// asio::posix::stream_descriptor of the context's socket, whose completions call
// redisAsyncHandleRead / redisAsyncHandleWrite. Everything runs on one strand (the context is not
// thread safe): the caller issues commands on that strand too.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <functional>

struct redisAsyncContext;

namespace bt::detail {

using redis_strand = boost::asio::strand<boost::asio::io_context::executor_type>;

/// Attaches `ac` (fresh from redisAsyncConnect, before any command) to `ex`. `on_gone` runs once,
/// on the strand, when hiredis frees the context (after its pending callbacks ran with a null
/// reply), whatever the reason: connect failure, connection lost, redisAsyncFree. Returns false
/// (nothing attached) if the context already has an event library or its socket cannot be
/// watched.
///
/// Writes: once connected, a command's bytes are written by a handler posted to the strand
/// (commands issued in one turn of the loop share one write), not after a wait for writability:
/// the socket almost always has room, and a wait costs an epoll round. Only a write that could
/// not finish (socket buffer full) or a connect in progress waits for writability.
bool redis_asio_attach(redisAsyncContext* ac, const redis_strand& ex,
                       std::function<void()> on_gone);

}  // namespace bt::detail
