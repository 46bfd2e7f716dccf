// bt::sr25519::key_cache against the single verifier bt::sr25519::verify: every verdict of the
// cache (a key seen for the first time, a cached key's point, a cached key's table) must equal
// verify()'s for the same input, so that the cache never makes a signature pass that verify()
// refuses. And the cache's own rules: a key enters only after a signature under it verified, so a
// key that does not decode is never cached; its table is built on its next valid signature; at
// most `capacity` keys, the least recently used evicted first; at most `hot_keys` keys with the
// larger table, the busiest, whose verdicts must equal verify()'s too.
#include <bt/sr25519_key_cache.hpp>

#include <bt/key_error.hpp>
#include <bt/keypair.hpp>
#include <bt/sr25519.hpp>
#include <bt/sr25519_batch.hpp>

#include <catch2/catch.hpp>
#include <support/sr25519_encodings.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using bt::test::bytes32;
using bt::test::edge_encodings;
using bt::test::with_r;
using bt::test::with_s;

struct signer {
  bt::sr25519::secret_key secret;
  bt::sr25519::public_key pub{};
};

signer make_signer(std::mt19937_64& rng) {
  bt::sr25519::mini_secret mini{};
  for (auto& b : mini) b = static_cast<std::uint8_t>(rng());
  signer s;
  s.secret = bt::sr25519::expand_mini_secret(mini);
  s.pub = bt::sr25519::to_public(s.secret);
  return s;
}

struct signed_message {
  bytes32 pub{};
  std::vector<std::uint8_t> msg;
  std::array<std::uint8_t, 64> sig{};
};

signed_message sign_message(const signer& s, std::mt19937_64& rng) {
  signed_message m;
  m.pub = s.pub;
  m.msg.resize(1 + rng() % 200);
  for (auto& b : m.msg) b = static_cast<std::uint8_t>(rng());
  m.sig = bt::sr25519::sign(s.secret, s.pub, m.msg);
  return m;
}

// The cache's verdict, which must be verify()'s.
std::error_code cached_verdict(bt::sr25519::key_cache& cache, const signed_message& m) {
  const std::error_code single = bt::sr25519::verify(m.pub, m.msg, m.sig);
  const std::error_code cached = cache.verify(m.pub, m.msg, m.sig);
  CHECK(cached == single);
  return cached;
}

// What a signature may be turned into: each must get verify()'s verdict from the cache.
std::vector<signed_message> spoiled_variants(const signed_message& m, std::mt19937_64& rng) {
  std::vector<signed_message> out;
  signed_message tampered = m;  // the message changed: a mismatch
  tampered.msg[rng() % tampered.msg.size()] ^= 0x01;
  out.push_back(tampered);
  signed_message flipped_s = m;  // s changed, still canonical: a mismatch
  flipped_s.sig[40] ^= 0x04;
  out.push_back(flipped_s);
  signed_message unmarked = m;  // the schnorrkel marker cleared: invalid_signature
  unmarked.sig[63] &= 0x7f;
  out.push_back(unmarked);
  for (const bytes32& e : edge_encodings()) {  // R replaced by an edge encoding
    signed_message r = m;
    r.sig = with_r(m.sig, e);
    out.push_back(r);
  }
  signed_message big_s = m;  // s >= l
  big_s.sig = with_s(m.sig, bt::test::group_l);
  out.push_back(big_s);
  return out;
}

}  // namespace

TEST_CASE("sr25519 key cache: every verdict equals verify's, before and after the key is cached",
          "[sr25519][key_cache]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0001ULL);
  bt::sr25519::key_cache cache(8);
  for (int k = 0; k < 4; ++k) {
    const signer s = make_signer(rng);
    // Unknown key: spoiled signatures first, so the key must not enter on them.
    const signed_message first = sign_message(s, rng);
    for (const signed_message& bad : spoiled_variants(first, rng))
      CHECK(cached_verdict(cache, bad));
    CHECK_FALSE(cache.contains(s.pub));
    // A valid signature enters the key (point only); the next valid one builds its table.
    CHECK_FALSE(cached_verdict(cache, first));
    CHECK(cache.contains(s.pub));
    CHECK_FALSE(cache.has_table(s.pub));
    const signed_message second = sign_message(s, rng);
    for (const signed_message& bad : spoiled_variants(second, rng))  // with the cached point
      CHECK(cached_verdict(cache, bad));
    CHECK_FALSE(cache.has_table(s.pub));
    CHECK_FALSE(cached_verdict(cache, second));
    CHECK(cache.has_table(s.pub));
    // With the table: valid ones pass, every spoiled one gets verify's error.
    for (int i = 0; i < 3; ++i) {
      const signed_message next = sign_message(s, rng);
      CHECK_FALSE(cached_verdict(cache, next));
      for (const signed_message& bad : spoiled_variants(next, rng))
        CHECK(cached_verdict(cache, bad));
    }
  }
}

TEST_CASE("sr25519 key cache: a cached key then a tampered message fails", "[sr25519][key_cache]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0002ULL);
  bt::sr25519::key_cache cache;
  const signer s = make_signer(rng);
  const signer other = make_signer(rng);
  const signed_message m = sign_message(s, rng);
  REQUIRE_FALSE(cache.verify(m.pub, m.msg, m.sig));
  REQUIRE_FALSE(cache.verify(m.pub, m.msg, m.sig));  // the same signature again: now the table
  REQUIRE(cache.has_table(s.pub));
  std::vector<std::uint8_t> tampered = m.msg;
  tampered.push_back(0);
  CHECK(cache.verify(m.pub, tampered, m.sig) == bt::key_errc::signature_mismatch);
  // Another key's signature over the same message, under the cached key: refused.
  const auto foreign = bt::sr25519::sign(other.secret, other.pub, m.msg);
  CHECK(cache.verify(m.pub, m.msg, foreign) == bt::key_errc::signature_mismatch);
  // The signing context is part of the message: another context is refused.
  CHECK(cache.verify(m.pub, m.msg, m.sig, "another context") == bt::key_errc::signature_mismatch);
}

TEST_CASE("sr25519 key cache: a key that does not decode is never cached", "[sr25519][key_cache]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0003ULL);
  bt::sr25519::key_cache cache;
  const signer s = make_signer(rng);
  const signed_message m = sign_message(s, rng);
  int refused = 0;
  for (const bytes32& e : edge_encodings()) {
    if (bt::sr25519::is_valid_public_key(e)) continue;
    ++refused;
    for (int i = 0; i < 2; ++i)  // twice: a second sighting changes nothing
      CHECK(cache.verify(e, m.msg, m.sig) == bt::sr25519::verify(e, m.msg, m.sig));
    CHECK(cache.verify(e, m.msg, m.sig) == bt::key_errc::invalid_public_key);
    CHECK_FALSE(cache.contains(e));
  }
  CHECK(refused > 10);
  CHECK(cache.size() == 0);
}

TEST_CASE("sr25519 key cache: least recently used keys are evicted beyond the capacity",
          "[sr25519][key_cache]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0004ULL);
  bt::sr25519::key_cache cache(2);
  CHECK(cache.capacity() == 2);
  const signer a = make_signer(rng);
  const signer b = make_signer(rng);
  const signer c = make_signer(rng);
  CHECK_FALSE(cached_verdict(cache, sign_message(a, rng)));
  CHECK_FALSE(cached_verdict(cache, sign_message(b, rng)));
  CHECK_FALSE(cached_verdict(cache, sign_message(a, rng)));  // a used last: b is the oldest
  CHECK(cache.has_table(a.pub));
  CHECK_FALSE(cached_verdict(cache, sign_message(c, rng)));
  CHECK(cache.size() == 2);
  CHECK(cache.contains(a.pub));
  CHECK_FALSE(cache.contains(b.pub));
  CHECK(cache.contains(c.pub));
  // An evicted key verifies as before and enters again (evicting a, now the oldest).
  CHECK_FALSE(cached_verdict(cache, sign_message(b, rng)));
  CHECK(cache.contains(b.pub));
  CHECK_FALSE(cache.contains(a.pub));
  // A cache of capacity 0 remembers nothing.
  bt::sr25519::key_cache none(0);
  CHECK_FALSE(cached_verdict(none, sign_message(a, rng)));
  CHECK_FALSE(cached_verdict(none, sign_message(a, rng)));
  CHECK(none.size() == 0);
}

TEST_CASE("sr25519 key cache: batches with cached keys give each item verify's verdict",
          "[sr25519][key_cache]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0005ULL);
  bt::sr25519::key_cache cache(3);
  std::vector<signer> signers;
  for (int i = 0; i < 5; ++i) signers.push_back(make_signer(rng));
  for (int round = 0; round < 6; ++round) {
    std::vector<signed_message> msgs;
    for (int i = 0; i < 12; ++i) msgs.push_back(sign_message(signers[rng() % signers.size()], rng));
    if (round % 2 == 1) {  // a spoiled item: the batch falls back, each keeps its own verdict
      const auto bad = spoiled_variants(msgs[3], rng);
      msgs[3] = bad[rng() % bad.size()];
    }
    if (round == 4) msgs[5].pub = edge_encodings()[2];  // a key that does not decode
    std::vector<bt::sr25519::batch_item> items;
    for (const signed_message& m : msgs) items.push_back({m.pub, m.msg, m.sig});
    std::vector<std::error_code> results(items.size());
    cache.verify_each_with_batch(items, results);
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      CAPTURE(round, i);
      CHECK(results[i] == bt::sr25519::verify(msgs[i].pub, msgs[i].msg, msgs[i].sig));
    }
    CHECK(cache.size() <= 3);
    CHECK_FALSE(cache.contains(edge_encodings()[2]));
  }
  CHECK(cache.size() == 3);
}

TEST_CASE("sr25519 key cache: threads verifying at once through a small cache",
          "[sr25519][key_cache]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0006ULL);
  bt::sr25519::key_cache cache(2);  // smaller than the keys in use: constant eviction
  std::vector<signer> signers;
  for (int i = 0; i < 4; ++i) signers.push_back(make_signer(rng));
  std::vector<signed_message> msgs;
  for (int i = 0; i < 16; ++i) msgs.push_back(sign_message(signers[i % 4], rng));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 6; ++round)
        for (std::size_t i = 0; i < msgs.size(); ++i) {
          signed_message m = msgs[(i + static_cast<std::size_t>(t)) % msgs.size()];
          const bool spoil = (i + static_cast<std::size_t>(round)) % 5 == 0;
          if (spoil) m.msg[0] ^= 0x80;
          if (bool(cache.verify(m.pub, m.msg, m.sig)) != spoil)
            ++wrong[static_cast<std::size_t>(t)];
        }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == std::vector<int>(4, 0));
  CHECK(cache.size() <= 2);
}

TEST_CASE("sr25519 key cache: the identity as a public key, cached with its table",
          "[sr25519][key_cache]") {
  // The identity is a valid key (schnorrkel accepts it) whose signatures anyone can make: the
  // cache may hold it, and its table must still give verify's verdicts.
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0007ULL);
  signer zero;
  zero.secret.scalar.fill(0);
  for (auto& b : zero.secret.nonce) b = static_cast<std::uint8_t>(rng());
  zero.pub = bt::sr25519::to_public(zero.secret);
  REQUIRE(zero.pub == bytes32{});
  bt::sr25519::key_cache cache;
  for (int i = 0; i < 4; ++i) {
    const signed_message m = sign_message(zero, rng);
    CHECK_FALSE(cached_verdict(cache, m));
    // k·A is the identity whatever k is, so a changed message still verifies: only agreement
    // with verify() is asserted (inside cached_verdict).
    for (const signed_message& other : spoiled_variants(m, rng)) (void)cached_verdict(cache, other);
  }
  CHECK(cache.has_table(zero.pub));
}

namespace {

// Makes `s`'s key hot in `cache`: valid signatures until is_hot (the first enters the key, the
// second builds its comb table, the third its hot table while hot places are free).
void warm_until_hot(bt::sr25519::key_cache& cache, const signer& s, std::mt19937_64& rng) {
  for (int i = 0; i < 3; ++i) CHECK_FALSE(cached_verdict(cache, sign_message(s, rng)));
}

}  // namespace

TEST_CASE(
    "sr25519 key cache: a hot key's verdicts equal verify's over valid, spoiled and forged "
    "signatures",
    "[sr25519][key_cache][hot]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0008ULL);
  bt::sr25519::key_cache cache;
  const signer s = make_signer(rng);
  const signer other = make_signer(rng);
  warm_until_hot(cache, s, rng);
  REQUIRE(cache.is_hot(s.pub));
  for (int i = 0; i < 8; ++i) {
    const signed_message next = sign_message(s, rng);
    CHECK_FALSE(cached_verdict(cache, next));
    for (const signed_message& bad : spoiled_variants(next, rng)) CHECK(cached_verdict(cache, bad));
    // Forged: another key's signature of the same message, and R taken from another signature.
    signed_message forged = next;
    forged.sig = bt::sr25519::sign(other.secret, other.pub, next.msg);
    CHECK(cached_verdict(cache, forged) == bt::key_errc::signature_mismatch);
    signed_message spliced = next;
    const signed_message donor = sign_message(s, rng);
    std::copy(donor.sig.begin(), donor.sig.begin() + 32, spliced.sig.begin());
    CHECK(cached_verdict(cache, spliced) == bt::key_errc::signature_mismatch);
    // Random bytes as a signature, the marker set so that R and s are what is checked.
    signed_message noise = next;
    for (auto& b : noise.sig) b = static_cast<std::uint8_t>(rng());
    noise.sig[63] = static_cast<std::uint8_t>((noise.sig[63] & 0x0f) | 0x80);
    CHECK(cached_verdict(cache, noise));
  }
  CHECK(cache.is_hot(s.pub));
}

TEST_CASE("sr25519 key cache: hot places are bounded, and a much busier key displaces the coldest",
          "[sr25519][key_cache][hot]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'0009ULL);
  bt::sr25519::key_cache cache(64);
  constexpr std::size_t hot = bt::sr25519::key_cache::hot_keys;
  std::vector<signer> signers;
  for (std::size_t i = 0; i <= hot; ++i) signers.push_back(make_signer(rng));
  for (const signer& s : signers) warm_until_hot(cache, s, rng);
  CHECK(cache.hot_count() == hot);
  for (std::size_t i = 0; i < hot; ++i) CHECK(cache.is_hot(signers[i].pub));
  const signer& late = signers[hot];
  CHECK_FALSE(cache.is_hot(late.pub));
  CHECK(cache.has_table(late.pub));
  // Not yet much busier than the hot keys: a few more lookups leave the late key cold.
  for (int i = 0; i < 2; ++i) CHECK_FALSE(cached_verdict(cache, sign_message(late, rng)));
  CHECK_FALSE(cache.is_hot(late.pub));
  // Looked up more than twice as often as the coldest hot key (2 lookups each), it is promoted
  // within 16 more lookups and one hot key is demoted to its comb table.
  for (int i = 0; i < 16 && !cache.is_hot(late.pub); ++i)
    CHECK_FALSE(cached_verdict(cache, sign_message(late, rng)));
  CHECK(cache.is_hot(late.pub));
  CHECK(cache.hot_count() == hot);
  std::size_t demoted = 0;
  for (std::size_t i = 0; i < hot; ++i) {
    if (cache.is_hot(signers[i].pub)) continue;
    ++demoted;
    CHECK(cache.has_table(signers[i].pub));
    // The demoted key still gets verify's verdicts, valid and spoiled.
    const signed_message m = sign_message(signers[i], rng);
    CHECK_FALSE(cached_verdict(cache, m));
    for (const signed_message& bad : spoiled_variants(m, rng)) CHECK(cached_verdict(cache, bad));
  }
  CHECK(demoted == 1);
}

TEST_CASE("sr25519 key cache: an evicted hot key frees its hot place",
          "[sr25519][key_cache][hot]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'000aULL);
  bt::sr25519::key_cache cache(2);
  std::vector<signer> signers;
  for (int i = 0; i < 3; ++i) signers.push_back(make_signer(rng));
  warm_until_hot(cache, signers[0], rng);
  warm_until_hot(cache, signers[1], rng);
  CHECK(cache.hot_count() == 2);
  CHECK_FALSE(cached_verdict(cache, sign_message(signers[2], rng)));  // evicts signers[0]
  CHECK_FALSE(cache.contains(signers[0].pub));
  CHECK(cache.hot_count() == 1);
  warm_until_hot(cache, signers[2], rng);
  CHECK(cache.is_hot(signers[2].pub));
  CHECK(cache.hot_count() <= cache.size());
}

TEST_CASE("sr25519 key cache: threads promoting and demoting hot keys at once",
          "[sr25519][key_cache][hot]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xcac4e'000bULL);
  bt::sr25519::key_cache cache(32);
  constexpr std::size_t keys = bt::sr25519::key_cache::hot_keys + 4;
  std::vector<signer> signers;
  for (std::size_t i = 0; i < keys; ++i) signers.push_back(make_signer(rng));
  std::vector<signed_message> msgs;
  for (std::size_t i = 0; i < 4 * keys; ++i) msgs.push_back(sign_message(signers[i % keys], rng));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      // Each thread favours different keys, so the busiest keys change as the threads run.
      for (int round = 0; round < 6; ++round)
        for (std::size_t i = 0; i < msgs.size(); ++i) {
          const std::size_t at =
              (i * (static_cast<std::size_t>(t) + 1) + static_cast<std::size_t>(round)) %
              msgs.size();
          signed_message m = msgs[at];
          const bool spoil = (i + static_cast<std::size_t>(round)) % 7 == 0;
          if (spoil) m.sig[40] ^= 0x02;
          if (bool(cache.verify(m.pub, m.msg, m.sig)) != spoil)
            ++wrong[static_cast<std::size_t>(t)];
        }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == std::vector<int>(4, 0));
  CHECK(cache.hot_count() <= bt::sr25519::key_cache::hot_keys);
  std::size_t hot_seen = 0;
  for (const signer& s : signers) hot_seen += cache.is_hot(s.pub) ? 1 : 0;
  CHECK(hot_seen == cache.hot_count());
}
