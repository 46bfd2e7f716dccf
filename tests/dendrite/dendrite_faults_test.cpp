// The dendrite against misbehaving peers on loopback: every fault ends in its documented status
// and message (docs/dendrite.md), on time, without exceptions and without leaking descriptors.
// Elapsed-time checks are generous correctness bounds (the deadline is enforced at all), not
// performance assertions.
#include <bt/dendrite.hpp>

#include <bt/examples/dummy.hpp>
#include <bt/header_codec.hpp>
#include <bt/json_body.hpp>

#include "fault_server.hpp"
#include "support/example_queries.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <future>

using bt::examples::dummy;
using bt::test::dummy_query;
using namespace bt::test;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A 200 answer as a Python axon would give (5.11): the request body echoed with outputs and
/// axon status, and the bt status headers.
std::string ok_response_for(const http::request<http::string_body>& req, std::int64_t output,
                            bool keep_alive = true) {
  dummy d;
  REQUIRE_FALSE(bt::read_json_body(bt::descriptor_of<dummy>(), req.body(), d));
  d.dummy_output = output;
  d.axon.status_code = 200;
  d.axon.status_message = "Success";
  d.axon.process_time = 0.000123;
  std::string body;
  bt::write_json_body(bt::descriptor_of<dummy>(), d, body, bt::json_style::compact);
  std::string extra =
      "bt_header_axon_status_code: 200\r\nbt_header_axon_status_message: Success\r\n"
      "bt_header_axon_process_time: 0.000123\r\n";
  if (!keep_alive) extra += "connection: close\r\n";
  return http_response(200, body, extra);
}

/// Echo server: answers every request on a connection with dummy_output = 2 * input.
behaviour echo_doubler() {
  return [](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (;;) {
      if (!co_await read_request(s, buf, log)) co_return;
      http::request<http::string_body> req;
      {
        std::lock_guard lk(log.mu);
        req = log.requests.back();
      }
      dummy d;
      bt::read_json_body(bt::descriptor_of<dummy>(), req.body(), d);
      co_await write_text(s, ok_response_for(req, d.dummy_input * 2));
    }
  };
}

}  // namespace

TEST_CASE("connection refused gives 503 Service unavailable, quickly", "[dendrite][faults]") {
  const auto fds_before = open_fds();
  {
    bt::dendrite d(alice());
    bt::axon_info a;
    a.ip = "127.0.0.1";
    a.port = closed_port();
    a.hotkey = bob().ss58_address();
    const auto t0 = std::chrono::steady_clock::now();
    auto r = d.call(a, dummy_query(), 10.0);
    CHECK(seconds_since(t0) < 5.0);  // refused, not timed out
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message ==
          "Service unavailable at 127.0.0.1:" + std::to_string(a.port) + "/Dummy");
    CHECK_FALSE(r.axon.status_code.has_value());
    CHECK_FALSE(r.dendrite.process_time.has_value());
    // The request identity is still recorded, as Python's preprocess does before sending.
    CHECK(r.axon.hotkey == bob().ss58_address());
    CHECK(r.dendrite.hotkey == alice().ss58_address());
    CHECK(r.timeout == 10.0);
    CHECK(r.dummy_input == 7);
  }
  CHECK(open_fds() == fds_before);
}

TEST_CASE("a target hotkey that is not an SS58 address fails at once, before any connection",
          "[dendrite][faults]") {
  fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    co_await read_request(s, buf, log);
  });
  bt::dendrite d(alice());
  std::string bad_checksum = bob().ss58_address();
  bad_checksum.back() = bad_checksum.back() == 'a' ? 'b' : 'a';
  for (const std::string& hotkey : {std::string("hello"), std::string(), bad_checksum}) {
    INFO("hotkey '" << hotkey << "'");
    auto r = d.call(srv.axon(hotkey), dummy_query(), 5.0);
    CHECK(r.dendrite.status_code == 422);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Failed to parse response: invalid axon hotkey '" + hotkey +
                                 "' (an SS58 address is required: "));
    CHECK_FALSE(r.axon.status_code.has_value());
  }
  CHECK(d.stats().connections_opened == 0);
  CHECK(srv.log().count() == 0);
}

TEST_CASE("a server that accepts and never answers gives 408 at the deadline",
          "[dendrite][faults]") {
  fault_server srv(silent_after_request(60s));
  bt::dendrite d(alice());
  const auto t0 = std::chrono::steady_clock::now();
  auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 0.5);
  const double el = seconds_since(t0);
  CHECK(r.dendrite.status_code == 408);
  CHECK(r.dendrite.status_message == "Request timeout after 0.5 seconds");
  CHECK(r.is_timeout());
  CHECK(el >= 0.45);
  CHECK(el < 1.5);
  CHECK(srv.log().count() == 1);
}

TEST_CASE("a listener that never accepts gives 408 at the deadline", "[dendrite][faults]") {
  net::io_context ioc;
  tcp::acceptor acc(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));  // never accepts
  bt::dendrite d(alice());
  bt::axon_info a;
  a.ip = "127.0.0.1";
  a.port = acc.local_endpoint().port();
  a.hotkey = bob().ss58_address();
  const auto t0 = std::chrono::steady_clock::now();
  auto r = d.call(a, dummy_query(), 0.3);
  CHECK(r.dendrite.status_code == 408);
  CHECK(r.dendrite.status_message == "Request timeout after 0.3 seconds");
  CHECK(seconds_since(t0) < 1.3);
}

TEST_CASE("drip-feeding cannot extend the deadline", "[dendrite][faults]") {
  SECTION("dripping the head") {
    fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      co_await read_request(s, buf, log);
      co_await write_text(s, "HTTP/1.1 200 OK\r\n");
      for (int i = 0; i < 1000; ++i) {
        co_await write_text(s, "x");  // a header name that never ends
        co_await sleep_for(20ms);
      }
    });
    bt::dendrite d(alice());
    const auto t0 = std::chrono::steady_clock::now();
    auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 0.5);
    CHECK(r.dendrite.status_code == 408);
    CHECK(seconds_since(t0) < 1.5);
  }
  SECTION("dripping the body") {
    fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      co_await read_request(s, buf, log);
      co_await write_text(s,
                          "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                          "content-length: 100000\r\n\r\n{");
      for (int i = 0; i < 1000; ++i) {
        co_await write_text(s, " ");
        co_await sleep_for(20ms);
      }
    });
    bt::dendrite d(alice());
    const auto t0 = std::chrono::steady_clock::now();
    auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 0.5);
    CHECK(r.dendrite.status_code == 408);
    CHECK(r.dendrite.status_message == "Request timeout after 0.5 seconds");
    CHECK(seconds_since(t0) < 1.5);
  }
}

TEST_CASE("a peer closing mid-response", "[dendrite][faults]") {
  SECTION("before any response byte: 503 Service disconnected") {
    fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      co_await read_request(s, buf, log);
      s.close();
    });
    bt::dendrite d(alice());
    auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 5.0);
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message == "Service disconnected: Server disconnected");
  }
  SECTION("inside the head: 503 Service disconnected") {
    fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      co_await read_request(s, buf, log);
      co_await write_text(s, "HTTP/1.1 200 OK\r\ncontent-ty");
      s.close();
    });
    bt::dendrite d(alice());
    auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 5.0);
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message == "Service disconnected: Server disconnected");
  }
  SECTION("inside the body: 400 Payload error") {
    fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      co_await read_request(s, buf, log);
      co_await write_text(s,
                          "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                          "content-length: 100\r\n\r\n{\"name\": \"Du");
      s.close();
    });
    bt::dendrite d(alice());
    auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 5.0);
    CHECK(r.dendrite.status_code == 400);
    CHECK(r.dendrite.status_message == "Payload error: Response payload is not completed");
  }
}

TEST_CASE("oversized, malformed and mis-framed responses give 422", "[dendrite][faults]") {
  struct fault {
    const char* name;
    std::string response;
    std::string message;  // expected status message (prefix match when it ends with '*')
  };
  const std::string big(4096, ' ');
  const std::vector<fault> faults = {
      {"oversized body (content-length)", http_response(200, "{" + big + "}"),
       "Failed to parse response: response body exceeds 1024 bytes"},
      {"oversized body (chunked)",
       "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
       "1000\r\n" +
           std::string(4096, ' ') + "\r\n0\r\n\r\n",
       "Failed to parse response: response body exceeds 1024 bytes"},
      {"oversized head", "HTTP/1.1 200 OK\r\nx-big: " + std::string(70000, 'a') + "\r\n\r\n",
       "Failed to parse response: response head exceeds 65536 bytes"},
      {"malformed JSON", http_response(200, "{not json"), "Failed to parse response: *"},
      {"JSON that is not an object", http_response(200, "[1, 2]"), "Failed to parse response: *"},
      {"empty body", http_response(200, ""), "Failed to parse response: *"},
      {"missing required field", http_response(200, R"({"name":"Dummy","dummy_output":3})"),
       "Failed to parse response: *"},
      {"wrong field type", http_response(200, R"({"dummy_input":1,"dummy_output":"three"})"),
       "Failed to parse response: *"},
      {"non-JSON content type",
       http_response(200, R"({"dummy_input":1,"dummy_output":3})", {}, "text/plain"),
       "Failed to parse response: HTTP 200 with content type 'text/plain', expected "
       "application/json"},
      {"plain-text 500", http_response(500, "Internal Server Error", {}, "text/plain"),
       "Failed to parse response: HTTP 500 with content type 'text/plain', expected "
       "application/json"},
      {"content-length shorter than the body",
       "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n"
       R"({"dummy_input":1,"dummy_output":3})",
       "Failed to parse response: *"},
      {"garbage status line", "SMTP ready\r\n\r\n",
       "Failed to parse response: invalid HTTP response: *"},
      {"garbage header line", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
       "Failed to parse response: invalid HTTP response: *"},
      {"bad content-length", "HTTP/1.1 200 OK\r\ncontent-length: abc\r\n\r\n",
       "Failed to parse response: invalid HTTP response: *"},
      {"unparsable bt header",
       http_response(200, R"({"dummy_input":1,"dummy_output":3})",
                     "bt_header_axon_status_code: two hundred\r\n"),
       "Failed to parse response: *"},
      {"non-string error message", http_response(403, R"({"message": 5})"),
       "Failed to parse response: *"},
  };
  for (const auto& f : faults) {
    DYNAMIC_SECTION(f.name) {
      const std::string resp = f.response;
      fault_server srv([resp](tcp::socket& s, server_log& log) -> net::awaitable<void> {
        boost::beast::flat_buffer buf;
        co_await read_request(s, buf, log);
        co_await write_text(s, resp);
        co_await sleep_for(2s);  // keep the connection open: the verdict must not need EOF
      });
      bt::dendrite d(alice(), {.max_response_body_bytes = 1024});
      const auto t0 = std::chrono::steady_clock::now();
      auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 5.0);
      CHECK(seconds_since(t0) < 1.9);
      CHECK(r.dendrite.status_code == 422);
      REQUIRE(r.dendrite.status_message.has_value());
      if (f.message.back() == '*')
        CHECK_THAT(*r.dendrite.status_message,
                   Catch::StartsWith(f.message.substr(0, f.message.size() - 1)));
      else
        CHECK(*r.dendrite.status_message == f.message);
      CHECK_FALSE(r.dendrite.process_time.has_value());
      CHECK_FALSE(r.dummy_output.has_value());  // nothing merged from a rejected response
      CHECK(d.stats().idle_connections == 0);   // a broken exchange is never pooled
    }
  }
}

TEST_CASE("an invalid axon address gives 422 without any connection", "[dendrite][faults]") {
  bt::dendrite d(alice());
  bt::axon_info a;
  a.ip = "miner.example.com";  // names are never resolved
  a.port = 8091;
  a.hotkey = bob().ss58_address();
  auto r = d.call(a, dummy_query(), 1.0);
  CHECK(r.dendrite.status_code == 422);
  CHECK_THAT(*r.dendrite.status_message,
             Catch::StartsWith("Failed to parse response: invalid axon address"));
  CHECK(d.stats().connections_opened == 0);
}

TEST_CASE("non-200 answers take the status and message", "[dendrite][responses]") {
  const std::string resp = http_response(
      403, R"({"message":"Forbidden. Key is blacklisted: not registered."})",
      "bt_header_axon_status_code: 403\r\n"
      "bt_header_axon_status_message: Forbidden. Key is blacklisted: not registered.\r\n"
      "bt_header_axon_process_time: 0.0021\r\nbt_header_axon_nonce: 1700000000000000001\r\n"
      "bt_header_axon_uuid: 11111111-2222-1333-8444-555555555555\r\n"
      "bt_header_axon_hotkey: 5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY\r\n"
      "bt_header_dendrite_ip: 10.9.8.7\r\n");
  fault_server srv([resp](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    co_await read_request(s, buf, log);
    co_await write_text(s, resp);
  });
  bt::dendrite d(alice());
  auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(), 5.0);
  CHECK(r.dendrite.status_code == 403);
  CHECK(r.dendrite.status_message == "Forbidden. Key is blacklisted: not registered.");
  CHECK(r.is_blacklist());
  CHECK(r.axon.status_code == 403);
  CHECK(r.axon.process_time == 0.0021);
  CHECK(r.axon.nonce == 1700000000000000001);
  CHECK(r.axon.uuid == "11111111-2222-1333-8444-555555555555");
  // D6: the target identity and our own identity are not rewritten by the miner.
  CHECK(r.axon.hotkey == bob().ss58_address());
  CHECK(r.axon.ip == "127.0.0.1");
  CHECK(r.dendrite.ip == "127.0.0.1");
  CHECK(r.dendrite.process_time.has_value());
  CHECK_FALSE(r.dummy_output.has_value());

  SECTION("a FastAPI detail body gives no message") {
    const std::string resp2 = http_response(404, R"({"detail":"Not Found"})");
    fault_server srv2([resp2](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      co_await read_request(s, buf, log);
      co_await write_text(s, resp2);
    });
    auto r2 = d.call(srv2.axon(bob().ss58_address()), dummy_query(), 5.0);
    CHECK(r2.dendrite.status_code == 404);
    CHECK_FALSE(r2.dendrite.status_message.has_value());
  }
}

TEST_CASE("200 merges only outputs and status (D6)", "[dendrite][responses]") {
  fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    co_await read_request(s, buf, log);
    // A miner that rewrites inputs, timeout and identities in its answer.
    const std::string body =
        R"({"name":"Dummy","timeout":99.0,"total_size":1,"header_size":2,)"
        R"("dendrite":{"hotkey":"5FakeDendrite","ip":"6.6.6.6","nonce":1},)"
        R"("axon":{"status_code":200,"status_message":"Success","process_time":0.25,)"
        R"("hotkey":"5FakeAxon","ip":"6.6.6.6","port":1},"computed_body_hash":"",)"
        R"("dummy_input":1000,"dummy_output":42})";
    co_await write_text(s, http_response(200, body));
  });
  bt::dendrite d(alice());
  auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(7), 5.0);
  CHECK(r.dendrite.status_code == 200);
  CHECK(r.dendrite.status_message == "Success");
  CHECK(r.is_success());
  CHECK(r.dummy_output == 42);
  CHECK(r.dummy_input == 7);
  CHECK(r.timeout == 5.0);
  CHECK(r.axon.hotkey == bob().ss58_address());
  CHECK(r.axon.ip == "127.0.0.1");
  CHECK(r.axon.port == srv.port());
  CHECK(r.axon.process_time == 0.25);
  CHECK(r.dendrite.hotkey == alice().ss58_address());
  CHECK(r.dendrite.ip == "127.0.0.1");
  REQUIRE(r.dendrite.process_time.has_value());
  CHECK(*r.dendrite.process_time > 0.0);
}

TEST_CASE("a 200 without any axon status is a failure, as in Python (6.5)",
          "[dendrite][responses]") {
  fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    co_await read_request(s, buf, log);
    co_await write_text(s, http_response(200, R"({"dummy_input":7,"dummy_output":14})"));
  });
  bt::dendrite d(alice());
  auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(7), 5.0);
  CHECK_FALSE(r.dendrite.status_code.has_value());
  CHECK(r.is_failure());
  CHECK(r.dummy_output == 14);
}

TEST_CASE("keep-alive connections are reused, and a stale one is retried once",
          "[dendrite][pool]") {
  SECTION("reuse") {
    fault_server srv(echo_doubler());
    bt::dendrite d(alice());
    for (int i = 1; i <= 5; ++i) {
      auto r = d.call(srv.axon(bob().ss58_address()), dummy_query(i), 5.0);
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 2 * i);
    }
    CHECK(srv.log().connections == 1);
    const auto st = d.stats();
    CHECK(st.connections_opened == 1);
    CHECK(st.connections_reused == 4);
    CHECK(st.idle_connections == 1);
    CHECK(st.calls == 5);
    // Nonces strictly increase within one dendrite; the uuid is constant.
    std::int64_t last = 0;
    std::lock_guard lk(srv.log().mu);
    for (auto& req : srv.log().requests) {
      std::int64_t n = 0;
      REQUIRE(bt::parse_python_int(std::string(req["bt_header_dendrite_nonce"]), n));
      CHECK(n > last);
      last = n;
      CHECK(std::string(req["bt_header_dendrite_uuid"]) == d.uuid());
    }
  }
  SECTION("a server that drops the kept connection after reading the next request") {
    std::atomic<int> conn_no{0};
    fault_server srv([&conn_no](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      const int me = ++conn_no;
      boost::beast::flat_buffer buf;
      for (int n = 0;; ++n) {
        if (!co_await read_request(s, buf, log)) co_return;
        if (me == 1 && n == 1) {  // the reused connection dies before answering
          s.close();
          co_return;
        }
        http::request<http::string_body> req;
        {
          std::lock_guard lk(log.mu);
          req = log.requests.back();
        }
        co_await write_text(s, ok_response_for(req, 1));
      }
    });
    bt::dendrite d(alice());
    auto a = srv.axon(bob().ss58_address());
    CHECK(d.call(a, dummy_query(), 5.0).dendrite.status_code == 200);
    auto r = d.call(a, dummy_query(), 5.0);
    CHECK(r.dendrite.status_code == 200);
    const auto st = d.stats();
    CHECK(st.retries == 1);
    CHECK(st.connections_opened == 2);
    // The retry carries a fresh nonce and signature.
    std::lock_guard lk(srv.log().mu);
    REQUIRE(srv.log().requests.size() == 3);
    CHECK(srv.log().requests[1]["bt_header_dendrite_nonce"] !=
          srv.log().requests[2]["bt_header_dendrite_nonce"]);
    CHECK(srv.log().requests[1]["bt_header_dendrite_signature"] !=
          srv.log().requests[2]["bt_header_dendrite_signature"]);
  }
  SECTION("a connection the server closed while idle is not reused") {
    fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      http::request<http::string_body> req;
      {
        std::lock_guard lk(log.mu);
        req = log.requests.back();
      }
      co_await write_text(s, ok_response_for(req, 1));  // keep-alive, then close while idle
      s.close();
    });
    bt::dendrite d(alice());
    auto a = srv.axon(bob().ss58_address());
    // Idle long enough to be checked before reuse: the FIN is seen, no request is lost.
    CHECK(d.call(a, dummy_query(), 5.0).dendrite.status_code == 200);
    std::this_thread::sleep_for(700ms);  // idle age is time: the subject of this section
    CHECK(d.call(a, dummy_query(), 5.0).dendrite.status_code == 200);
    CHECK(d.stats().connections_opened == 2);
    CHECK(d.stats().retries == 0);
    // Recently used connections are reused without the check; the retry covers the race.
    std::this_thread::sleep_for(50ms);
    CHECK(d.call(a, dummy_query(), 5.0).dendrite.status_code == 200);
    CHECK(d.stats().connections_opened == 3);
    CHECK(d.stats().retries == 1);
  }
  SECTION("Connection: close is honoured") {
    fault_server srv([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      http::request<http::string_body> req;
      {
        std::lock_guard lk(log.mu);
        req = log.requests.back();
      }
      co_await write_text(s, ok_response_for(req, 1, false));
      co_await sleep_for(1s);
    });
    bt::dendrite d(alice());
    CHECK(d.call(srv.axon(bob().ss58_address()), dummy_query(), 5.0).dendrite.status_code == 200);
    CHECK(d.stats().idle_connections == 0);
  }
}

TEST_CASE("no descriptor leaks across faults and pooling", "[dendrite][pool]") {
  fault_server ok(echo_doubler());
  fault_server silent(silent_after_request());
  const auto before = open_fds();
  {
    bt::dendrite d(alice());
    for (int i = 0; i < 3; ++i) {
      d.call(ok.axon(bob().ss58_address()), dummy_query(), 5.0);
      d.call(silent.axon(bob().ss58_address()), dummy_query(), 0.1);
      bt::axon_info refused;
      refused.ip = "127.0.0.1";
      refused.port = closed_port();
      refused.hotkey = bob().ss58_address();  // else refused before connecting (not SS58)
      d.call(refused, dummy_query(), 1.0);
    }
    CHECK(d.stats().idle_connections == 1);
    d.close_idle();
    CHECK(d.stats().idle_connections == 0);
  }
  // Our own descriptors are back; the servers' accepted sockets may still be open, so count
  // after they close too (polled: a descriptor count has no notification to wait on).
  bt::test::poll_until([&] { return open_fds() <= before + 4; }, 5s);
  CHECK(open_fds() <= before + 4);  // at most the silent server's accepted sockets (3) remain
}

TEST_CASE("cancellation and destruction complete the call with 503", "[dendrite][cancel]") {
  fault_server silent(silent_after_request());
  SECTION("through the handler's cancellation slot") {
    bt::dendrite d(alice());
    net::cancellation_signal sig;
    std::promise<dummy> p;
    auto f = p.get_future();
    d.async_call(
        silent.axon(bob().ss58_address()), dummy_query(), 10.0,
        net::bind_cancellation_slot(sig.slot(), [&p](dummy r) { p.set_value(std::move(r)); }));
    REQUIRE(silent.log().wait_count(1));
    sig.emit(net::cancellation_type::terminal);
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    auto r = f.get();
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message == "Request cancelled: cancelled by the caller");
  }
  SECTION("by destroying the dendrite") {
    std::promise<dummy> p;
    auto f = p.get_future();
    {
      bt::dendrite d(alice());
      d.async_call(silent.axon(bob().ss58_address()), dummy_query(), 10.0,
                   [&p](dummy r) { p.set_value(std::move(r)); });
      REQUIRE(silent.log().wait_count(1));
    }
    REQUIRE(f.wait_for(0s) == std::future_status::ready);
    auto r = f.get();
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message == "Request cancelled: dendrite stopped");
  }
}

TEST_CASE("the calls in flight are counted, and destroying the dendrite ends each of them",
          "[dendrite][cancel]") {
  // One answered call among three silent ones: the dendrite's list of running calls loses a
  // call from its middle, then shutdown must still find the others.
  fault_server silent(silent_after_request());
  fault_server answering(echo_doubler());
  constexpr int silent_calls = 3;
  std::vector<std::promise<dummy>> ps(silent_calls + 1);
  std::vector<std::future<dummy>> fs;
  for (auto& p : ps) fs.push_back(p.get_future());
  {
    bt::dendrite d(alice());
    d.async_call(silent.axon(bob().ss58_address()), dummy_query(), 10.0,
                 [&p = ps[0]](dummy r) { p.set_value(std::move(r)); });
    REQUIRE(silent.log().wait_count(1));
    d.async_call(answering.axon(bob().ss58_address()), dummy_query(), 10.0,
                 [&p = ps[1]](dummy r) { p.set_value(std::move(r)); });
    for (int i = 2; i <= silent_calls; ++i)
      d.async_call(silent.axon(bob().ss58_address()), dummy_query(), 10.0,
                   [&p = ps[i]](dummy r) { p.set_value(std::move(r)); });
    REQUIRE(fs[1].wait_for(5s) == std::future_status::ready);
    CHECK(fs[1].get().dendrite.status_code == 200);
    REQUIRE(silent.log().wait_count(silent_calls));
    CHECK(d.stats().in_flight == silent_calls);
  }
  for (int i : {0, 2, 3}) {
    REQUIRE(fs[i].wait_for(0s) == std::future_status::ready);
    const dummy r = fs[i].get();
    CHECK(r.dendrite.status_code == 503);
    CHECK(r.dendrite.status_message == "Request cancelled: dendrite stopped");
  }
}
