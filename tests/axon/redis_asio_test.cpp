// The hiredis <-> Asio adapter (redis_store/src/redis_asio.hpp) against a server played by the
// test: a loopback socket it accepts and reads itself, so that it sees exactly when each command's
// bytes leave the client. The contract checked: before the connection is established a command
// waits for writability; once it is, the commands issued in one turn of the loop are written
// together by the handler posted to the strand (not inside the redisAsyncCommand call, which must
// not re-enter hiredis); replies reach their callbacks in order; a lost server runs the pending
// callback with no reply, then reports the context gone. And the reply bound: a huge bulk
// string or array from the server drops the connection with "reply exceeds N bytes" before
// more than the bound (plus one 16 KiB read) is held, also through the replay store.
#include "redis_asio.hpp"

#include <bt/redis_nonce_store.hpp>

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

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
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

namespace {

/// A Redis played by a thread: accepts one connection, reads one command, then writes `head`
/// and, up to `repeat` times, `piece` (blocking writes; it stops at the first failed write, i.e.
/// once the client dropped the connection). `written` counts the bytes the kernel took.
struct streaming_server {
  net::io_context ioc;
  net::ip::tcp::acceptor acceptor{ioc, {net::ip::make_address("127.0.0.1"), 0}};
  std::atomic<std::size_t> written{0};
  std::thread thread;

  streaming_server(std::string head, std::string piece, std::size_t repeat) {
    thread = std::thread([this, head = std::move(head), piece = std::move(piece), repeat] {
      boost::system::error_code ec;
      net::ip::tcp::socket s(ioc);
      acceptor.accept(s, ec);
      if (ec) return;
      char buf[256];
      s.read_some(net::buffer(buf), ec);  // the command (small: one read)
      if (ec) return;
      written += net::write(s, net::buffer(head), ec);
      for (std::size_t i = 0; i < repeat && !ec; ++i)
        written += net::write(s, net::buffer(piece), ec);
      // Keep the socket open until the client is gone, so the client sees no EOF first.
      while (!ec) s.read_some(net::buffer(buf), ec);
    });
  }
  ~streaming_server() {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    thread.join();
  }
  std::uint16_t port() const { return acceptor.local_endpoint().port(); }
};

/// One client context on its own loop, attached with `max_reply` and PING'ed; runs the loop
/// until the context is gone (or 20 s passed). What on_gone saw is kept.
struct bounded_client {
  net::io_context ioc{1};
  redisAsyncContext* ac = nullptr;
  bool gone = false;
  std::string gone_reason;
  std::size_t reader_bytes_at_gone = 0;
  std::vector<std::string> got;

  static void on_reply(redisAsyncContext*, void* r, void* priv) {
    auto* self = static_cast<bounded_client*>(priv);
    const auto* reply = static_cast<redisReply*>(r);
    if (reply == nullptr)
      self->got.emplace_back("(gone)");
    else if (reply->type == REDIS_REPLY_ARRAY)
      self->got.push_back("array of " + std::to_string(reply->elements));
    else
      self->got.emplace_back(reply->str, reply->len);
  }

  bool run(std::uint16_t port, std::size_t max_reply, int commands = 1) {
    const auto strand = net::make_strand(ioc);
    ac = redisAsyncConnect("127.0.0.1", port);
    if (ac == nullptr || ac->err != 0) return false;
    const bool attached = bt::detail::redis_asio_attach(
        ac, strand,
        [this] {
          gone = true;
          if (ac->err != 0 && ac->errstr != nullptr) gone_reason = ac->errstr;
          if (ac->c.reader != nullptr) reader_bytes_at_gone = ac->c.reader->len;
        },
        max_reply);
    if (!attached) return false;
    for (int i = 0; i < commands; ++i) redisAsyncCommand(ac, &on_reply, this, "PING");
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (!gone && std::chrono::steady_clock::now() < until &&
           got.size() < static_cast<std::size_t>(commands)) {
      ioc.restart();
      ioc.run_for(5ms);
    }
    return true;
  }
  ~bounded_client() {
    if (!gone && ac != nullptr) redisAsyncFree(ac);
    ioc.restart();
    ioc.poll();
  }
};

}  // namespace

TEST_CASE("redis adapter: a huge bulk reply is refused at the bound, before it is buffered",
          "[axon][redis][hostile]") {
  // 300 MB announced and streamed in 64 KiB pieces (at most 64 MiB, the test's own bound).
  streaming_server srv("$300000000\r\n", std::string(64 * 1024, 'x'), 1024);
  bounded_client c;
  REQUIRE(c.run(srv.port(), 64 * 1024));
  REQUIRE(c.gone);
  CHECK(c.gone_reason == "reply exceeds 65536 bytes");
  CHECK(c.got == std::vector<std::string>{"(gone)"});
  // The reader held at most the bound plus one read (hiredis reads 16 KiB at a time).
  CHECK(c.reader_bytes_at_gone <= 64 * 1024 + 16 * 1024);
  CHECK(c.reader_bytes_at_gone > 0);
}

TEST_CASE("redis adapter: a huge array is refused when its length is read",
          "[axon][redis][hostile]") {
  SECTION("announced length") {
    streaming_server srv("*100000000\r\n", ":1\r\n", 100000);
    bounded_client c;
    REQUIRE(c.run(srv.port(), 64 * 1024));
    REQUIRE(c.gone);
    CHECK(c.gone_reason == "reply exceeds 65536 bytes");
    CHECK(c.got == std::vector<std::string>{"(gone)"});
  }
  SECTION("nested arrays whose strings together pass the bound") {
    const std::string part = "$40000\r\n" + std::string(40000, 'y') + "\r\n";
    streaming_server srv("*2\r\n*1\r\n" + part + "*1\r\n" + part, {}, 0);
    bounded_client c;
    REQUIRE(c.run(srv.port(), 64 * 1024));
    REQUIRE(c.gone);
    CHECK(c.gone_reason == "reply exceeds 65536 bytes");
  }
}

TEST_CASE("redis adapter: replies under the bound pass, however many", "[axon][redis]") {
  // 40 replies of 20 KB each (800 KB in all, each under the 64 KiB bound), then a nested array
  // with its elements (every reader task carries the adapter).
  std::string answers;
  for (int i = 0; i < 40; ++i) answers += "$20000\r\n" + std::string(20000, 'a' + i % 26) + "\r\n";
  answers += "*3\r\n$3\r\nabc\r\n:7\r\n*2\r\n+OK\r\n$-1\r\n";
  streaming_server srv(answers, {}, 0);
  bounded_client c;
  REQUIRE(c.run(srv.port(), 64 * 1024, 41));
  CHECK_FALSE(c.gone);
  REQUIRE(c.got.size() == 41);
  CHECK(c.got[0] == std::string(20000, 'a'));
  CHECK(c.got[39] == std::string(20000, 'a' + 39 % 26));
  CHECK(c.got[40] == "array of 3");
}

TEST_CASE("redis store: a server streaming a huge reply is dropped with the reason, fail closed",
          "[axon][redis][hostile]") {
  // The store pipelines SELECT and SCRIPT LOAD on connecting: "+OK", then 300 MB announced for
  // the script's SHA. The connection is dropped at the configured bound and the store says why.
  streaming_server srv("+OK\r\n$300000000\r\n", std::string(64 * 1024, 'x'), 1024);
  bt::redis_nonce_store::options o;
  o.url = "redis://127.0.0.1:" + std::to_string(srv.port()) + "/0";
  o.connections = 1;
  o.max_reply_bytes = 4096;
  auto store = std::make_shared<bt::redis_nonce_store>(o);
  net::io_context ioc(1);
  net::io_context* loops[] = {&ioc};
  store->attach(loops);
  const auto until = std::chrono::steady_clock::now() + 20s;
  std::string reason;
  while (reason.find("exceeds") == std::string::npos && std::chrono::steady_clock::now() < until) {
    ioc.restart();
    ioc.run_for(5ms);
    reason = store->unavailable_reason();
  }
  INFO(reason);
  CHECK(reason.ends_with("connection lost: reply exceeds 4096 bytes"));
  // Fail closed: a request meanwhile is answered unavailable (by the loop, so run it).
  std::optional<bt::nonce_verdict> verdict;
  const auto complete = [](void* arg, bt::nonce_verdict v) noexcept {
    *static_cast<std::optional<bt::nonce_verdict>*>(arg) = v;
  };
  store->async_record("hk", "u", 1, 1, 2, bt::nonce_completion{complete, &verdict});
  for (int i = 0; i < 2000 && !verdict; ++i) {
    ioc.restart();
    ioc.run_for(5ms);
  }
  CHECK(verdict == bt::nonce_verdict::unavailable);
  store->detach(loops);
  ioc.restart();
  ioc.run_for(10s);
  CHECK(ioc.stopped());
}
