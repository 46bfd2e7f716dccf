// Batch verification of request signatures (axon_options::verify_batch_max; the axon's
// state/verify_batcher.cpp). The batcher alone on an event loop of the test's: signatures
// submitted together are decided by one batch equation with each its own verdict, a forged one
// fails alone, and a loop destroyed before its drain discards every waiting submission (never
// completing it). Then a whole axon: requests whose bytes wait while the axon's one I/O thread is
// held by a gate request are verified together once it lets go (the batch counters say so); all
// pass, or, with one forged among them, only that one gets the 401 a lone forged request gets; and
// a stop while such requests wait for their verdict ends every connection with an answer or a
// close.
#include <bt/axon.hpp>

#include <bt/examples/dummy.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>
#include <bt/metrics.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "ops/axon_metrics.hpp"
#include "state/verify_batcher.hpp"
#include "support/dev_keys.hpp"
#include "support/dummy_request.hpp"
#include "support/python_client.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using bt::examples::dummy;
using namespace std::chrono_literals;

namespace {

/// A signature check of `message` by `signer`, valid unless `forged` (one bit of the signature
/// flipped: well formed, wrong).
bt::detail::signature_check check_of(const bt::keypair& signer, const std::string& message,
                                     bool forged = false) {
  bt::detail::signature_check c;
  c.key = signer.public_key();
  const auto sig = signer.sign(std::string_view(message));
  std::copy(sig.begin(), sig.end(), c.signature.begin());
  if (forged) c.signature[5] ^= 0x01;
  c.message = message;
  return c;
}

/// Verdicts by submission index: 1 valid, 0 invalid, -1 none yet; `discarded` counts discards.
struct verdicts {
  std::vector<int> valid;
  int discarded = 0;
  struct slot {
    verdicts* all;
    std::size_t i;
  };
  std::vector<std::unique_ptr<slot>> slots;

  bt::detail::verify_completion completion() {
    valid.push_back(-1);
    slots.push_back(std::make_unique<slot>(slot{this, valid.size() - 1}));
    return {[](void* arg, bool ok) noexcept {
              auto* s = static_cast<slot*>(arg);
              s->all->valid[s->i] = ok ? 1 : 0;
            },
            [](void* arg) noexcept { ++static_cast<slot*>(arg)->all->discarded; },
            slots.back().get()};
  }
};

/// The value of the sample `series` in the axon's metrics text, or -1.
double sample(bt::axon& ax, const std::string& series) {
  const std::string text = "\n" + ax.metrics().render();
  const std::string key = "\n" + series + " ";
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size(), text.find('\n', at + key.size())));
}

/// An axon with one I/O thread serving Dummy from a coroutine: an input of -1 is the gate, which
/// holds the I/O thread (it blocks, on purpose) until `release` is set, having said so through
/// `held`; any other input is doubled.
struct gated_axon {
  std::promise<void> held_p, release_p;
  std::shared_future<void> release = release_p.get_future().share();
  bt::axon ax;

  explicit gated_axon(bt::axon_options opt) : ax(bt::test::bob(), with_one_thread(std::move(opt))) {
    ax.attach<dummy>([this](dummy& s, const bt::request_context&) -> boost::asio::awaitable<void> {
      if (s.dummy_input == -1) {
        held_p.set_value();
        release.wait();
      }
      s.dummy_output = s.dummy_input * 2;
      co_return;
    });
    ax.start();
  }
  static bt::axon_options with_one_thread(bt::axon_options o) {
    o.io_threads = 1;
    return o;
  }
};

bt::test::request_parts numbered_request(std::uint16_t port, int i) {
  return bt::test::dummy_request(port, i,
                                 {.uuid = bt::test::test_uuid("batch " + std::to_string(i))});
}

std::string message_of(const bt::test::reply& r) {
  const auto j = bt::json::parse(r.body, nullptr, false);
  REQUIRE(j.is_object());
  return j.at("message").get<std::string>();
}

std::int64_t output_of(const bt::test::reply& r) {
  const auto j = bt::json::parse(r.body, nullptr, false);
  REQUIRE(j.is_object());
  return j.at("dummy_output").get<std::int64_t>();
}

/// `n` connections, each served one request first (so each is accepted and idle), then the gate
/// on a connection of its own; returns once the gate holds the I/O thread.
struct gated_clients {
  std::vector<std::unique_ptr<bt::test::raw_client>> clients;
  std::unique_ptr<bt::test::raw_client> gate;

  gated_clients(gated_axon& g, int n) {
    const std::uint16_t port = g.ax.port();
    for (int i = 0; i < n; ++i) {
      clients.push_back(std::make_unique<bt::test::raw_client>(port));
      clients.back()->send(numbered_request(port, 1000 + i).wire(port));
      REQUIRE(clients.back()->read().status == 200);
    }
    gate = std::make_unique<bt::test::raw_client>(port);
    gate->send(bt::test::dummy_request(port, -1, {.uuid = bt::test::test_uuid("gate")}).wire(port));
    REQUIRE(g.held_p.get_future().wait_for(10s) == std::future_status::ready);
  }
};

/// Items of one key in a batch that pays (batch_pays) even when the key is hot (every test key
/// may be: the key cache is the process's), for the tests that need a batch.
constexpr int one_key_batch = 40;
static_assert(bt::detail::verify_batcher::batch_pays(one_key_batch, 1, one_key_batch));

/// The batcher's counters, as the axon's metrics render them.
struct batch_counts {
  bt::metrics::registry reg;
  bt::detail::axon_metrics stats{reg};
  double of(const std::string& series) {
    const std::string text = "\n" + reg.render();
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }
  double batches() { return of("bt_axon_verify_batches_total"); }
  double in_batches() { return of("bt_axon_verified_in_batches_total"); }
};

}  // namespace

TEST_CASE("verify_batcher: signatures submitted together get each their own verdict",
          "[axon][verify_batch]") {
  bt::init_crypto();
  boost::asio::io_context loop(1);
  auto& batcher = bt::detail::verify_batcher::of(loop);
  batch_counts counts;
  verdicts v;
  const bool with_forgery = GENERATE(false, true);
  CAPTURE(with_forgery);
  const bt::keypair keys[] = {bt::test::alice(), bt::test::bob()};
  constexpr int n = 48;  // two keys: a batch that pays, hot or not
  static_assert(bt::detail::verify_batcher::batch_pays(n, 2, n));
  for (int i = 0; i < n; ++i)
    batcher.submit(check_of(keys[i % 2], "message " + std::to_string(i), with_forgery && i == 3),
                   64, &counts.stats, v.completion());
  CHECK(v.valid == std::vector<int>(n, -1));  // nothing decided inside submit()
  loop.run();
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(v.valid[i] == (with_forgery && i == 3 ? 0 : 1));
  }
  CHECK(v.discarded == 0);
  CHECK(counts.batches() == 1);  // one equation (which, with the forgery, failed and fell back)
  CHECK(counts.in_batches() == n);
}

TEST_CASE("verify_batcher: a lone signature is verified alone, and max_batch bounds a batch",
          "[axon][verify_batch]") {
  bt::init_crypto();
  boost::asio::io_context loop(1);
  auto& batcher = bt::detail::verify_batcher::of(loop);
  batch_counts counts;
  verdicts v;
  SECTION("one") {
    batcher.submit(check_of(bt::test::alice(), "alone"), 64, &counts.stats, v.completion());
    loop.run();
    CHECK(v.valid == std::vector<int>{1});
    CHECK(counts.batches() == 0);
  }
  SECTION("eighteen of one key, at most eight per batch: 8 + 8 in batches, the last 2 alone") {
    // A key of this section only, so not hot: a batch of 8 pays, 2 do not.
    const bt::keypair signer = bt::keypair::from_uri("//verify_batcher eighteen");
    static_assert(bt::detail::verify_batcher::batch_pays(8, 1, 0));
    static_assert(!bt::detail::verify_batcher::batch_pays(2, 1, 0));
    for (int i = 0; i < 18; ++i)
      batcher.submit(check_of(signer, "m" + std::to_string(i)), 8, &counts.stats, v.completion());
    loop.run();
    CHECK(v.valid == std::vector<int>(18, 1));
    CHECK(counts.batches() == 2);
    CHECK(counts.in_batches() == 16);
  }
  SECTION("groups too small for a batch equation to pay are verified one by one") {
    using bt::detail::verify_batcher;
    // The rule's boundaries (verify_batcher.hpp's cost model): other keys, then hot keys.
    CHECK_FALSE(verify_batcher::batch_pays(3, 1, 0));
    CHECK(verify_batcher::batch_pays(4, 1, 0));
    CHECK_FALSE(verify_batcher::batch_pays(3, 2, 0));
    CHECK(verify_batcher::batch_pays(4, 2, 0));
    CHECK_FALSE(verify_batcher::batch_pays(6, 6, 0));
    CHECK(verify_batcher::batch_pays(7, 7, 0));
    CHECK_FALSE(verify_batcher::batch_pays(29, 1, 29));
    CHECK(verify_batcher::batch_pays(30, 1, 30));
    CHECK_FALSE(verify_batcher::batch_pays(16, 16, 16));
    CHECK_FALSE(verify_batcher::batch_pays(64, 64, 64));
    CHECK(verify_batcher::batch_pays(8, 2, 4));  // half hot, half not
    CHECK_FALSE(verify_batcher::batch_pays(8, 2, 8));
    const auto run = [&] {
      loop.restart();
      loop.run();
    };
    // Keys of this section only.
    const bt::keypair three = bt::keypair::from_uri("//verify_batcher three");
    const bt::keypair four = bt::keypair::from_uri("//verify_batcher four");
    const bt::keypair hot = bt::keypair::from_uri("//verify_batcher hot");
    for (int i = 0; i < 3; ++i)  // three of one key: one by one, the forged one refused
      batcher.submit(check_of(three, "three " + std::to_string(i), i == 1), 64, &counts.stats,
                     v.completion());
    run();
    CHECK(v.valid == std::vector<int>{1, 0, 1});
    CHECK(counts.batches() == 0);
    for (int i = 0; i < 4; ++i)  // four of one key: one batch
      batcher.submit(check_of(four, "four " + std::to_string(i)), 64, &counts.stats,
                     v.completion());
    run();
    CHECK(v.valid == std::vector<int>{1, 0, 1, 1, 1, 1, 1});
    CHECK(counts.batches() == 1);
    CHECK(counts.in_batches() == 4);
    // A key verified alone until the cache holds it hot (bounded: it displaces the coldest hot
    // key once it has been looked up twice as often)...
    const auto& keys = verify_batcher::known_keys();
    for (int i = 0; i < 200 && !keys.is_hot(hot.public_key()); ++i) {
      batcher.submit(check_of(hot, "alone " + std::to_string(i)), 64, nullptr, v.completion());
      run();
    }
    REQUIRE(keys.is_hot(hot.public_key()));
    // ... then sixteen of it: its lone verifies are cheaper than a batch of 16, so one by one.
    const std::size_t before = v.valid.size();
    for (int i = 0; i < 16; ++i)
      batcher.submit(check_of(hot, "hot " + std::to_string(i)), 64, &counts.stats, v.completion());
    run();
    CHECK(std::vector<int>(v.valid.begin() + static_cast<std::ptrdiff_t>(before), v.valid.end()) ==
          std::vector<int>(16, 1));
    CHECK(counts.batches() == 1);
  }
}

TEST_CASE("verify_batcher: a key it has seen stays cached, and its next forgeries still fail",
          "[axon][verify_batch]") {
  bt::init_crypto();
  boost::asio::io_context loop(1);
  auto& batcher = bt::detail::verify_batcher::of(loop);
  const auto& keys = bt::detail::verify_batcher::known_keys();
  CHECK(keys.capacity() == bt::detail::verify_batcher::key_cache_capacity);
  // A key no other test signs with: the cache is the process's.
  const bt::keypair dave = bt::keypair::from_uri("//verify_batcher cache test");
  const auto dave_key = dave.public_key();
  verdicts v;
  const auto run = [&] {
    loop.restart();
    loop.run();
  };
  batcher.submit(check_of(dave, "first", true), 64, nullptr, v.completion());
  run();
  CHECK_FALSE(keys.contains(dave_key));  // a forgery enters nothing
  batcher.submit(check_of(dave, "second"), 64, nullptr, v.completion());
  run();
  CHECK(keys.contains(dave_key));
  batcher.submit(check_of(dave, "third"), 64, nullptr, v.completion());
  run();
  CHECK(keys.has_table(dave_key));
  // Lone and batched: a tampered message and a forged signature under the cached key fail.
  bt::detail::signature_check tampered = check_of(dave, "fourth");
  tampered.message += "!";
  batcher.submit(std::move(tampered), 64, nullptr, v.completion());
  run();
  // Not hot (its last lone verify failed, and a key is promoted only on a valid one): a batch
  // of 8 pays.
  CHECK_FALSE(keys.is_hot(dave_key));
  static_assert(bt::detail::verify_batcher::batch_pays(8, 1, 0));
  batch_counts counts;
  for (int i = 0; i < 8; ++i) {
    bt::detail::signature_check c = check_of(dave, "batched " + std::to_string(i), i == 2);
    if (i == 3) c.message[0] ^= 0x20;
    batcher.submit(std::move(c), 64, &counts.stats, v.completion());
  }
  run();
  CHECK(counts.batches() == 1);
  CHECK(v.valid == std::vector<int>{0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1});
}

TEST_CASE("verify_batcher: after a failed batch the next one is verified item by item",
          "[axon][verify_batch]") {
  bt::init_crypto();
  boost::asio::io_context loop(1);
  auto& batcher = bt::detail::verify_batcher::of(loop);
  batch_counts counts;
  verdicts v;
  const auto round = [&](int forged_at) {
    for (int i = 0; i < one_key_batch; ++i)
      batcher.submit(check_of(bt::test::bob(), "r" + std::to_string(i), i == forged_at), 64,
                     &counts.stats, v.completion());
    loop.restart();
    loop.run();
  };
  round(2);  // a batch, which fails: each item verified alone, only the forged one refused
  std::vector<int> expected(one_key_batch, 1);
  expected[2] = 0;
  CHECK(v.valid == expected);
  CHECK(counts.batches() == 1);
  round(-1);  // the penalty: item by item (no batch counted); all valid, so the penalty ends
  CHECK(counts.batches() == 1);
  round(-1);  // batched again
  CHECK(counts.batches() == 2);
  expected.resize(3 * one_key_batch, 1);
  CHECK(v.valid == expected);
}

TEST_CASE("verify_batcher: a loop destroyed before its drain discards the waiting submissions",
          "[axon][verify_batch]") {
  bt::init_crypto();
  verdicts v;
  {
    boost::asio::io_context loop(1);
    auto& batcher = bt::detail::verify_batcher::of(loop);
    for (int i = 0; i < 3; ++i)
      batcher.submit(check_of(bt::test::alice(), "never decided"), 64, nullptr, v.completion());
  }  // never run
  CHECK(v.discarded == 3);
  CHECK(v.valid == std::vector<int>(3, -1));
}

TEST_CASE("axon: signed requests waiting together are verified in one batch and all pass",
          "[axon][verify_batch]") {
  gated_axon g(bt::axon_options::loopback());
  const std::uint16_t port = g.ax.port();
  constexpr int n = one_key_batch;
  gated_clients c(g, n);
  const double batches_before = sample(g.ax, "bt_axon_verify_batches_total");
  // Every request is on the wire before the I/O thread is let go: they are read in one turn.
  for (int i = 0; i < n; ++i) c.clients[i]->send(numbered_request(port, i).wire(port));
  g.release_p.set_value();
  CHECK(c.gate->read().status == 200);
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const auto r = c.clients[i]->read();
    CHECK(r.status == 200);
    CHECK(output_of(r) == 2 * i);
  }
  CHECK(batches_before == 0);
  CHECK(sample(g.ax, "bt_axon_verify_batches_total") >= 1);
  CHECK(sample(g.ax, "bt_axon_verified_in_batches_total") >= 2);
  g.ax.stop();
}

TEST_CASE("axon: a forged request among honest ones waiting together: only it is refused",
          "[axon][verify_batch]") {
  gated_axon g(bt::axon_options::loopback());
  const std::uint16_t port = g.ax.port();
  constexpr int n = one_key_batch, forged = 5;  // one key: enough for a batch that pays
  gated_clients c(g, n);
  std::vector<bt::test::request_parts> reqs;
  for (int i = 0; i < n; ++i) reqs.push_back(numbered_request(port, i));
  std::string sig = *reqs[forged].find("bt_header_dendrite_signature");
  sig[10] = sig[10] == 'a' ? 'b' : 'a';  // well formed, wrong
  reqs[forged].set("bt_header_dendrite_signature", sig);
  for (int i = 0; i < n; ++i) c.clients[i]->send(reqs[i].wire(port));
  g.release_p.set_value();
  CHECK(c.gate->read().status == 200);
  std::string refusal;
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const auto r = c.clients[i]->read();
    if (i == forged) {
      CHECK(r.status == 401);
      refusal = message_of(r);
    } else {
      CHECK(r.status == 200);
      CHECK(output_of(r) == 2 * i);
    }
  }
  CHECK(refusal == "Not Verified with error: Signature mismatch with " +
                       reqs[forged].signed_message + " and " + sig);
  CHECK(sample(g.ax, "bt_axon_verify_batches_total") >= 1);
  g.ax.stop();

  // The same bytes to an axon that verifies each signature alone: the same answer.
  auto opt = bt::axon_options::loopback();
  opt.verify_batch_max = 1;
  bt::axon alone(bt::test::bob(), opt);
  alone.attach<dummy>([](dummy& s) { s.dummy_output = s.dummy_input * 2; });
  alone.start();
  const auto r = bt::test::roundtrip(alone.port(), reqs[forged].wire(port));
  CHECK(r.status == 401);
  CHECK(message_of(r) == refusal);
  CHECK(sample(alone, "bt_axon_verify_batches_total") == 0);
  alone.stop();
}

TEST_CASE("axon: stopping while signed requests wait for their verdict", "[axon][verify_batch]") {
  auto opt = bt::axon_options::loopback();
  opt.drain_timeout = std::chrono::milliseconds(0);
  gated_axon g(opt);
  const std::uint16_t port = g.ax.port();
  constexpr int n = 6;
  gated_clients c(g, n);
  for (int i = 0; i < n; ++i) c.clients[i]->send(numbered_request(port, i).wire(port));
  std::thread stopper([&] { g.ax.stop(); });
  std::this_thread::sleep_for(50ms);  // stop() is under way (its order against the release
                                      // varies; every order must end cleanly)
  g.release_p.set_value();
  stopper.join();
  // Each connection was answered (200) or closed; none hangs and nothing ran on freed memory
  // (the sanitizer build).
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const auto r = c.clients[i]->try_read(5000ms);
    if (r)
      CHECK(r->status == 200);
    else
      CHECK(c.clients[i]->last_error());
  }
  CHECK_FALSE(g.ax.running());
}
