// The first step of a write that is tried in place: one write_some on a non-blocking socket.
//
// An answer or a request nearly always fits the socket's send buffer, and a write completed in
// place costs one system call and no trip through the io_context (an asynchronous write's
// completion is posted, and each post costs the loop an epoll_wait). Whatever the socket did not
// take is returned, for the caller's asynchronous write (under its own deadline).
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/error.hpp>

namespace bt::detail {

/// Writes what `socket` takes of `buffers` now, if it is in non-blocking mode (a blocking socket
/// is left alone: nothing is written). Returns the bytes not written, empty when all were.
/// `ec` is set on a write error only: a full send buffer (would_block) is no error.
template <class Socket, class ConstBufferSequence>
boost::beast::buffers_suffix<ConstBufferSequence> write_in_place(Socket& socket,
                                                                 const ConstBufferSequence& buffers,
                                                                 boost::beast::error_code& ec) {
  boost::beast::buffers_suffix<ConstBufferSequence> rest(buffers);
  ec = {};
  if (!socket.non_blocking()) return rest;
  const std::size_t n = socket.write_some(buffers, ec);
  if (ec == boost::asio::error::would_block) ec = {};
  if (!ec) rest.consume(n);
  return rest;
}

}  // namespace bt::detail
