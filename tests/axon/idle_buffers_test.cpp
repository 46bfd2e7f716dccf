// The body buffers idle keep-alive connections keep for their next request
// (axon_options::idle_buffer_bytes): within the axon-wide bound, none when it is 0, all given back
// when the connections close, and a kept buffer carries the next request and answer intact.
#include <bt/axon.hpp>
#include <bt/dendrite.hpp>

#include <catch2/catch.hpp>

#include "memory_session.hpp"
#include "state/axon_impl.hpp"
#include "support/dev_keys.hpp"
#include "support/wait.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

/// One 64 KiB text field the handler echoes, and its length as an output.
struct big_echo : bt::synapse {
  std::string text;
  std::optional<std::int64_t> length;
  BT_SYNAPSE(big_echo, "BigEcho", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(length))
};

big_echo query(char fill) {
  big_echo q;
  q.text.assign(std::size_t{64} * 1024, fill);
  return q;
}

}  // namespace

TEST_CASE("idle connections keep large body buffers within axon_options::idle_buffer_bytes",
          "[axon][idle_buffers]") {
  const std::size_t limit = GENERATE(std::size_t{0}, std::size_t{200} * 1024);
  bt::axon_options opts = bt::axon_options::loopback();
  opts.idle_buffer_bytes = limit;
  bt::axon ax(bt::test::bob(), opts);
  ax.attach<big_echo>([](big_echo& b) { b.length = static_cast<std::int64_t>(b.text.size()); });
  ax.start();
  auto info = ax.info();
  info.ip = "127.0.0.1";
  const std::atomic<std::size_t>& kept = bt::detail::axon_access::of(ax).idle_buffer_bytes;

  {
    // Three dendrites: three connections, each idle after its calls with a request and an answer
    // of about 64 KiB each, more than the 200 KiB bound lets all three keep.
    std::vector<std::unique_ptr<bt::dendrite>> callers;
    for (int i = 0; i < 3; ++i) {
      callers.push_back(std::make_unique<bt::dendrite>(bt::test::alice()));
      for (const char fill : {'a', 'b'}) {  // the second call reuses what the first kept
        const big_echo r = callers.back()->call(info, query(fill), 10.0);
        REQUIRE(r.dendrite.status_code == 200);
        CHECK(r.length == 64 * 1024);
        CHECK(r.text == query(fill).text);
        CHECK(kept.load() <= limit);
      }
    }
    if (limit == 0) {
      CHECK(kept.load() == 0);
    } else {
      CHECK(bt::test::poll_until([&] { return kept.load() > 0; }));
    }
    CHECK(kept.load() <= limit);
  }
  // The dendrites closed their connections: every kept buffer was given back.
  CHECK(bt::test::poll_until([&] { return kept.load() == 0; }));
  ax.stop();
}
