// The dendrite against hostile axons (issue 8 item 4): a peer that sends a huge body, an endless
// chunked stream (fast or dripped), invalid JSON, a wrong Content-Length, garbage headers, or
// nothing at all. Each call ends with its documented status (docs/dendrite.md error table) within
// the call's deadline, and right after it the SAME dendrite gets 200 from an honest in-process
// axon: no fault poisons the connection pool, the strand or the nonce sequence.
// (dendrite_faults_test.cpp checks each message in detail; this file checks recovery.)
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>

#include "fault_server.hpp"

#include <catch2/catch.hpp>

#include <thread>

using bt::examples::dummy;
using namespace bt::test;

namespace {

/// Reads the request, then writes `prefix` and, `repeat` times, `piece` (with `pause` between
/// writes), then keeps the connection open for `hold` without sending anything more.
behaviour hostile(std::string prefix, std::string piece = {}, int repeat = 0,
                  std::chrono::milliseconds pause = 0ms, std::chrono::milliseconds hold = 3000ms) {
  return [=](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    if (!co_await read_request(s, buf, log)) co_return;
    co_await write_text(s, prefix);
    for (int i = 0; i < repeat && s.is_open(); ++i) {
      auto [ec, n] = co_await net::async_write(s, net::buffer(piece),
                                              net::as_tuple(net::use_awaitable));
      (void)n;
      if (ec) co_return;  // the dendrite gave up and closed: what we want
      if (pause.count() > 0) co_await sleep_for(pause);
    }
    co_await sleep_for(hold);
  };
}

struct hostile_case {
  const char* name;
  behaviour server;
  int status;
  std::string message;  // exact, or a prefix when it ends with '*'
};

}  // namespace

TEST_CASE("a hostile axon gets its mapped status on time, and the dendrite stays usable",
          "[dendrite][hostile]") {
  bt::axon honest(bob(), bt::axon_options::loopback());
  honest.attach<dummy>([](dummy& s) { s.dummy_output = s.dummy_input * 2; });
  honest.start();

  const std::string ok_head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n";
  const std::string chunk_1k = "400\r\n" + std::string(1024, ' ') + "\r\n";
  const std::vector<hostile_case> cases = {
      {"a huge body by Content-Length (1 GB announced, 64 KiB limit)",
       hostile(ok_head + "content-length: 1000000000\r\n\r\n{", std::string(16384, ' '), 64), 422,
       "Failed to parse response: response body exceeds 65536 bytes"},
      {"an endless chunked stream at full speed",
       hostile(ok_head + "transfer-encoding: chunked\r\n\r\n", chunk_1k, 1 << 20), 422,
       "Failed to parse response: response body exceeds 65536 bytes"},
      {"an endless chunked stream, dripped (under the size limit)",
       hostile(ok_head + "transfer-encoding: chunked\r\n\r\n", "1\r\n \r\n", 1000, 10ms), 408,
       "Request timeout after 0.5 seconds"},
      {"invalid JSON", hostile(http_response(200, "{\"dummy_output\": 3,,}")), 422,
       "Failed to parse response: *"},
      {"Content-Length longer than the body, connection held open",
       hostile(ok_head + "content-length: 500\r\n\r\n{\"dummy_input\": 7}"), 408,
       "Request timeout after 0.5 seconds"},
      {"Content-Length longer than the body, then closed",
       hostile(ok_head + "content-length: 500\r\n\r\n{\"dummy_input\": 7}", {}, 0, 0ms, 0ms), 400,
       "Payload error: Response payload is not completed"},
      {"Content-Length shorter than the body",
       hostile(ok_head + "content-length: 3\r\n\r\n{\"dummy_input\": 7, \"dummy_output\": 14}"), 422,
       "Failed to parse response: *"},
      {"garbage status line", hostile("\x16\x03\x01 not http at all\r\n\r\n"), 422,
       "Failed to parse response: invalid HTTP response: *"},
      {"garbage header lines", hostile("HTTP/1.1 200 OK\r\n:::\r\n\x01\x02: \x7f\r\n\r\n"), 422,
       "Failed to parse response: invalid HTTP response: *"},
      {"a head dripped a byte every 10 ms, never complete (under the size limit)",
       hostile("HTTP/1.1 200 OK\r\nx-slow: ", "a", 1000, 10ms), 408,
       "Request timeout after 0.5 seconds"},
      {"a chunk size beyond 64 bits",
       hostile(ok_head + "transfer-encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n{}\r\n"),
       422, "Failed to parse response: *"},
      {"a 200 whose body is a JSON list (D28)", hostile(http_response(200, "[1, 2]")), 422,
       "Failed to parse response: *"},
      {"a 200 with an empty body (D28)", hostile(http_response(200, "")), 422,
       "Failed to parse response: *"},
      {"a text/plain 500 (a crashed Python error path, D23)",
       hostile(http_response(500, "Internal Server Error", {}, "text/plain")), 422,
       "Failed to parse response: HTTP 500 with content type 'text/plain', expected "
       "application/json"},
      {"an unparsable bt header in a 200",
       hostile(http_response(200, "{}", "bt_header_axon_status_code: two hundred\r\n")), 422,
       "Failed to parse response: *"},
      {"an endless header line (64 KiB head limit)",
       hostile("HTTP/1.1 200 OK\r\nx-endless: ", std::string(8192, 'a'), 1 << 20), 422,
       "Failed to parse response: response head exceeds 65536 bytes"},
      {"nothing: the request is read and the connection held silent", hostile({}), 408,
       "Request timeout after 0.5 seconds"},
      {"nothing: the request is read and the connection closed", hostile({}, {}, 0, 0ms, 0ms), 503,
       "Service disconnected: Server disconnected"},
  };

  bt::dendrite d(alice(), {.max_response_body_bytes = 64 << 10});
  {  // warm: the honest axon's pooled connection exists before counting descriptors
    dummy q;
    q.dummy_input = 1;
    REQUIRE(d.call(honest.info(), q, 5.0).dendrite.status_code == 200);
  }
  const std::size_t fds0 = open_fds();
  for (const auto& c : cases) {
    INFO("case: " << c.name);
    fault_server srv(c.server);
    dummy q;
    q.dummy_input = 7;
    const auto t0 = std::chrono::steady_clock::now();
    const dummy r = d.call(srv.axon(bob().ss58_address()), q, 0.5);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("got " << r.dendrite.status_code.value_or(-1) << " "
                << r.dendrite.status_message.value_or("") << " after " << elapsed << " s");
    CHECK(r.dendrite.status_code == c.status);
    REQUIRE(r.dendrite.status_message.has_value());
    if (c.message.back() == '*')
      CHECK_THAT(*r.dendrite.status_message,
                 Catch::StartsWith(c.message.substr(0, c.message.size() - 1)));
    else
      CHECK(*r.dendrite.status_message == c.message);
    CHECK(elapsed < 2.5);  // on time: bounded by the 0.5 s deadline, whatever the peer does
    CHECK_FALSE(r.dummy_output.has_value());  // nothing merged from a hostile answer

    // The same dendrite, right after: an honest axon answers 200.
    q.dummy_input = 21;
    const dummy ok = d.call(honest.info(), q, 5.0);
    CHECK(ok.dendrite.status_code == 200);
    CHECK(ok.dummy_output == 42);
  }
  // No socket of a hostile exchange is left behind (each fault server is gone by now).
  std::size_t fds = open_fds();
  for (int i = 0; i < 200 && fds > fds0; ++i) {
    std::this_thread::sleep_for(10ms);
    fds = open_fds();
  }
  CHECK(fds == fds0);
  honest.stop();
}
