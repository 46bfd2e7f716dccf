#include <bt/nonce_store.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using bt::memory_nonce_store;
using bt::nonce_rule;
using bt::nonce_verdict;

namespace {
constexpr std::int64_t second = 1'000'000'000;
constexpr std::int64_t t0 = 1'700'000'000 * second;
const std::string alice_hotkey = "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY";
const std::string uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a";
const std::string mallory_hotkey = "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty";
constexpr std::int64_t expiry = t0 + 64 * second;

// A distinct, well-formed-looking hotkey per index (the store never parses it).
std::string hotkey_n(int i) {
  std::string h = "5Key" + std::to_string(i);
  h.resize(48, 'k');
  return h;
}

long rss_kib() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return resident * 4;  // pages of 4 KiB on the platforms we test on
}
}  // namespace

TEST_CASE("strictly_increasing: newer nonces pass, equal or older ones are stale",
          "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::strictly_increasing});
  CHECK(s.record(alice_hotkey, uuid, t0, t0, t0 + 64 * second) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0, t0, t0 + 64 * second) == nonce_verdict::stale);  // replay
  CHECK(s.record(alice_hotkey, uuid, t0 - 1, t0, t0 + 64 * second) ==
        nonce_verdict::stale);  // older
  CHECK(s.record(alice_hotkey, uuid, t0 + 1, t0, t0 + 64 * second) == nonce_verdict::accepted);
  // Another uuid (another dendrite of the same hotkey) is another endpoint.
  CHECK(s.record(alice_hotkey, "other-uuid", t0 - 5, t0, t0 + 64 * second) ==
        nonce_verdict::accepted);
  CHECK(s.size() == 2);
}

TEST_CASE("unique: any order within the window, each nonce once", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::unique});
  CHECK(s.record(alice_hotkey, uuid, t0 + 2, t0, t0 + 64 * second) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0 + 1, t0, t0 + 64 * second) ==
        nonce_verdict::accepted);  // reordered
  CHECK(s.record(alice_hotkey, uuid, t0 + 2, t0, t0 + 64 * second) == nonce_verdict::replayed);
  CHECK(s.size() == 2);
}

TEST_CASE("expired records are forgotten and the store stays bounded", "[nonce_store]") {
  memory_nonce_store s({.max_entries = 64, .rule = nonce_rule::strictly_increasing, .shards = 1});
  // Fill to capacity with live records: the next new endpoint is refused, not evicted.
  for (int i = 0; i < 64; ++i)
    REQUIRE(s.record(alice_hotkey, "uuid-" + std::to_string(i), t0, t0, t0 + 10 * second) ==
            nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, "uuid-new", t0, t0, t0 + 10 * second) == nonce_verdict::full);
  // Known endpoints still work while full.
  CHECK(s.record(alice_hotkey, "uuid-3", t0 + 1, t0, t0 + 10 * second) == nonce_verdict::accepted);
  // Once the records expired a sweep frees the space.
  const std::int64_t later = t0 + 11 * second;
  CHECK(s.record(alice_hotkey, "uuid-new", later, later, later + 10 * second) ==
        nonce_verdict::accepted);
  CHECK(s.size() <= 64);
  // An expired record no longer blocks its endpoint (freshness protects it from then on).
  memory_nonce_store t;
  CHECK(t.record(alice_hotkey, uuid, t0, t0, t0 + second) == nonce_verdict::accepted);
  CHECK(t.record(alice_hotkey, uuid, t0 - 10, t0 + 2 * second, t0 + 3 * second) ==
        nonce_verdict::accepted);
}

TEST_CASE("concurrent records of one nonce: exactly one is accepted", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::unique});
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> accepted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        if (s.record(alice_hotkey, uuid, t0 + round, t0, t0 + 64 * second) ==
            nonce_verdict::accepted)
          ++accepted;
      });
    for (auto& th : threads) th.join();
    CHECK(accepted.load() == 1);
  }
}

TEST_CASE("long keys do not overflow the stack buffer", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::unique});
  const std::string long_uuid(1000, 'u');
  CHECK(s.record(alice_hotkey, long_uuid, t0, t0, t0 + second) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, long_uuid, t0, t0, t0 + second) == nonce_verdict::replayed);
}

TEST_CASE("window is the default rule", "[nonce_store]") {
  memory_nonce_store s;
  CHECK(s.config().rule == nonce_rule::window);
  CHECK(s.config().window == 256);
  CHECK(s.config().max_entries_per_hotkey == 1024);
  // Reordered concurrent requests of one dendrite: all accepted, each once.
  CHECK(s.record(alice_hotkey, uuid, t0 + 2, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0 + 1, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.size() == 1);  // one record per endpoint
}

TEST_CASE("window: out of order inside the window is accepted, exact replays are refused",
          "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::window, .window = 8});
  // Nonces 1..8 arrive in a scrambled order (the set never overflows): all accepted.
  for (int n : {3, 1, 8, 2, 7, 4, 6, 5})
    CHECK(s.record(alice_hotkey, uuid, t0 + n, t0, expiry) == nonce_verdict::accepted);
  // Every one of them again, highest included: replayed.
  for (int n = 1; n <= 8; ++n)
    CHECK(s.record(alice_hotkey, uuid, t0 + n, t0, expiry) == nonce_verdict::replayed);
  // New nonces above and a gap filled later, once the set is full.
  CHECK(s.record(alice_hotkey, uuid, t0 + 12, t0, expiry) == nonce_verdict::accepted);  // evicts 1
  CHECK(s.record(alice_hotkey, uuid, t0 + 10, t0, expiry) == nonce_verdict::accepted);  // evicts 2
  CHECK(s.record(alice_hotkey, uuid, t0 + 10, t0, expiry) == nonce_verdict::replayed);
  CHECK(s.record(alice_hotkey, uuid, t0 + 11, t0, expiry) == nonce_verdict::accepted);  // evicts 3
  CHECK(s.record(alice_hotkey, uuid, t0 + 12, t0, expiry) == nonce_verdict::replayed);
  // Another uuid (another dendrite of the same hotkey) is another endpoint.
  CHECK(s.record(alice_hotkey, "other-uuid", t0 + 1, t0, expiry) == nonce_verdict::accepted);
}

TEST_CASE("window: nonces at or below the floor are stale, near or far", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::window, .window = 4});
  for (int n : {10, 20, 30, 40, 50})
    REQUIRE(s.record(alice_hotkey, uuid, t0 + n, t0, expiry) == nonce_verdict::accepted);
  // Kept {20, 30, 40, 50}; 10 was evicted and is the floor.
  CHECK(s.record(alice_hotkey, uuid, t0 + 10, t0, expiry) ==
        nonce_verdict::stale);  // the evicted one
  CHECK(s.record(alice_hotkey, uuid, t0 + 9, t0, expiry) == nonce_verdict::stale);  // just below
  CHECK(s.record(alice_hotkey, uuid, t0 - 30 * second, t0, expiry) ==
        nonce_verdict::stale);  // far below
  CHECK(s.record(alice_hotkey, uuid, t0 + 20, t0, expiry) == nonce_verdict::replayed);
  // Above the floor and never seen: accepted, and since the set is full it is evicted at once,
  // raising the floor to itself: a replay of it is stale, not accepted.
  CHECK(s.record(alice_hotkey, uuid, t0 + 15, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0 + 15, t0, expiry) == nonce_verdict::stale);
  CHECK(s.record(alice_hotkey, uuid, t0 + 12, t0, expiry) == nonce_verdict::stale);
  // The window moves with new highs: 20 is evicted by 60.
  CHECK(s.record(alice_hotkey, uuid, t0 + 60, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0 + 20, t0, expiry) == nonce_verdict::stale);
  CHECK(s.record(alice_hotkey, uuid, t0 + 25, t0, expiry) == nonce_verdict::accepted);
}

TEST_CASE("window: no nonce is ever accepted twice, any reordering within W is accepted",
          "[nonce_store]") {
  // Model check against random traffic: a stream of increasing nonces, each sent once, delivered
  // with bounded reordering (displacement < W), mixed with replays of arbitrary earlier nonces.
  constexpr std::size_t W = 16;
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 20; ++round) {
    memory_nonce_store s({.rule = nonce_rule::window, .window = W});
    const int n = 2000;
    std::vector<std::int64_t> order(n);
    for (int i = 0; i < n; ++i) order[i] = t0 + 1000 * i + static_cast<std::int64_t>(rng() % 1000);
    // Bounded reordering: shuffle within consecutive blocks of W (displacement < W).
    for (int i = 0; i < n; i += static_cast<int>(W))
      std::shuffle(order.begin() + i, order.begin() + std::min(n, i + static_cast<int>(W)), rng);
    std::set<std::int64_t> accepted;
    std::vector<std::int64_t> sent;
    for (int i = 0; i < n; ++i) {
      INFO("round " << round << " i " << i);
      CHECK(s.record(alice_hotkey, uuid, order[i], t0, expiry) == nonce_verdict::accepted);
      accepted.insert(order[i]);
      sent.push_back(order[i]);
      if (rng() % 4 == 0) {  // an attacker replays something already sent
        const std::int64_t old = sent[rng() % sent.size()];
        const auto v = s.record(alice_hotkey, uuid, old, t0, expiry);
        CHECK((v == nonce_verdict::replayed || v == nonce_verdict::stale));
      }
    }
    CHECK(accepted.size() == static_cast<std::size_t>(n));
  }
}

TEST_CASE("window: an expired record is forgotten and starts afresh", "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::window, .window = 2});
  for (int n : {1, 2, 3})
    REQUIRE(s.record(alice_hotkey, uuid, t0 + n, t0, t0 + second) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0 + 1, t0, t0 + second) == nonce_verdict::stale);
  // Past the expiry no request carrying those nonces can be fresh: the store may forget them.
  const std::int64_t later = t0 + 2 * second;
  CHECK(s.record(alice_hotkey, uuid, later, later, later + second) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, later - 1, later, later + second) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, later, later, later + second) == nonce_verdict::replayed);
}

TEST_CASE("per-hotkey quota: a flooding hotkey is refused, others are admitted", "[nonce_store]") {
  memory_nonce_store s({.max_entries = 1000, .max_entries_per_hotkey = 8});
  int accepted = 0, full = 0;
  for (int i = 0; i < 500; ++i) {
    const auto v = s.record(mallory_hotkey, "uuid-" + std::to_string(i), t0, t0, expiry);
    accepted += v == nonce_verdict::accepted;
    full += v == nonce_verdict::full;
  }
  CHECK(accepted == 8);
  CHECK(full == 492);
  CHECK(s.size() == 8);
  // Known endpoints of the flooding hotkey still work (their record exists).
  CHECK(s.record(mallory_hotkey, "uuid-3", t0 + 1, t0, expiry) == nonce_verdict::accepted);
  // Honest hotkeys are admitted while the flood goes on.
  for (int i = 0; i < 20; ++i)
    CHECK(s.record(hotkey_n(i), uuid, t0, t0, expiry) == nonce_verdict::accepted);
  // Once the flood's records expire, the hotkey gets room again.
  const std::int64_t later = expiry + 1;
  CHECK(s.record(mallory_hotkey, "uuid-new", later, later, later + second) ==
        nonce_verdict::accepted);
  // 0 disables the quota.
  memory_nonce_store unlimited({.max_entries = 100, .max_entries_per_hotkey = 0});
  for (int i = 0; i < 100; ++i)
    CHECK(unlimited.record(mallory_hotkey, "u" + std::to_string(i), t0, t0, expiry) ==
          nonce_verdict::accepted);
}

TEST_CASE("global cap: many flooding hotkeys fill it, known endpoints work, the bound holds",
          "[nonce_store]") {
  // The cap is global (not per shard): 64 records whatever the shard count.
  memory_nonce_store s({.max_entries = 64, .shards = 16, .max_entries_per_hotkey = 4});
  // One flooding hotkey takes at most its quota; an honest newcomer is admitted.
  for (int i = 0; i < 200; ++i) s.record(mallory_hotkey, "m" + std::to_string(i), t0, t0, expiry);
  CHECK(s.size() == 4);
  CHECK(s.record(alice_hotkey, uuid, t0, t0, expiry) == nonce_verdict::accepted);
  // Many hotkeys (keys are free) together reach the global cap, and no more.
  int accepted = 0;
  for (int k = 0; k < 100; ++k)
    for (int i = 0; i < 4; ++i)
      accepted +=
          s.record(hotkey_n(k), "u" + std::to_string(i), t0, t0, expiry) == nonce_verdict::accepted;
  CHECK(accepted == 64 - 5);
  CHECK(s.size() == 64);
  // Then a new endpoint waits (503) rather than evicting someone's replay protection ...
  CHECK(s.record(hotkey_n(1000), uuid, t0, t0, expiry) == nonce_verdict::full);
  // ... while known endpoints keep working.
  CHECK(s.record(alice_hotkey, uuid, t0 + 1, t0, expiry) == nonce_verdict::accepted);
  // Once records expire, new ones are admitted again.
  const std::int64_t later = expiry + 1;
  CHECK(s.record(hotkey_n(1000), uuid, later, later, later + second) == nonce_verdict::accepted);
  CHECK(s.size() <= 64);
}

TEST_CASE("window slot budgets: past them windows stop growing, replays still refused",
          "[nonce_store]") {
  // Per hotkey: mallory's windows may bill 14 slots beyond the 2 every record has for free.
  memory_nonce_store s({.rule = nonce_rule::window,
                        .max_entries_per_hotkey = 0,
                        .window = 64,
                        .max_kept_nonces = 40,
                        .max_kept_nonces_per_hotkey = 14});
  for (int n = 1; n <= 100; ++n)  // one endpoint: its window grows to 16, then stops
    REQUIRE(s.record(mallory_hotkey, uuid, t0 + n, t0, expiry) == nonce_verdict::accepted);
  // Its floor rose with it: a reordered nonce below the 16 kept is stale, a replay of a kept
  // one is replayed, an unseen one inside is accepted.
  CHECK(s.record(mallory_hotkey, uuid, t0 + 84, t0, expiry) == nonce_verdict::stale);
  CHECK(s.record(mallory_hotkey, uuid, t0 + 90, t0, expiry) == nonce_verdict::replayed);
  CHECK(s.record(mallory_hotkey, uuid, t0 + 100, t0, expiry) == nonce_verdict::replayed);
  CHECK(s.record(mallory_hotkey, uuid, t0 + 150, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(mallory_hotkey, uuid, t0 + 120, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(mallory_hotkey, uuid, t0 + 120, t0, expiry) == nonce_verdict::replayed);
  // Every nonce 1..100 is now refused, whatever the order.
  for (int n = 1; n <= 100; ++n)
    CHECK(s.record(mallory_hotkey, uuid, t0 + n, t0, expiry) != nonce_verdict::accepted);
  // Others still get windows, until the global budget (40 billed slots) is spent ...
  for (int k = 0; k < 4; ++k)
    for (int n = 1; n <= 20; ++n)
      REQUIRE(s.record(hotkey_n(k), uuid, t0 + n, t0, expiry) == nonce_verdict::accepted);
  // ... after which a new endpoint is still admitted (its first slots are free) and reordering
  // within them works.
  CHECK(s.record(alice_hotkey, uuid, t0 + 2, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0 + 1, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, uuid, t0 + 1, t0, expiry) == nonce_verdict::replayed);
}

TEST_CASE("over-long uuids and hotkeys: fixed-size records, distinct endpoints stay distinct",
          "[nonce_store]") {
  memory_nonce_store s({.max_entries = 200'000, .max_entries_per_hotkey = 0});
  // 8 KiB uuids differing only in their last byte are different endpoints; the same one is the
  // same endpoint.
  std::string a(8192, 'u'), b(8192, 'u');
  b.back() = 'v';
  CHECK(s.record(alice_hotkey, a, t0, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, b, t0, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(alice_hotkey, a, t0, t0, expiry) == nonce_verdict::replayed);
  // Around the length where the store switches to hashing the uuid first.
  for (std::size_t len : {127, 128, 129, 130}) {
    const std::string u(len, 'x');
    CHECK(s.record(alice_hotkey, u, t0, t0, expiry) == nonce_verdict::accepted);
    CHECK(s.record(alice_hotkey, u, t0, t0, expiry) == nonce_verdict::replayed);
  }
  // The hotkey/uuid boundary is not ambiguous.
  CHECK(s.record("ab", "c", t0, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record("a", "bc", t0, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(std::string(5000, 'h'), a, t0, t0, expiry) == nonce_verdict::accepted);
  CHECK(s.record(std::string(5000, 'h'), a, t0, t0, expiry) == nonce_verdict::replayed);

  // Memory: 20,000 records with 8 KiB uuids would hold 160 MiB if the store kept the strings.
  // Kept as fixed-size hashes they take a few MiB (the bound is generous for sanitizer builds).
  const long before = rss_kib();
  // One buffer, rewritten in place: no allocation churn that a sanitizer's quarantine would count.
  std::string u(8192, 'a');
  for (int i = 0; i < 20'000; ++i) {
    std::snprintf(u.data(), 16, "%015d", i);
    REQUIRE(s.record(alice_hotkey, u, t0, t0, expiry) == nonce_verdict::accepted);
  }
  const long grown_kib = rss_kib() - before;
  INFO("RSS grew by " << grown_kib << " KiB");
  CHECK(grown_kib < 40 * 1024);
}

TEST_CASE("window: threads hammering shared and own endpoints, each nonce accepted once",
          "[nonce_store]") {
  memory_nonce_store s({.rule = nonce_rule::window, .shards = 4, .window = 64});
  constexpr int threads = 4, per_thread = 3000;
  // Every thread offers the same nonces for one shared endpoint (so each must be accepted by
  // exactly one thread), and its own increasing nonces for its own endpoint (all accepted).
  std::vector<std::vector<std::int64_t>> won(threads);
  std::atomic<int> own_refused{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::string own = hotkey_n(t);
      for (int i = 0; i < per_thread; ++i) {
        if (s.record(alice_hotkey, uuid, t0 + i, t0, expiry) == nonce_verdict::accepted)
          won[t].push_back(t0 + i);
        if (s.record(own, uuid, t0 + i, t0, expiry) != nonce_verdict::accepted) ++own_refused;
      }
    });
  for (auto& th : pool) th.join();
  std::map<std::int64_t, int> count;
  for (auto& w : won)
    for (auto n : w) ++count[n];
  std::size_t multiple = 0;
  for (auto& [n, c] : count) multiple += c > 1;
  CHECK(multiple == 0);      // no nonce accepted twice
  CHECK(count.size() >= 1);  // and the endpoint made progress
  CHECK(own_refused.load() == 0);
  CHECK(s.size() == threads + 1);
}
