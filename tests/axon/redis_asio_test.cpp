// The hiredis <-> Asio adapter (axon/src/redis_asio.hpp) against a server played by the test: a
// loopback socket it accepts and reads itself, so that it sees exactly when each command's bytes
// leave the client. The contract checked: before the connection is established a command waits
// for writability; once it is, the commands issued in one turn of the loop are written together
// by the handler posted to the strand (not inside the redisAsyncCommand call, which must not
// re-enter hiredis); replies reach their callbacks in order; a lost server runs the pending
// callback with no reply, then reports the context gone.
#include "redis_asio.hpp"

#include <catch2/catch.hpp>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace net = boost::asio;

namespace {

constexpr std::string_view ping_command = "*1\r\n$4\r\nPING\r\n";

/// What the server side has received and not yet consumed, without waiting.
std::string pending_bytes(net::ip::tcp::socket& s) {
  std::string out(4096, '\0');
  const ssize_t n = ::recv(s.native_handle(), out.data(), out.size(), MSG_PEEK | MSG_DONTWAIT);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

void consume(net::ip::tcp::socket& s, std::size_t n) {
  std::string sink(n, '\0');
  net::read(s, net::buffer(sink));
}

struct replies {
  std::vector<std::string> got;
  static void on_reply(redisAsyncContext*, void* r, void* priv) {
    auto* self = static_cast<replies*>(priv);
    const auto* reply = static_cast<redisReply*>(r);
    self->got.push_back(reply == nullptr ? "(gone)" : std::string(reply->str, reply->len));
  }
};

}  // namespace

TEST_CASE("redis adapter: an idle connection's command is written at once, the rest per turn",
          "[axon][redis]") {
  net::io_context ioc(1);
  net::ip::tcp::acceptor acceptor(ioc, {net::ip::make_address("127.0.0.1"), 0});
  const auto strand = net::make_strand(ioc);
  bool gone = false;

  redisAsyncContext* ac = redisAsyncConnect("127.0.0.1", acceptor.local_endpoint().port());
  REQUIRE(ac != nullptr);
  REQUIRE(ac->err == 0);
  REQUIRE(bt::detail::redis_asio_attach(ac, strand, [&] { gone = true; }));
  net::ip::tcp::socket server(ioc);
  acceptor.accept(server);  // the kernel finished the handshake; hiredis's connect is pending

  const auto run_until = [&](const auto& done) {
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!done() && std::chrono::steady_clock::now() < until) {
      ioc.restart();
      ioc.run_for(2ms);
    }
    return done();
  };
  replies r;

  // Before the connection is established, the command waits for writability (hiredis completes
  // its connect on that event), so it is not on the wire yet.
  REQUIRE(redisAsyncCommand(ac, &replies::on_reply, &r, "PING") == REDIS_OK);
  CHECK(pending_bytes(server).empty());
  REQUIRE(run_until([&] { return pending_bytes(server).size() == ping_command.size(); }));
  CHECK(pending_bytes(server) == ping_command);
  consume(server, ping_command.size());
  net::write(server, net::buffer(std::string_view("+PONG\r\n")));
  REQUIRE(run_until([&] { return r.got.size() == 1; }));
  CHECK(r.got[0] == "PONG");

  // Connected: three commands issued from one handler on the strand, as the replay store does.
  // None is on the wire when the handler ends; the posted flush writes the three at once.
  std::string inside_the_turn = "(not run)";
  net::post(strand, [&] {
    REQUIRE(redisAsyncCommand(ac, &replies::on_reply, &r, "PING") == REDIS_OK);
    REQUIRE(redisAsyncCommand(ac, &replies::on_reply, &r, "ECHO %s", "x") == REDIS_OK);
    REQUIRE(redisAsyncCommand(ac, &replies::on_reply, &r, "ECHO %s", "y") == REDIS_OK);
    inside_the_turn = pending_bytes(server);
  });
  const std::string batch =
      std::string(ping_command) + "*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n*2\r\n$4\r\nECHO\r\n$1\r\ny\r\n";
  REQUIRE(run_until([&] { return pending_bytes(server).size() == batch.size(); }));
  CHECK(inside_the_turn.empty());
  CHECK(pending_bytes(server) == batch);
  consume(server, batch.size());
  net::write(server, net::buffer(std::string_view("+PONG\r\n$1\r\nx\r\n$1\r\ny\r\n")));
  REQUIRE(run_until([&] { return r.got.size() == 4; }));
  CHECK(r.got == std::vector<std::string>{"PONG", "PONG", "x", "y"});

  // The server goes away with a command in flight: its callback runs with no reply, then the
  // adapter reports the context gone.
  net::post(strand, [&] { redisAsyncCommand(ac, &replies::on_reply, &r, "PING"); });
  REQUIRE(run_until([&] { return pending_bytes(server).size() == ping_command.size(); }));
  server.close();
  REQUIRE(run_until([&] { return gone; }));
  CHECK(r.got.size() == 5);
  CHECK(r.got.back() == "(gone)");
}
