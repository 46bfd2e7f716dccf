// Our axon's streaming forward (bt::stream_writer) to our dendrite's call_stream:
// WordStream through both handler forms, the final synapse, keep-alive after a complete stream,
// non-200 answers, a slow stream cut at the client's deadline, many concurrent streams, and a
// hostile axon handler streaming without end against the client's limit.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/nonce_store.hpp>
#include <bt/stream_writer.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/collector.hpp"
#include "support/dev_keys.hpp"
#include "support/example_queries.hpp"
#include "support/wait.hpp"

using bt::examples::word_stream;
using namespace std::chrono_literals;

namespace {

using bt::test::alice;
using bt::test::bob;
using bt::test::words_query;

/// The WordStream miner of bt-axon: each word of `text` + "\n" as one chunk, `delay` before each.
boost::asio::awaitable<void> stream_words(word_stream& s, bt::stream_writer& out,
                                          std::chrono::milliseconds delay) {
  for (std::string_view w : word_stream::split_words(s.text)) {
    if (delay.count() > 0) {
      boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, delay);
      co_await t.async_wait(boost::asio::use_awaitable);
    }
    std::string chunk(w);
    chunk.push_back('\n');
    if (!co_await out.send(chunk)) co_return;
  }
}

struct miner {
  bt::axon ax;
  explicit miner(std::chrono::milliseconds delay = 0ms, bool blocking = false,
                 bt::axon_options o = bt::axon_options::loopback())
      : ax(bob(), std::move(o)) {
    if (blocking) {
      ax.attach<word_stream>([delay](word_stream& s, bt::stream_writer& out) {
        for (std::string_view w : word_stream::split_words(s.text)) {
          if (delay.count() > 0) std::this_thread::sleep_for(delay);  // the stream's pace
          if (!out.send_blocking(std::string(w) + "\n")) return;
        }
      });
    } else {
      ax.attach<word_stream>(
          [delay](word_stream& s, bt::stream_writer& out) { return stream_words(s, out, delay); });
    }
    ax.start();
  }
  ~miner() { ax.stop(); }
  bt::axon_info target() const {
    bt::axon_info a = ax.info();
    a.ip = "127.0.0.1";
    return a;
  }
};

using bt::test::collector;

}  // namespace

TEST_CASE("our axon streams WordStream to our dendrite", "[dendrite][axon][stream]") {
  const bool blocking = GENERATE(false, true);
  INFO((blocking ? "worker pool, send_blocking" : "coroutine, co_await send"));
  miner m(0ms, blocking);
  bt::dendrite d(alice());
  const std::string text = "streams  carry\tthe words one by one";
  const auto want = word_stream::split_words(text);
  for (int i = 0; i < 5; ++i) {
    collector got;
    auto r = d.call_stream(m.target(), words_query(text), 5.0, std::ref(got));
    INFO(r.dendrite.status_message.value_or("None"));
    REQUIRE(r.dendrite.status_code == 200);
    CHECK(r.dendrite.status_message == "Success");
    CHECK(r.axon.status_code == 200);
    CHECK(r.axon.process_time.has_value());
    CHECK(r.dendrite.process_time.has_value());
    const auto items = got.get();
    REQUIRE(items.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) CHECK(items[k] == want[k]);
    CHECK(r.words == items);
    CHECK(r.text == text);
  }
  CHECK(d.stats().connections_opened == 1);  // complete streams leave the connection reusable

  SECTION("an empty text streams nothing and still ends with 200") {
    collector got;
    auto r = d.call_stream(m.target(), words_query(""), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 200);
    CHECK(got.get().empty());
  }
  SECTION("a request for another hotkey is refused with the ordinary 401") {
    auto target = m.target();
    target.hotkey = alice().ss58_address();
    collector got;
    // The 401 is signed by the axon's own hotkey, not the addressed one (PROTOCOL 5.15): 421
    // unless the dendrite does not check.
    auto r = d.call_stream(target, words_query("a b"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 421);
    bt::dendrite unchecked(bob(), {.verify_responses = bt::response_verification::off});
    r = unchecked.call_stream(target, words_query("a b"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 401);
    CHECK(got.get().empty());
  }
}

TEST_CASE("a slow stream from our axon is cut at the client's deadline",
          "[dendrite][axon][stream]") {
  miner m(200ms);
  bt::dendrite d(alice());
  collector got;
  const auto t0 = std::chrono::steady_clock::now();
  auto r =
      d.call_stream(m.target(), words_query("a b c d e f g h i j k l m n o p"), 0.9, std::ref(got));
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.dendrite.status_code == 408);
  CHECK(r.dendrite.status_message == "Request timeout after 0.9 seconds");
  const auto items = got.get();
  CHECK(items.size() >= 1);
  CHECK(items.size() < 16);
  if (!items.empty()) CHECK(items.front() == "a");
  CHECK(r.words == items);
  CHECK(el < 2.0);  // generous: the deadline is enforced at all
  CHECK(d.stats().idle_connections == 0);
}

TEST_CASE("many concurrent streams from our axon", "[dendrite][axon][stream]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.nonces = std::make_shared<bt::memory_nonce_store>(
      bt::memory_nonce_store::options{.rule = bt::nonce_rule::unique});  // concurrent calls (D3)
  miner m(1ms, false, o);
  bt::dendrite d(alice(), {.threads = 2});
  std::string text;
  for (int i = 0; i < 50; ++i) text += "w" + std::to_string(i) + " ";
  constexpr int n = 100;
  std::vector<collector> got(n);
  std::vector<std::future<word_stream>> fs;
  for (int i = 0; i < n; ++i)
    fs.push_back(d.async_call_stream(m.target(), words_query(text), 20.0,
                                     std::ref(got[static_cast<std::size_t>(i)]),
                                     boost::asio::use_future));
  for (int i = 0; i < n; ++i) {
    auto r = fs[static_cast<std::size_t>(i)].get();
    INFO(i << ": " << r.dendrite.status_message.value_or("None"));
    CHECK(r.dendrite.status_code == 200);
    CHECK(got[static_cast<std::size_t>(i)].get().size() == 50);
    CHECK(r.words.size() == 50);
  }
}

TEST_CASE("an endless stream from an axon handler stops at the client's limit",
          "[dendrite][axon][stream]") {
  bt::axon ax(bob(), bt::axon_options::loopback());
  bt::test::event handler_returned;
  ax.attach<word_stream>([&](word_stream&, bt::stream_writer& out) -> boost::asio::awaitable<void> {
    const std::string chunk = "endless words without end\n";
    while (co_await out.send(chunk)) {
    }
    handler_returned.set();  // send() reports the client gone
  });
  ax.start();
  {
    bt::dendrite d(alice(), {.max_response_body_bytes = 256u << 10});
    bt::axon_info a = ax.info();
    a.ip = "127.0.0.1";
    std::atomic<std::size_t> items{0};
    auto r = d.call_stream(a, words_query("x"), 10.0, [&](std::string_view) { ++items; });
    CHECK(r.dendrite.status_code == 422);
    CHECK(r.dendrite.status_message ==
          "Failed to parse response: response body exceeds 262144 bytes");
    CHECK(items > 1000);
  }
  CHECK(handler_returned.wait_for(5s));
  ax.stop();
}
