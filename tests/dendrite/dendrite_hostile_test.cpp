// The dendrite against hostile axons: a peer that sends a huge body, an endless chunked stream
// (fast or dripped), invalid JSON, a wrong Content-Length, garbage headers, or nothing at all.
// Each call ends with its documented status (docs/dendrite.md error table) within the call's
// deadline, and right after it the SAME dendrite gets 200 from an honest in-process axon: no
// fault poisons the connection pool, the strand or the nonce sequence.
// (dendrite_faults_test.cpp checks each message in detail; this file checks recovery.)
// Also: chunked metadata (trailers, chunk extensions, endless lines) cannot grow the process's
// memory past the head limit, on call() and call_stream() (asserted on the RSS peak), and 1xx
// interim responses are skipped, a bounded number of them.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/examples/word_stream.hpp>

#include "fault_server.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <optional>
#include <thread>

#include "support/collector.hpp"

#include <unistd.h>

using bt::examples::dummy;
using bt::examples::word_stream;
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
      auto [ec, n] =
          co_await net::async_write(s, net::buffer(piece), net::as_tuple(net::use_awaitable));
      (void)n;
      if (ec) co_return;  // the dendrite gave up and closed: what we want
      if (pause.count() > 0) co_await sleep_for(pause);
    }
    co_await sleep_for(hold);
  };
}

/// Resident set size of this process in bytes (/proc/self/statm), 0 when unreadable.
std::size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

/// Samples the RSS every 2 ms on its own thread while alive; peak() is the highest seen.
class rss_sampler {
 public:
  rss_sampler() : base_(rss_bytes()), peak_(base_) {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        const std::size_t r = rss_bytes();
        std::size_t p = peak_.load();
        while (r > p && !peak_.compare_exchange_weak(p, r)) {
        }
        std::this_thread::sleep_for(2ms);  // the sampling period
      }
    });
  }
  ~rss_sampler() { stop(); }
  void stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
    const std::size_t r = rss_bytes();  // one last sample
    std::size_t p = peak_.load();
    if (r > p) peak_ = r;
  }
  /// Peak growth over the RSS at construction, in MiB.
  double growth_mib() const {
    return static_cast<double>(peak_.load() - std::min(peak_.load(), base_)) / (1 << 20);
  }

 private:
  std::size_t base_;
  std::atomic<std::size_t> peak_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

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
       hostile(ok_head + "content-length: 3\r\n\r\n{\"dummy_input\": 7, \"dummy_output\": 14}"),
       422, "Failed to parse response: *"},
      {"garbage status line", hostile("\x16\x03\x01 not http at all\r\n\r\n"), 422,
       "Failed to parse response: invalid HTTP response: *"},
      {"garbage header lines", hostile("HTTP/1.1 200 OK\r\n:::\r\n\x01\x02: \x7f\r\n\r\n"), 422,
       "Failed to parse response: invalid HTTP response: *"},
      {"a head dripped a byte every 10 ms, never complete (under the size limit)",
       hostile("HTTP/1.1 200 OK\r\nx-slow: ", "a", 1000, 10ms), 408,
       "Request timeout after 0.5 seconds"},
      {"a chunk size beyond 64 bits",
       hostile(ok_head + "transfer-encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n{}\r\n"), 422,
       "Failed to parse response: *"},
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
  // Polled: a descriptor count has no notification to wait on.
  bt::test::poll_until([&] { return open_fds() <= fds0; }, 2s);
  CHECK(open_fds() == fds0);
  honest.stop();
}

namespace {

constexpr std::string_view bt_ok_headers =
    "bt_header_axon_status_code: 200\r\nbt_header_axon_status_message: Success\r\n"
    "bt_header_axon_process_time: 0.0042\r\n";

/// A chunked 200 head with the bt status headers, for call() (JSON) or call_stream().
std::string chunked_head(bool stream) {
  std::string h = "HTTP/1.1 200 OK\r\ncontent-type: ";
  h.append(stream ? "text/event-stream" : "application/json").append("\r\n");
  h.append(bt_ok_headers);
  h.append("transfer-encoding: chunked\r\n\r\n");
  return h;
}

struct memory_case {
  const char* name;
  std::string after_head;  ///< written once after the chunked head
  std::string piece;       ///< then written until `total` bytes or the dendrite closes
};

/// One hostile exchange against a fresh dendrite with the default limits (64 KiB head):
/// returns {status, message}, and the RSS peak growth in MiB through `growth`.
template <bool Stream>
std::pair<int, std::string> run_memory_case(const memory_case& c, double& growth, double& elapsed) {
  constexpr std::size_t total = 256u << 20;  // 256 MiB of hostile bytes at most
  const int repeat = static_cast<int>(total / c.piece.size());
  fault_server srv(hostile(chunked_head(Stream) + c.after_head, c.piece, repeat, 0ms, 3000ms));
  bt::dendrite d(alice());
  rss_sampler rss;
  const auto t0 = std::chrono::steady_clock::now();
  std::pair<int, std::string> out;
  if constexpr (Stream) {
    word_stream q;
    q.text = "x";
    collector got;
    const auto r = d.call_stream(srv.axon(bob().ss58_address()), q, 8.0, std::ref(got));
    out = {r.dendrite.status_code.value_or(-1), r.dendrite.status_message.value_or("")};
  } else {
    dummy q;
    q.dummy_input = 7;
    const auto r = d.call(srv.axon(bob().ss58_address()), q, 8.0);
    CHECK_FALSE(r.dummy_output.has_value());
    out = {r.dendrite.status_code.value_or(-1), r.dendrite.status_message.value_or("")};
  }
  elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rss.stop();
  growth = rss.growth_mib();
  CHECK(d.stats().idle_connections == 0);  // a refused answer's connection is never pooled
  return out;
}

}  // namespace

TEST_CASE("chunked trailers and chunk extensions are bounded by the head limit",
          "[dendrite][hostile][memory]") {
  const std::string trailer_field = "x-trailer: " + std::string(8192 - 13, 'a') + "\r\n";
  const std::vector<memory_case> cases = {
      {"256 MiB of trailer fields after the last chunk", "1\r\n{\r\n0\r\n", trailer_field},
      {"one endless trailer line", "1\r\n{\r\n0\r\nx-endless: ", std::string(8192, 'a')},
      {"one endless chunk-extension line", "1;", std::string(8192, 'a')},
      {"many small chunks, each with a 32 KiB extension",
       {},
       "1;" + std::string(32768, 'e') + "\r\n \r\n"},
  };
  for (const bool stream : {false, true}) {
    for (const auto& c : cases) {
      INFO((stream ? "call_stream: " : "call: ") << c.name);
      double growth = 0, elapsed = 0;
      const auto [status, message] = stream ? run_memory_case<true>(c, growth, elapsed)
                                            : run_memory_case<false>(c, growth, elapsed);
      INFO("got " << status << " " << message << " after " << elapsed << " s, RSS +" << growth
                  << " MiB");
      CHECK(status == 422);
      CHECK_THAT(message, Catch::StartsWith("Failed to parse response: response head"));
      CHECK(growth < 64.0);
      CHECK(elapsed < 8.0);  // refused before the deadline, not cut by it
    }
  }
}

TEST_CASE("1xx interim responses are skipped, a bounded number of them",
          "[dendrite][hostile][interim]") {
  const std::string json_200 =
      http_response(200, R"({"dummy_input":7,"dummy_output":14})", bt_ok_headers);
  const std::string early_hints =
      "HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n";
  bt::dendrite d(alice());

  SECTION("call: 100 Continue, 103 Early Hints, then the real 200 is merged") {
    fault_server srv(hostile("HTTP/1.1 100 Continue\r\n\r\n" + early_hints + json_200));
    dummy q;
    q.dummy_input = 7;
    const dummy r = d.call(srv.axon(bob().ss58_address()), q, 5.0);
    INFO(r.dendrite.status_message.value_or(""));
    CHECK(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 14);
    CHECK(r.axon.process_time == Approx(0.0042));
    // The connection is clean after the final answer: it is pooled and reused.
    const dummy again = d.call(srv.axon(bob().ss58_address()), q, 5.0);
    CHECK(d.stats().connections_reused == 1);
    (void)again;
  }
  SECTION("call_stream: 100 Continue, then the real streamed 200") {
    fault_server srv(hostile("HTTP/1.1 100 Continue\r\n\r\n" + chunked_head(true) +
                             "b\r\nalpha\nbeta\n\r\n0\r\n\r\n"));
    word_stream q;
    q.text = "alpha beta";
    collector got;
    const auto r = d.call_stream(srv.axon(bob().ss58_address()), q, 5.0, std::ref(got));
    INFO(r.dendrite.status_message.value_or(""));
    CHECK(r.dendrite.status_code == 200);
    CHECK(got.get() == std::vector<std::string>{"alpha", "beta"});
  }
  for (const bool stream : {false, true}) {
    SECTION(stream ? "call_stream: an endless sequence of 100 Continue is refused"
                   : "call: an endless sequence of 100 Continue is refused") {
      fault_server srv(hostile({}, "HTTP/1.1 100 Continue\r\n\r\n", 1 << 20));
      const auto t0 = std::chrono::steady_clock::now();
      std::optional<int> status;
      std::string message;
      if (stream) {
        word_stream q;
        q.text = "x";
        const auto r =
            d.call_stream(srv.axon(bob().ss58_address()), q, 5.0, [](std::string_view) {});
        status = r.dendrite.status_code;
        message = r.dendrite.status_message.value_or("");
      } else {
        dummy q;
        q.dummy_input = 7;
        const dummy r = d.call(srv.axon(bob().ss58_address()), q, 5.0);
        status = r.dendrite.status_code;
        message = r.dendrite.status_message.value_or("");
        CHECK_FALSE(r.dummy_output.has_value());
      }
      INFO(message);
      CHECK(status == 422);
      CHECK_THAT(message, Catch::StartsWith("Failed to parse response: more than"));
      CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
      CHECK(d.stats().idle_connections == 0);
    }
  }
  SECTION("101 Switching Protocols (never asked for) is refused") {
    fault_server srv(hostile("HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n" + json_200));
    dummy q;
    q.dummy_input = 7;
    const dummy r = d.call(srv.axon(bob().ss58_address()), q, 5.0);
    CHECK(r.dendrite.status_code == 422);
    CHECK_FALSE(r.dummy_output.has_value());
  }
}

TEST_CASE("trailers within the head limit are accepted, beyond it refused exactly",
          "[dendrite][hostile][trailers]") {
  bt::dendrite d(alice());
  const std::string body = R"({"dummy_input":7,"dummy_output":14})";
  const auto answer = [&](const std::string& trailers) {
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", body.size());
    return chunked_head(false) + size + body + "\r\n0\r\n" + trailers + "\r\n";
  };
  dummy q;
  q.dummy_input = 7;
  SECTION("a small trailer: merged as usual") {
    fault_server srv(hostile(answer("x-checksum: abc\r\n")));
    const dummy r = d.call(srv.axon(bob().ss58_address()), q, 5.0);
    INFO(r.dendrite.status_message.value_or(""));
    CHECK(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 14);
  }
  SECTION("80 KB of trailers: fits the read buffer (head limit + 64 KiB), not the head budget") {
    const std::string big =
        "x-a: " + std::string(40000, 'a') + "\r\nx-b: " + std::string(40000, 'b') + "\r\n";
    fault_server srv(hostile(answer(big)));
    const dummy r = d.call(srv.axon(bob().ss58_address()), q, 5.0);
    CHECK(r.dendrite.status_code == 422);
    CHECK(r.dendrite.status_message ==
          "Failed to parse response: response head, chunk extensions and trailers exceed 65536 "
          "bytes");
    CHECK_FALSE(r.dummy_output.has_value());
    CHECK(d.stats().idle_connections == 0);
  }
}

TEST_CASE("text from a hostile axon that is not UTF-8 arrives as U+FFFD, never as raw bytes",
          "[dendrite][hostile][utf8]") {
  // A string field must always hold valid UTF-8 (PROTOCOL 2.7): a raw byte would make the
  // result unprintable as JSON (nlohmann's dump() throws) and fail Python's str conversion.
  const std::string fffd = "\xEF\xBF\xBD";
  const auto dumps = [](const std::string& s) {
    try {
      (void)bt::json(s).dump();
      return true;
    } catch (const bt::json::exception&) {
      return false;
    }
  };
  REQUIRE_FALSE(dumps("ok\xFF"));  // the check below can fail
  bt::dendrite d(alice());
  dummy q;
  q.dummy_input = 7;

  SECTION("status message and uuid headers of a 200") {
    const std::string headers =
        "bt_header_axon_status_code: 200\r\n"
        "bt_header_axon_status_message: ok\xFF\xFE!\r\n"
        "bt_header_axon_uuid: u\xC3(\xE2\x82\r\n"
        "bt_header_axon_process_time: 0.5\r\n";
    fault_server srv(
        hostile(http_response(200, R"({"dummy_input":7,"dummy_output":14})", headers)));
    const dummy r = d.call(srv.axon(bob().ss58_address()), q, 5.0);
    CHECK(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 14);
    CHECK(r.axon.status_message == "ok" + fffd + fffd + "!");
    CHECK(r.dendrite.status_message == r.axon.status_message);
    CHECK(r.axon.uuid == "u" + fffd + "(" + fffd + fffd);
    CHECK(dumps(to_json_value(bt::descriptor_for(r), r).dump()));
  }
  SECTION("a refused content type quoted in the failure message") {
    fault_server srv(hostile(http_response(200, "{}", {}, "text/\xFFhtml")));
    const dummy r = d.call(srv.axon(bob().ss58_address()), q, 5.0);
    CHECK(r.dendrite.status_code == 422);
    CHECK(r.dendrite.status_message ==
          "Failed to parse response: HTTP 200 with content type 'text/" + fffd +
              "html', expected application/json");
  }
  SECTION("an Epistula answer's reason phrase and header values") {
    fault_server srv(
        hostile("HTTP/1.1 200 O\xFFK\r\ncontent-type: application/json\r\n"
                "x-note: a\xC0z\r\ncontent-length: 2\r\n\r\n{}"));
    const auto e = d.epistula_call(srv.axon(bob().ss58_address()), "POST", "/x", "{}", 5.0);
    REQUIRE_FALSE(e.error);
    CHECK(e.status == 200);
    CHECK(e.status_message == "O" + fffd + "K");
    bool seen = false;
    for (const auto& [k, v] : e.headers)
      if (k == "x-note") {
        seen = true;
        CHECK(v == "a" + fffd + "z");
      }
    CHECK(seen);
  }
}
