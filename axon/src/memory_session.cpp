// memory_axon: see memory_session.hpp. The connection runs over
// beast::test::basic_stream<strand_t>, adapted by stream_adapter (byte_stream.hpp): a stream with
// no clock (deadlines ignored) whose cancel closes it.
#include "memory_session.hpp"

#include "axon_impl.hpp"
#include "byte_stream.hpp"
#include "session.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/beast/_experimental/test/stream.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>

namespace bt::detail {

namespace {
using memory_stream = beast::test::basic_stream<strand_t>;
}

memory_axon::memory_axon(axon& ax) : core_(axon_access::of(ax)) {
  if (core_.started.exchange(true))
    throw std::logic_error("bt::detail::memory_axon: the axon was started");
  core_.prepare_serving();
}

memory_axon::~memory_axon() {
  core_.pool->stop(std::chrono::seconds(5));
}

std::string memory_axon::exchange(std::string_view input, std::string peer_ip,
                                  std::uint16_t peer_port) {
  const strand_t strand = net::make_strand(ioc_);
  memory_stream server(strand);
  memory_stream client(strand);
  client.connect(server);
  server.append(input);   // everything the client sends, at once ...
  server.close_remote();  // ... then EOF after it
  {
    auto c = std::make_shared<connection>(
        core_, strand, std::make_unique<stream_adapter<memory_stream>>(std::move(server)),
        std::move(peer_ip), peer_port);
    net::co_spawn(strand, connection::run(std::move(c)), [](std::exception_ptr) {});
  }
  ioc_.restart();
  ioc_.run();  // until the session ended and nothing else is pending
  return std::string(client.str());
}

}  // namespace bt::detail
