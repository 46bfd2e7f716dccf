// dendrite::call_stream (PROTOCOL 7) against raw streaming peers on loopback: items in order
// whatever the byte splits, the final synapse (parser fields + header merge), the total deadline
// cutting a slow drip, hostile streams (endless, one endless item) bounded by the body limit,
// truncation, non-200 answers, parser exceptions, cancellation, many concurrent streams and a
// coroutine caller. Elapsed-time checks are generous correctness bounds (the deadline is
// enforced at all), not performance assertions.
#include <bt/dendrite.hpp>

#include <bt/dynamic_synapse.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/json_body.hpp>

#include "fault_server.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <mutex>

#include "support/collector.hpp"
#include "support/example_queries.hpp"

using bt::examples::word_stream;
using namespace bt::test;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr std::string_view ok_bt_headers =
    "bt_header_axon_status_code: 200\r\nbt_header_axon_status_message: Success\r\n"
    "bt_header_axon_process_time: 0.0042\r\n";

/// The head of a Python axon's streaming answer (PROTOCOL 7): 200, text/event-stream first,
/// the bt headers, chunked.
std::string stream_head(std::string_view bt_headers = ok_bt_headers) {
  std::string h = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n";
  h.append(bt_headers);
  h.append("transfer-encoding: chunked\r\n\r\n");
  return h;
}

std::string chunk(std::string_view data) {
  char size[20];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return std::string(size) + std::string(data) + "\r\n";
}

constexpr std::string_view last_chunk = "0\r\n\r\n";

/// A peer answering every request on a connection with `parts` (the body split as given, each
/// part one HTTP chunk, `gap` between them), keep-alive. An empty part writes nothing, as a
/// Python axon (h11) and our stream_writer do for an empty send: a zero-size chunk is the
/// last-chunk, which would end the body there.
behaviour streamer(std::vector<std::string> parts, std::chrono::milliseconds gap = 0ms,
                   std::string head = stream_head()) {
  return [parts = std::move(parts), gap, head = std::move(head)](
             tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (;;) {
      if (!co_await read_request(s, buf, log)) co_return;
      co_await write_text(s, head);
      for (const auto& p : parts) {
        if (gap.count() > 0) co_await sleep_for(gap);
        if (!p.empty()) co_await write_text(s, chunk(p));
      }
      co_await write_text(s, last_chunk);
    }
  };
}

}  // namespace

TEST_CASE("a stream is delivered item by item, whatever the byte splits", "[dendrite][stream]") {
  fault_server srv(streamer({"alp", "ha\nbe", "ta\ngamma\n", "", "delta\n"}, 20ms));
  bt::dendrite d(alice());
  collector got;
  auto r = d.call_stream(srv.axon(bob().ss58_address()), words_query("alpha beta gamma delta"), 5.0,
                         std::ref(got));
  INFO(r.dendrite.status_message.value_or("None"));
  REQUIRE(r.dendrite.status_code == 200);
  const std::vector<std::string> want{"alpha", "beta", "gamma", "delta"};
  CHECK(got.get() == want);
  CHECK(r.words == want);
  CHECK(r.text == "alpha beta gamma delta");  // the caller's input stays
  CHECK(r.dendrite.status_message == "Success");
  CHECK(r.axon.status_code == 200);
  CHECK(r.axon.process_time == Approx(0.0042));
  CHECK(r.axon.ip == "127.0.0.1");  // the target addressed
  CHECK(r.dendrite.process_time.has_value());

  // The request is call()'s: the route, a signed JSON body with the hashed text.
  REQUIRE(srv.log().count() == 1);
  {
    std::lock_guard lk(srv.log().mu);
    const auto& req = srv.log().requests[0];
    CHECK(req.target() == "/WordStream");
    CHECK(req[http::field::content_type] == "application/json");
    CHECK(req["bt_header_dendrite_signature"].size() == 130);
    word_stream sent;
    REQUIRE_FALSE(bt::read_json_body(bt::descriptor_of<word_stream>(), req.body(), sent));
    CHECK(sent.text == "alpha beta gamma delta");
  }

  SECTION("a complete stream leaves its connection pooled for the next call") {
    collector again;
    auto r2 = d.call_stream(srv.axon(bob().ss58_address()), words_query("x"), 5.0, std::ref(again));
    CHECK(r2.dendrite.status_code == 200);
    CHECK(again.get() == want);  // this peer always streams the same words
    CHECK(d.stats().connections_opened == 1);
    CHECK(d.stats().connections_reused == 1);
  }
  SECTION("a last item without its terminator is emitted at the end of a complete body") {
    fault_server tail(streamer({"one\ntw", "o"}));
    collector t;
    auto r3 =
        d.call_stream(tail.axon(bob().ss58_address()), words_query("one two"), 5.0, std::ref(t));
    CHECK(r3.dendrite.status_code == 200);
    CHECK(t.get() == std::vector<std::string>{"one", "two"});
  }
  SECTION("a Content-Length body (not chunked) streams too") {
    fault_server plain([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      co_await write_text(s, http_response(200, "a\nb\n", ok_bt_headers, "text/event-stream"));
    });
    collector t;
    auto r3 = d.call_stream(plain.axon(bob().ss58_address()), words_query("a b"), 5.0, std::ref(t));
    CHECK(r3.dendrite.status_code == 200);
    CHECK(t.get() == std::vector<std::string>{"a", "b"});
  }
}

TEST_CASE("a dynamic synapse receives the raw body bytes", "[dendrite][stream]") {
  fault_server srv(streamer({"alpha\n", "beta\ngam", "ma\n"}, 10ms));
  bt::dendrite d(alice());
  bt::error err;
  auto type = bt::make_dynamic_descriptor(
      "WordStream", {{"text", bt::field_kind::required}, {"words", bt::field_kind::optional}},
      {"text"}, err);
  REQUIRE_FALSE(err);
  bt::dynamic_synapse q(type);
  *q.get("text") = "alpha beta gamma";
  collector got;
  auto r = d.call_stream(srv.axon(bob().ss58_address()), q, 5.0, std::ref(got));
  INFO(r.dendrite.status_message.value_or("None"));
  CHECK(r.dendrite.status_code == 200);
  std::string all;
  for (const auto& i : got.get()) all += i;
  CHECK(all == "alpha\nbeta\ngamma\n");
  CHECK(r.get("text")->get<std::string>() == "alpha beta gamma");
}

TEST_CASE("the deadline cuts a slow drip: 408, earlier items delivered, on time",
          "[dendrite][stream]") {
  // Two words at once, then one word every 150 ms for as long as the client reads.
  fault_server drip([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    if (!co_await read_request(s, buf, log)) co_return;
    co_await write_text(s, stream_head() + chunk("first\nsecond\n"));
    for (int i = 0; i < 200; ++i) {
      co_await sleep_for(150ms);
      auto [ec, n] = co_await net::async_write(
          s, net::buffer(chunk("w" + std::to_string(i) + "\n")), net::as_tuple(net::use_awaitable));
      (void)n;
      if (ec) co_return;
    }
  });
  const auto fds_before = open_fds();
  {
    bt::dendrite d(alice());
    collector got;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = d.call_stream(drip.axon(bob().ss58_address()), words_query("x"), 0.6, std::ref(got));
    const double el = seconds_since(t0);
    CHECK(r.dendrite.status_code == 408);
    CHECK(r.dendrite.status_message == "Request timeout after 0.6 seconds");
    CHECK_FALSE(r.dendrite.process_time.has_value());
    const auto items = got.get();
    REQUIRE(items.size() >= 2);
    CHECK(items[0] == "first");
    CHECK(items[1] == "second");
    CHECK(items.size() < 10);                // the drip did not run past the deadline
    CHECK(r.words == items);                 // the parser's field holds what was delivered
    CHECK(el < 1.6);                         // the deadline is enforced at all (generous bound)
    CHECK(d.stats().idle_connections == 0);  // a cut stream is never pooled
  }
  // The dendrite closed its socket when the deadline cut the stream. The drip's end of the
  // connection (an fd of this process too) closes once a write fails on it, which takes up to
  // two 150 ms ticks after our close; a socket the dendrite leaked would keep both open.
  // Polled: a descriptor count has no notification to wait on.
  bt::test::poll_until([&] { return open_fds() == fds_before; }, 3s);
  CHECK(open_fds() == fds_before);
}

TEST_CASE("hostile streams are bounded by the body limit", "[dendrite][stream]") {
  bt::dendrite d(alice(), {.max_response_body_bytes = 64u << 10});
  SECTION("an endless stream of items") {
    fault_server endless([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      co_await write_text(s, stream_head());
      std::string words;
      for (int i = 0; i < 100; ++i) words += "word" + std::to_string(i) + "\n";
      for (;;) {
        auto [ec, n] = co_await net::async_write(s, net::buffer(chunk(words)),
                                                 net::as_tuple(net::use_awaitable));
        (void)n;
        if (ec) co_return;
      }
    });
    std::atomic<std::size_t> items{0}, bytes{0};
    auto r = d.call_stream(endless.axon(bob().ss58_address()), words_query("x"), 10.0,
                           [&](std::string_view i) {
                             ++items;
                             bytes += i.size() + 1;
                           });
    CHECK(r.dendrite.status_code == 422);
    CHECK(r.dendrite.status_message ==
          "Failed to parse response: response body exceeds 65536 bytes");
    CHECK(items > 1000);
    CHECK(bytes <= 65536);
    CHECK(d.stats().idle_connections == 0);
  }
  SECTION("one endless item (no terminator ever): the parser's buffer is bounded too") {
    fault_server one([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      co_await write_text(s, stream_head());
      const std::string x(4096, 'x');
      for (;;) {
        auto [ec, n] =
            co_await net::async_write(s, net::buffer(chunk(x)), net::as_tuple(net::use_awaitable));
        (void)n;
        if (ec) co_return;
      }
    });
    std::atomic<std::size_t> items{0};
    auto r = d.call_stream(one.axon(bob().ss58_address()), words_query("x"), 10.0,
                           [&](std::string_view) { ++items; });
    CHECK(r.dendrite.status_code == 422);
    CHECK(items == 0);
    CHECK(r.words.empty());
  }
  SECTION("an oversized chunk announced at once") {
    fault_server big([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      co_await write_text(s, stream_head() + "ffffffffff\r\n");
      co_await sleep_for(5s);
    });
    auto r = d.call_stream(big.axon(bob().ss58_address()), words_query("x"), 10.0,
                           [](std::string_view) {});
    CHECK(r.dendrite.status_code == 422);
  }
}

TEST_CASE("stream failures map like call()'s", "[dendrite][stream]") {
  bt::dendrite d(alice());
  collector got;
  SECTION("a miner closing inside the stream: 400, earlier items delivered") {
    fault_server cut([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      co_await write_text(s, stream_head() + chunk("one\ntwo\n") + "10\r\nthr");
    });
    auto r = d.call_stream(cut.axon(bob().ss58_address()), words_query("x"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 400);
    CHECK(r.dendrite.status_message == "Payload error: Response payload is not completed");
    CHECK(got.get() == std::vector<std::string>{"one", "two"});
    CHECK(r.words == std::vector<std::string>{"one", "two"});  // no finish_stream on a cut
  }
  SECTION("a non-200 answer is an ordinary JSON error answer") {
    fault_server refuse([](tcp::socket& s, server_log& log) -> net::awaitable<void> {
      boost::beast::flat_buffer buf;
      if (!co_await read_request(s, buf, log)) co_return;
      co_await write_text(s, http_response(401, R"({"message": "Not Verified with error: nope"})",
                                           "bt_header_axon_status_code: 401\r\n"));
    });
    auto r = d.call_stream(refuse.axon(bob().ss58_address()), words_query("x"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 401);
    CHECK(r.dendrite.status_message == "Not Verified with error: nope");
    CHECK(got.get().empty());
  }
  SECTION("a 200 stream without bt status headers has no status (6.5)") {
    fault_server bare(streamer({"a\n"}, 0ms, stream_head("")));
    auto r = d.call_stream(bare.axon(bob().ss58_address()), words_query("a"), 5.0, std::ref(got));
    CHECK_FALSE(r.dendrite.status_code.has_value());
    CHECK_FALSE(r.is_success());
    CHECK(got.get() == std::vector<std::string>{"a"});
  }
  SECTION("a miner whose header says 500 on a 200 stream (D17) is a 500") {
    fault_server odd(streamer({"a\n"}, 0ms,
                              stream_head("bt_header_axon_status_code: 500\r\n"
                                          "bt_header_axon_status_message: boom\r\n")));
    auto r = d.call_stream(odd.axon(bob().ss58_address()), words_query("a"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 500);
    CHECK(r.dendrite.status_message == "boom");
  }
  SECTION("an unparsable bt header: 422") {
    fault_server bad(streamer({"a\n"}, 0ms, stream_head("bt_header_axon_status_code: abc\r\n")));
    auto r = d.call_stream(bad.axon(bob().ss58_address()), words_query("a"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 422);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Failed to parse response: "));
  }
  SECTION("an on_item that throws ends the call with 422") {
    fault_server srv(streamer({"a\nb\n"}));
    auto r = d.call_stream(srv.axon(bob().ss58_address()), words_query("a b"), 5.0,
                           [](std::string_view) { throw std::runtime_error("consumer gave up"); });
    CHECK(r.dendrite.status_code == 422);
    CHECK(r.dendrite.status_message ==
          "Failed to parse response: stream parser failed: consumer gave up");
  }
  SECTION("connection refused") {
    bt::axon_info a;
    a.ip = "127.0.0.1";
    a.port = closed_port();
    a.hotkey = bob().ss58_address();
    auto r = d.call_stream(a, words_query("a"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 503);
  }
}

TEST_CASE("cancelling a stream ends it with 503", "[dendrite][stream]") {
  fault_server drip(streamer(std::vector<std::string>(100, "w\n"), 100ms));
  bt::dendrite d(alice());
  net::cancellation_signal sig;
  std::promise<word_stream> p;
  auto f = p.get_future();
  bt::test::signal_count items;
  d.async_call_stream(
      drip.axon(bob().ss58_address()), words_query("x"), 10.0,
      [&](std::string_view) { items.add(); },
      net::bind_cancellation_slot(sig.slot(), [&p](word_stream r) { p.set_value(std::move(r)); }));
  REQUIRE(items.wait_for(1, 10s));
  sig.emit(net::cancellation_type::terminal);
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  auto r = f.get();
  CHECK(r.dendrite.status_code == 503);
  CHECK(r.dendrite.status_message == "Request cancelled: cancelled by the caller");
  CHECK(items.value() < 100);
}

TEST_CASE("many concurrent streams, and a coroutine caller", "[dendrite][stream]") {
  std::vector<std::string> parts;
  // append(), not "w" + s: GCC 12 reports a false -Wrestrict on the latter here, inside the
  // library's string concatenation.
  for (int i = 0; i < 20; ++i)
    parts.push_back(std::string("w").append(std::to_string(i)).append("\n"));
  fault_server srv(streamer(parts, 2ms));
  bt::dendrite d(alice(), {.threads = 2});

  SECTION("200 streams at once, each complete and in order") {
    constexpr int n = 200;
    std::vector<collector> got(n);
    std::vector<std::future<word_stream>> fs;
    for (int i = 0; i < n; ++i)
      fs.push_back(d.async_call_stream(srv.axon(bob().ss58_address()), words_query("x"), 20.0,
                                       std::ref(got[static_cast<std::size_t>(i)]),
                                       net::use_future));
    for (int i = 0; i < n; ++i) {
      auto r = fs[static_cast<std::size_t>(i)].get();
      INFO(i << ": " << r.dendrite.status_message.value_or("None"));
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.words.size() == parts.size());
      CHECK(got[static_cast<std::size_t>(i)].get().size() == parts.size());
    }
  }
  SECTION("co_await async_call_stream on the caller's io_context") {
    net::io_context ioc;
    std::vector<std::string> items;
    word_stream out;
    net::co_spawn(
        ioc,
        [&]() -> net::awaitable<void> {
          out = co_await d.async_call_stream(
              srv.axon(bob().ss58_address()), words_query("x"), 5.0,
              [&](std::string_view i) { items.emplace_back(i); }, net::use_awaitable);
        },
        net::detached);
    ioc.run();
    CHECK(out.dendrite.status_code == 200);
    CHECK(items.size() == parts.size());  // items came first (the handler runs after the last)
    CHECK(out.words == items);
  }
}
