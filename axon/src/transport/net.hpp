// Asio/Beast types shared by the axon's internals. Every connection runs on its own strand
// (one place to change them); the coroutine type and completion token are spelled once here.
// stream_t is the TCP transport only: a connection reads and writes a byte_stream
// (byte_stream.hpp), never a socket type.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/basic_stream.hpp>

namespace bt::detail {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

using strand_t = net::strand<net::io_context::executor_type>;
using socket_t = net::basic_stream_socket<tcp, strand_t>;
using acceptor_t = net::basic_socket_acceptor<tcp, strand_t>;
using stream_t = beast::basic_stream<tcp, strand_t>;

/// A coroutine running on a strand.
template <class T = void>
using task = net::awaitable<T, strand_t>;

/// Completion token for expected outcomes: `auto [ec, n] = co_await op(..., use_task);`
/// (EOF, timeouts and cancellation are expected outcomes: results, not exceptions).
inline const auto use_task = net::as_tuple(net::use_awaitable_t<strand_t>{});

}  // namespace bt::detail
