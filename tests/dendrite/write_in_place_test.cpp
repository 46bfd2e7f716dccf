// Both ends write a message in place first (one non-blocking write, no trip through the
// io_context) and send what did not fit by an asynchronous write. A request and an answer of
// 8 MiB, twice the loopback socket's largest send buffer, cannot be written in place whole: the
// rest goes the asynchronous way, and the message must still arrive whole and in order, on a
// connection that then carries the next call.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace {

/// A hashed text field the axon answers with, reversed in `reversed`, and its length.
struct echo_text : bt::synapse {
  std::string text;
  std::optional<std::string> reversed;
  std::optional<std::int64_t> length;
  BT_SYNAPSE(echo_text, "EchoText", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(reversed),
             BT_FIELD(length))
};

/// `n` bytes that differ from position to position, so a lost, repeated or reordered piece
/// shows in the comparison.
std::string pattern(std::size_t n, std::uint32_t seed) {
  std::string s(n, '\0');
  std::uint32_t x = seed;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>('a' + (x >> 24) % 26);
  }
  return s;
}

}  // namespace

TEST_CASE("writes larger than the socket buffer: the rest goes asynchronously, whole and in order",
          "[dendrite][axon][write_in_place]") {
  const bool session = GENERATE(false, true);
  CAPTURE(session);
  auto opts = bt::axon_options::loopback();
  opts.accept_sessions = session;
  bt::axon ax(bt::test::bob(), opts);
  ax.attach<echo_text>([](echo_text& e) {
    e.length = static_cast<std::int64_t>(e.text.size());
    e.reversed.emplace(e.text.rbegin(), e.text.rend());
  });
  ax.start();
  auto info = ax.info();
  info.ip = "127.0.0.1";
  bt::dendrite_options dopts;
  dopts.session = session;
  bt::dendrite d(bt::test::alice(), dopts);

  constexpr std::size_t big = std::size_t{8} << 20;
  for (std::uint32_t round = 1; round <= 3; ++round) {
    CAPTURE(round);
    echo_text q;
    // Large, small, large: a small message after a partial write, and one more large one.
    q.text = pattern(round == 2 ? 100 : big, round);
    std::string expected(q.text.rbegin(), q.text.rend());
    const echo_text r = d.call(info, q, 20.0);
    REQUIRE(r.dendrite.status_code == 200);
    CHECK(r.length == static_cast<std::int64_t>(q.text.size()));
    // (Compared by the first differing position: Catch would print 8 MiB strings.)
    REQUIRE(r.reversed);
    REQUIRE(r.reversed->size() == expected.size());
    const auto diff = std::mismatch(r.reversed->begin(), r.reversed->end(), expected.begin());
    CHECK(diff.first - r.reversed->begin() == static_cast<std::ptrdiff_t>(expected.size()));
  }
  const bt::dendrite_stats st = d.stats();
  CHECK(st.connections_opened == 1);  // every call on the one kept-alive connection
  CHECK(st.connections_reused == 2);
  ax.stop();
}
