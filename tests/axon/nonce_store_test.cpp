#include <bt/nonce_store.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

using bt::memory_nonce_store;
using bt::nonce_rule;
using bt::nonce_verdict;

namespace {
constexpr std::int64_t second = 1'000'000'000;
constexpr std::int64_t t0 = 1'700'000'000 * second;
const std::string alice = "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY";
const std::string uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a";
}  // namespace

TEST_CASE("strictly_increasing: newer nonces pass, equal or older ones are stale",
          "[nonce_store]") {
  memory_nonce_store s;
  CHECK(s.record(alice, uuid, t0, t0, t0 + 64 * second) == nonce_verdict::accepted);
  CHECK(s.record(alice, uuid, t0, t0, t0 + 64 * second) == nonce_verdict::stale);      // replay
  CHECK(s.record(alice, uuid, t0 - 1, t0, t0 + 64 * second) == nonce_verdict::stale);  // older
  CHECK(s.record(alice, uuid, t0 + 1, t0, t0 + 64 * second) == nonce_verdict::accepted);
  // Another uuid (another dendrite of the same hotkey) is another endpoint.
  CHECK(s.record(alice, "other-uuid", t0 - 5, t0, t0 + 64 * second) == nonce_verdict::accepted);
  CHECK(s.size() == 2);
}

TEST_CASE("unique: any order within the window, each nonce once", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::unique});
  CHECK(s.record(alice, uuid, t0 + 2, t0, t0 + 64 * second) == nonce_verdict::accepted);
  CHECK(s.record(alice, uuid, t0 + 1, t0, t0 + 64 * second) ==
        nonce_verdict::accepted);  // reordered
  CHECK(s.record(alice, uuid, t0 + 2, t0, t0 + 64 * second) == nonce_verdict::replayed);
  CHECK(s.size() == 2);
}

TEST_CASE("expired records are forgotten and the store stays bounded", "[nonce_store]") {
  memory_nonce_store s({.max_entries = 64, .rule = nonce_rule::strictly_increasing, .shards = 1});
  // Fill to capacity with live records: the next new endpoint is refused, not evicted.
  for (int i = 0; i < 64; ++i)
    REQUIRE(s.record(alice, "uuid-" + std::to_string(i), t0, t0, t0 + 10 * second) ==
            nonce_verdict::accepted);
  CHECK(s.record(alice, "uuid-new", t0, t0, t0 + 10 * second) == nonce_verdict::full);
  // Known endpoints still work while full.
  CHECK(s.record(alice, "uuid-3", t0 + 1, t0, t0 + 10 * second) == nonce_verdict::accepted);
  // Once the records expired a sweep frees the space.
  const std::int64_t later = t0 + 11 * second;
  CHECK(s.record(alice, "uuid-new", later, later, later + 10 * second) == nonce_verdict::accepted);
  CHECK(s.size() <= 64);
  // An expired record no longer blocks its endpoint (freshness protects it from then on).
  memory_nonce_store t;
  CHECK(t.record(alice, uuid, t0, t0, t0 + second) == nonce_verdict::accepted);
  CHECK(t.record(alice, uuid, t0 - 10, t0 + 2 * second, t0 + 3 * second) ==
        nonce_verdict::accepted);
}

TEST_CASE("concurrent records of one nonce: exactly one is accepted", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::unique});
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> accepted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        if (s.record(alice, uuid, t0 + round, t0, t0 + 64 * second) == nonce_verdict::accepted)
          ++accepted;
      });
    for (auto& th : threads) th.join();
    CHECK(accepted.load() == 1);
  }
}

TEST_CASE("long keys do not overflow the stack buffer", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::unique});
  const std::string long_uuid(1000, 'u');
  CHECK(s.record(alice, long_uuid, t0, t0, t0 + second) == nonce_verdict::accepted);
  CHECK(s.record(alice, long_uuid, t0, t0, t0 + second) == nonce_verdict::replayed);
}
