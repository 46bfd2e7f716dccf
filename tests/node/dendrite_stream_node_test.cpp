// Our dendrite's call_stream against an independent peer that streams like a Python axon
// (tests/node/python_stream_axon_peer.mjs, Node 20's built-in http): chunked, text/event-stream,
// the bt headers in the head, sr25519 signatures and the body hash verified on its side.
// Registered by tests/dendrite_stream_node.cmake. A missing node or node_modules fails the test
// (run scripts/setup); nothing is skipped.
#include <bt/dendrite.hpp>

#include <bt/dynamic_synapse.hpp>
#include <bt/examples/word_stream.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/collector.hpp"
#include "support/dev_keys.hpp"
#include "support/node_peer.hpp"

namespace {

using bt::test::alice;
using bt::test::bob;
using bt::test::collector;
using bt::test::node_peer;

bt::examples::word_stream words_query(std::string text) {
  bt::examples::word_stream q;
  q.text = std::move(text);
  return q;
}

}  // namespace

TEST_CASE("a Python-shaped streaming axon: items, final synapse, keep-alive",
          "[dendrite][node][stream]") {
  node_peer peer("python_stream_axon_peer.mjs", bob());
  bt::dendrite d(alice());
  const std::string text = "the quick  brown fox\tjumps over the lazy dog caf\xc3\xa9";
  const auto want = bt::examples::word_stream::split_words(text);
  for (int i = 0; i < 10; ++i) {
    collector got;
    auto r = d.call_stream(peer.axon(), words_query(text), 5.0, std::ref(got));
    INFO(r.dendrite.status_message.value_or("None"));
    REQUIRE(r.dendrite.status_code == 200);
    CHECK(r.dendrite.status_message == "Success");
    const auto items = got.get();
    REQUIRE(items.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) CHECK(items[k] == want[k]);
    CHECK(r.words == items);
    CHECK(r.axon.process_time.has_value());
    CHECK(r.dendrite.process_time.has_value());
    CHECK(r.text == text);
  }
  CHECK(d.stats().connections_opened == 1);  // every stream completed cleanly and was reused

  SECTION("a dynamic synapse of the same shape gets the raw bytes") {
    bt::error err;
    auto type = bt::make_dynamic_descriptor(
        "WordStream", {{"text", bt::field_kind::required}, {"words", bt::field_kind::optional}},
        {"text"}, err);
    REQUIRE_FALSE(err);
    bt::dynamic_synapse q(type);
    *q.get("text") = "one two three";
    collector got;
    auto r = d.call_stream(peer.axon(), q, 5.0, std::ref(got));
    INFO(r.dendrite.status_message.value_or("None"));
    CHECK(r.dendrite.status_code == 200);
    std::string all;
    for (const auto& s : got.get()) all += s;
    CHECK(all == "one\ntwo\nthree\n");
  }
  SECTION("a request signed for another hotkey gets Python's 401 through the JSON path") {
    auto target = peer.axon();
    target.hotkey = alice().ss58_address();
    collector got;
    auto r = d.call_stream(target, words_query("a b"), 5.0, std::ref(got));
    CHECK(r.dendrite.status_code == 401);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Not Verified with error: Signature mismatch with "));
    CHECK(got.get().empty());
  }
  SECTION("concurrent streams, one dendrite per concurrent caller (nonce order, D3)") {
    constexpr int n = 8;
    std::vector<std::unique_ptr<bt::dendrite>> ds;
    std::vector<collector> got(n);
    std::vector<std::future<bt::examples::word_stream>> fs;
    for (int i = 0; i < n; ++i) {
      ds.push_back(std::make_unique<bt::dendrite>(alice()));
      fs.push_back(ds.back()->async_call_stream(peer.axon(), words_query(text), 10.0,
                                                std::ref(got[static_cast<std::size_t>(i)]),
                                                boost::asio::use_future));
    }
    for (int i = 0; i < n; ++i) {
      auto r = fs[static_cast<std::size_t>(i)].get();
      INFO(r.dendrite.status_message.value_or("None"));
      CHECK(r.dendrite.status_code == 200);
      CHECK(got[static_cast<std::size_t>(i)].get().size() == want.size());
    }
  }
}

TEST_CASE("a slow Python-shaped stream is cut at the deadline with 408",
          "[dendrite][node][stream]") {
  node_peer peer("python_stream_axon_peer.mjs", bob(), {"150"});  // 150 ms before each word
  bt::dendrite d(alice());
  collector got;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = d.call_stream(peer.axon(), words_query("a b c d e f g h i j k l m n o p"), 1.0,
                         std::ref(got));
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.dendrite.status_code == 408);
  CHECK(r.dendrite.status_message == "Request timeout after 1.0 seconds");
  const auto items = got.get();
  CHECK(items.size() >= 1);  // words before the cut were delivered
  CHECK(items.size() < 16);
  if (!items.empty()) CHECK(items[0] == "a");
  CHECK(el < 2.5);  // generous: the deadline is enforced at all
  CHECK(d.stats().idle_connections == 0);
}
