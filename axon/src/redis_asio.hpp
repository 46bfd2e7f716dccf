// Drives a hiredis asynchronous context (redisAsyncContext) from an Asio event loop: hiredis's
// event hooks (addRead, delRead, addWrite, delWrite, cleanup) become waits on an
// asio::posix::stream_descriptor of the context's socket, whose completions call
// redisAsyncHandleRead / redisAsyncHandleWrite. Everything runs on the io_context's one thread
// (the context is not thread safe).
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>

struct redisAsyncContext;

namespace bt::detail {

/// Attaches `ac` (fresh from redisAsyncConnect, before any command) to `ioc`. `on_gone` runs once,
/// when hiredis frees the context (after its pending callbacks ran with a null reply), whatever
/// the reason: connect failure, connection lost, redisAsyncFree. Returns false (nothing attached)
/// if the context already has an event library or its socket cannot be watched.
bool redis_asio_attach(redisAsyncContext* ac, boost::asio::io_context& ioc,
                       std::function<void()> on_gone);

}  // namespace bt::detail
