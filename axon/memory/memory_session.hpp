// Sessions of a bt::axon in memory: no socket, no acceptor, no I/O thread. Each exchange() runs
// one real connection (session.cpp, every stage of pipeline.cpp, response.cpp) over an in-memory
// byte_stream on the caller's thread: the axon reads the input, then EOF (so no read waits on a
// deadline), answers, and closes. For tests (tests/axon/memory_session_test.cpp) and the fuzzer
// (fuzz/axon_request_fuzz.cpp), which must not depend on the network or on wall time.
//
// By default one connection object (and its stream and string capacities) serves every exchange:
// connection::reuse() returns it to the state of a new connection between two exchanges, so an
// exchange answers exactly as on a fresh connection (tested on keep-alive, refused, partial and
// session-auth inputs) and costs fewer allocations. connection_mode::fresh builds one per exchange,
// as the accept loop does.
//
// Contract: the axon has its routes attached, is never start()ed (the constructor throws
// std::logic_error if it was) and outlives its one memory_axon; exchange() is called from one
// thread at a time. Handlers run where
// they would in production (the worker pool's threads, or coroutines on the connection's strand).
// A handler that never returns keeps exchange() waiting until the request's deadline (the 408).
#pragma once

#include "transport/net.hpp"

#include <bt/axon.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace bt::detail {

struct axon_access {
  static axon::impl& of(axon& ax) noexcept { return *ax.impl_; }
};

class connection;
class memory_stream;

enum class connection_mode { reused, fresh };

class memory_axon {
 public:
  explicit memory_axon(axon& ax, connection_mode mode = connection_mode::reused);
  ~memory_axon();
  memory_axon(const memory_axon&) = delete;
  memory_axon& operator=(const memory_axon&) = delete;

  /// One connection from `peer_ip`:`peer_port` that sends `input` and then closes its sending
  /// side. Returns once the axon closed the connection, with everything the axon wrote.
  std::string exchange(std::string_view input, std::string peer_ip = "127.0.0.1",
                       std::uint16_t peer_port = 40000);
  /// The same, writing into `output` (cleared first): a caller that keeps one string across
  /// exchanges (the fuzzer) allocates nothing for the answer once it has grown.
  void exchange_into(std::string_view input, std::string& output, std::string peer_ip = "127.0.0.1",
                     std::uint16_t peer_port = 40000);

 private:
  axon::impl& core_;
  net::io_context ioc_{1};
  strand_t strand_;  // every connection's: one at a time, so they can share it
  const connection_mode mode_;
  std::shared_ptr<connection> conn_;  // connection_mode::reused: the one connection
  memory_stream* stream_ = nullptr;   // its stream (owned by conn_)
};

}  // namespace bt::detail
