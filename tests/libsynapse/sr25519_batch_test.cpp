// bt::sr25519::verify_batch and verify_each_with_batch against the single verifier
// bt::sr25519::verify, item by item: every per-item result of verify_each_with_batch must equal
// verify()'s, and verify_batch must return what its contract derives from those (all valid: {};
// a malformed item: the first one's error; otherwise signature_mismatch). verify_batch has no
// fallback, so it shows that the batch equation itself decides; verify_each_with_batch shows that
// its fallback gives honest items their verdict. Inputs come from a fixed seed (signing draws
// fresh randomness, so signatures differ between runs, but every class of input is made each
// run). Bounded: a few thousand signatures, a few seconds in a Debug ASan build.
#include <bt/sr25519_batch.hpp>

#include <bt/hex.hpp>
#include <bt/key_error.hpp>
#include <bt/keypair.hpp>
#include <bt/sr25519.hpp>

#include <sodium.h>
#include <catch2/catch.hpp>
#include <support/bytes.hpp>
#include <support/sr25519_encodings.hpp>
#include <support/vectors.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using bt::test::add_256;
using bt::test::bytes32;
using bt::test::edge_encodings;
using bt::test::group_l;
using bt::test::non_canonical_variants;
using bt::test::small_256;
using bt::test::sub_256;
using bt::test::with_r;
using bt::test::with_s;

// One item's bytes, owned; the signature is a vector so that a wrong length can be tried.
struct owned_item {
  bytes32 pub{};
  std::vector<std::uint8_t> msg;
  std::vector<std::uint8_t> sig;
};

struct batch_signer {
  bt::sr25519::secret_key secret;
  bt::sr25519::public_key pub{};
};

std::vector<batch_signer> make_batch_signers(std::mt19937_64& rng, std::size_t n) {
  std::vector<batch_signer> out(n);
  for (batch_signer& s : out) {
    bt::sr25519::mini_secret mini{};
    for (auto& b : mini) b = static_cast<std::uint8_t>(rng());
    s.secret = bt::sr25519::expand_mini_secret(mini);
    s.pub = bt::sr25519::to_public(s.secret);
  }
  return out;
}

owned_item sign_batch_item(const batch_signer& signer, std::mt19937_64& rng,
                           std::string_view context = bt::sr25519::substrate_context) {
  owned_item item;
  item.pub = signer.pub;
  item.msg.resize(rng() % 180);
  for (auto& b : item.msg) b = static_cast<std::uint8_t>(rng());
  const auto sig = bt::sr25519::sign(signer.secret, signer.pub, item.msg, context);
  item.sig.assign(sig.begin(), sig.end());
  return item;
}

std::array<std::uint8_t, 64> sig_array(const owned_item& item) {
  std::array<std::uint8_t, 64> a{};
  REQUIRE(item.sig.size() == 64);
  std::copy(item.sig.begin(), item.sig.end(), a.begin());
  return a;
}
void set_sig(owned_item& item, const std::array<std::uint8_t, 64>& sig) {
  item.sig.assign(sig.begin(), sig.end());
}
bytes32 r_of(const owned_item& item) {
  bytes32 r{};
  std::copy(item.sig.begin(), item.sig.begin() + 32, r.begin());
  return r;
}
bytes32 s_of(const owned_item& item) {
  bytes32 s{};
  std::copy(item.sig.begin() + 32, item.sig.begin() + 64, s.begin());
  s[31] &= 0x7f;
  return s;
}

// The ways an item is spoiled; `other` is a valid item of another key (or message).
enum class spoil {
  message_bit,    // signature_mismatch
  s_plus_one,     // signature_mismatch (s + 1 stays canonical)
  r_other_point,  // R replaced by a valid point: signature_mismatch
  r_bit,          // one bit of R: mostly invalid_signature (not an encoding)
  a_other_key,    // signature_mismatch
  a_bit,          // one bit of A: mostly invalid_public_key
  marker_cleared,
  s_is_l,
  short_signature,
};
constexpr std::array<spoil, 9> every_spoil = {
    spoil::message_bit,    spoil::s_plus_one,  spoil::r_other_point,
    spoil::r_bit,          spoil::a_other_key, spoil::a_bit,
    spoil::marker_cleared, spoil::s_is_l,      spoil::short_signature};

owned_item spoiled(owned_item item, spoil how, const owned_item& other, std::mt19937_64& rng) {
  switch (how) {
    case spoil::message_bit:
      if (item.msg.empty()) item.msg.push_back(0);
      item.msg[rng() % item.msg.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      break;
    case spoil::s_plus_one:
      set_sig(item, with_s(sig_array(item), add_256(s_of(item), small_256(1))));
      break;
    case spoil::r_other_point:
      set_sig(item, with_r(sig_array(item), r_of(other)));
      break;
    case spoil::r_bit:
      item.sig[rng() % 32] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      break;
    case spoil::a_other_key:
      item.pub = other.pub;
      break;
    case spoil::a_bit:
      item.pub[rng() % 32] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      break;
    case spoil::marker_cleared:
      item.sig[63] &= 0x7f;
      break;
    case spoil::s_is_l:
      set_sig(item, with_s(sig_array(item), group_l));
      break;
    case spoil::short_signature:
      item.sig.pop_back();
      break;
  }
  return item;
}

std::vector<bt::sr25519::batch_item> batch_views(const std::vector<owned_item>& items) {
  std::vector<bt::sr25519::batch_item> views;
  views.reserve(items.size());
  for (const owned_item& item : items) views.push_back({item.pub, item.msg, item.sig});
  return views;
}

std::string verdict_name(std::error_code ec) {
  return ec ? ec.message() : std::string("valid");
}

// What verify_batch must return, given verify()'s verdict on each item (its header's contract).
std::error_code expected_batch_verdict(const std::vector<std::error_code>& singles) {
  for (const std::error_code& ec : singles)
    if (ec && ec != bt::key_errc::signature_mismatch) return ec;
  for (const std::error_code& ec : singles)
    if (ec) return ec;
  return {};
}

struct verdict_tally {
  int valid = 0;
  int mismatch = 0;
  int invalid_signature = 0;
  int invalid_public_key = 0;
};

// Both batch functions against verify() on every item; returns verify()'s verdicts.
std::vector<std::error_code> check_against_single(
    const std::vector<owned_item>& items, const std::string& what, verdict_tally* tally = nullptr,
    std::string_view context = bt::sr25519::substrate_context) {
  const auto views = batch_views(items);
  std::vector<std::error_code> singles;
  for (const owned_item& item : items)
    singles.push_back(bt::sr25519::verify(item.pub, item.msg, item.sig, context));
  std::vector<std::error_code> results(items.size(), make_error_code(std::errc::io_error));
  bt::sr25519::verify_each_with_batch(views, results, context);
  INFO(what << ", " << items.size() << " items");
  for (std::size_t i = 0; i < items.size(); ++i) {
    INFO("item " << i << ": verify " << verdict_name(singles[i]) << ", batch "
                 << verdict_name(results[i]));
    CHECK(results[i] == singles[i]);
    if (tally == nullptr) continue;
    if (!singles[i]) ++tally->valid;
    if (singles[i] == bt::key_errc::signature_mismatch) ++tally->mismatch;
    if (singles[i] == bt::key_errc::invalid_signature) ++tally->invalid_signature;
    if (singles[i] == bt::key_errc::invalid_public_key) ++tally->invalid_public_key;
  }
  CHECK(verdict_name(bt::sr25519::verify_batch(views, context)) ==
        verdict_name(expected_batch_verdict(singles)));
  return singles;
}

// n valid items over `keys` signers, round robin.
std::vector<owned_item> valid_batch(const std::vector<batch_signer>& signers, std::size_t n,
                                    std::mt19937_64& rng) {
  std::vector<owned_item> items;
  for (std::size_t i = 0; i < n; ++i)
    items.push_back(sign_batch_item(signers[i % signers.size()], rng));
  return items;
}

}  // namespace

TEST_CASE("sr25519 batch: valid batches of every size verify, with distinct and repeated keys",
          "[sr25519][batch]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xba7c'0001ULL);
  const auto distinct = make_batch_signers(rng, 257);
  const auto few = make_batch_signers(rng, 3);
  const auto one = make_batch_signers(rng, 1);
  for (const std::size_t n : {1, 2, 3, 16, 64, 257}) {
    for (const auto* signers : {&distinct, &few, &one}) {
      const auto items = valid_batch(*signers, n, rng);
      const std::string what = "valid, " + std::to_string(signers->size()) + " keys";
      INFO(what << ", " << n << " items");
      CHECK_FALSE(bt::sr25519::verify_batch(batch_views(items)));
      verdict_tally tally;
      check_against_single(items, what, &tally);
      CHECK(tally.valid == static_cast<int>(n));
    }
  }
  // The empty batch is all valid.
  CHECK_FALSE(bt::sr25519::verify_batch({}));
  std::vector<std::error_code> none;
  bt::sr25519::verify_each_with_batch({}, none);
}

TEST_CASE("sr25519 batch: one spoiled item at each position gets verify's verdict",
          "[sr25519][batch]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xba7c'0002ULL);
  const auto signers = make_batch_signers(rng, 20);
  const auto stranger = make_batch_signers(rng, 1);
  verdict_tally tally;
  for (const std::size_t n : {2, 3, 16}) {
    const auto items = valid_batch(signers, n, rng);
    const owned_item other = sign_batch_item(stranger[0], rng);
    for (const spoil how : every_spoil) {
      for (std::size_t pos = 0; pos < n; ++pos) {
        auto batch = items;
        batch[pos] = spoiled(batch[pos], how, other, rng);
        const auto singles = check_against_single(
            batch, "spoil " + std::to_string(static_cast<int>(how)) + " at " + std::to_string(pos),
            &tally);
        CHECK(singles[pos]);  // the spoiled one fails alone
      }
    }
  }
  // 64 items (two keys), spoiled at the ends and the middle.
  const auto pair = make_batch_signers(rng, 2);
  const auto items = valid_batch(pair, 64, rng);
  const owned_item other = sign_batch_item(stranger[0], rng);
  for (const spoil how : every_spoil) {
    for (const std::size_t pos : {0, 31, 63}) {
      auto batch = items;
      batch[pos] = spoiled(batch[pos], how, other, rng);
      check_against_single(batch, "64 items, spoil at " + std::to_string(pos), &tally);
    }
  }
  // Every verdict was reached.
  CHECK(tally.mismatch > 100);
  CHECK(tally.invalid_signature > 80);
  CHECK(tally.invalid_public_key > 10);
  CHECK(tally.valid > 1000);
}

TEST_CASE("sr25519 batch: mixed batches of valid and spoiled items", "[sr25519][batch]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xba7c'0003ULL);
  const auto signers = make_batch_signers(rng, 6);
  const auto distinct = make_batch_signers(rng, 40);
  verdict_tally tally;
  for (int round = 0; round < 60; ++round) {
    const auto& pool = round % 2 == 0 ? signers : distinct;
    const std::size_t n = 2 + rng() % 39;
    auto items = valid_batch(pool, n, rng);
    const owned_item other = sign_batch_item(pool[rng() % pool.size()], rng);
    for (auto& item : items)
      if (rng() % 10 < 3) item = spoiled(item, every_spoil[rng() % every_spoil.size()], other, rng);
    check_against_single(items, "mixed round " + std::to_string(round), &tally);
  }
  CHECK(tally.valid > 300);
  CHECK(tally.mismatch > 30);
  CHECK(tally.invalid_signature > 30);
}

TEST_CASE("sr25519 batch: repeated keys and repeated items", "[sr25519][batch]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xba7c'0004ULL);
  const auto signers = make_batch_signers(rng, 3);
  const owned_item item = sign_batch_item(signers[0], rng);
  const owned_item other = sign_batch_item(signers[1], rng);

  // The same item 16 times: valid; with one copy spoiled in each way: that copy alone fails.
  const std::vector<owned_item> same(16, item);
  CHECK_FALSE(bt::sr25519::verify_batch(batch_views(same)));
  check_against_single(same, "same item x16");
  for (const spoil how : every_spoil) {
    auto batch = same;
    batch[7] = spoiled(batch[7], how, other, rng);
    const auto singles = check_against_single(batch, "same item x16, one spoiled");
    CHECK(singles[7]);
  }
  // One key, 64 messages, one signature moved to another message (a mismatch under that key).
  auto one_key = valid_batch({signers[2]}, 64, rng);
  one_key[40].sig = one_key[41].sig;
  const auto singles = check_against_single(one_key, "one key x64, signature moved");
  CHECK(singles[40] == bt::key_errc::signature_mismatch);
  CHECK_FALSE(singles[41]);

  // Two errors that cancel without the weights: s_1 + 1 and s_2 − 1 under the same key leave
  // Σ s_i unchanged, so an unweighted sum would accept both; the batch must not.
  for (int round = 0; round < 8; ++round) {
    auto pair = valid_batch({signers[0]}, 2, rng);
    const bytes32 s0 = s_of(pair[0]);
    const bytes32 s1 = s_of(pair[1]);
    // Keep both canonical: s_0 + 1 < l and s_1 − 1 >= 0 (fails with probability ~2^-250).
    if (s0 == sub_256(group_l, small_256(1)) || s1 == bytes32{}) continue;
    set_sig(pair[0], with_s(sig_array(pair[0]), add_256(s0, small_256(1))));
    set_sig(pair[1], with_s(sig_array(pair[1]), sub_256(s1, small_256(1))));
    CHECK(bt::sr25519::verify_batch(batch_views(pair)) == bt::key_errc::signature_mismatch);
    check_against_single(pair, "cancelling s errors");
  }
}

TEST_CASE("sr25519 batch: small-order, non-canonical and identity encodings as A and R",
          "[sr25519][batch]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xba7c'0005ULL);
  const auto signers = make_batch_signers(rng, 4);
  const auto edges = edge_encodings();
  verdict_tally tally;
  for (std::size_t e = 0; e < edges.size(); ++e) {
    auto items = valid_batch(signers, 5, rng);
    const std::size_t pos = e % items.size();
    auto as_a = items;
    as_a[pos].pub = edges[e];
    check_against_single(as_a, "edge A " + bt::to_hex(edges[e]), &tally);
    auto as_r = items;
    set_sig(as_r[pos], with_r(sig_array(as_r[pos]), edges[e]));
    check_against_single(as_r, "edge R " + bt::to_hex(edges[e]), &tally);
  }
  for (int round = 0; round < 6; ++round) {
    const auto items = valid_batch(signers, 4, rng);
    for (const bytes32& v : non_canonical_variants(r_of(items[1]))) {
      auto batch = items;
      set_sig(batch[1], with_r(sig_array(batch[1]), v));
      check_against_single(batch, "non-canonical R", &tally);
    }
    for (const bytes32& v : non_canonical_variants(items[2].pub)) {
      auto batch = items;
      batch[2].pub = v;
      check_against_single(batch, "non-canonical A", &tally);
    }
  }

  // The identity as A (schnorrkel accepts it): (R = s·B, s) verifies for any message, and so
  // does (R = identity, s = 0). In a batch with ordinary items, and spoiled.
  const bytes32 identity{};
  std::vector<owned_item> with_identity = valid_batch(signers, 6, rng);
  for (int j = 0; j < 3; ++j) {
    owned_item item;
    item.pub = identity;
    item.msg.assign(static_cast<std::size_t>(j) * 7, static_cast<std::uint8_t>(j));
    bytes32 s{};
    crypto_core_ristretto255_scalar_random(s.data());
    bytes32 r{};
    REQUIRE(crypto_scalarmult_ristretto255_base(r.data(), s.data()) == 0);
    set_sig(item, with_s(with_r({}, r), s));
    with_identity.push_back(item);
  }
  owned_item zero;
  zero.pub = identity;
  set_sig(zero, with_s(with_r({}, identity), bytes32{}));
  with_identity.push_back(zero);
  const auto singles = check_against_single(with_identity, "identity A", &tally);
  for (const auto& ec : singles) CHECK_FALSE(ec);
  CHECK_FALSE(bt::sr25519::verify_batch(batch_views(with_identity)));
  auto forged = with_identity;
  set_sig(forged[7], with_s(sig_array(forged[7]), add_256(s_of(forged[7]), small_256(1))));
  CHECK(check_against_single(forged, "identity A, s + 1")[7] == bt::key_errc::signature_mismatch);

  CHECK(tally.invalid_public_key > 20);
  CHECK(tally.invalid_signature > 20);
  CHECK(tally.mismatch > 0);
}

TEST_CASE("sr25519 batch: the cases of sr25519_signatures.json in one batch", "[sr25519][batch]") {
  bt::init_crypto();
  const auto v = bt::test::load_vectors("sr25519_signatures.json");
  REQUIRE(v.at("cases").size() >= 20);
  std::vector<owned_item> all;
  std::vector<owned_item> valid;
  for (const auto& c : v.at("cases")) {
    owned_item item;
    item.pub = bt::test::hex_n<32>(c.at("public_hex"));
    const auto msg = c.at("message_utf8").get<std::string>();
    item.msg.assign(msg.begin(), msg.end());
    item.sig = bt::test::hex(c.at("signature_hex"));
    all.push_back(item);
    if (c.at("valid").get<bool>()) valid.push_back(item);
  }
  REQUIRE(valid.size() == 6);
  verdict_tally tally;
  check_against_single(all, "every vector", &tally);
  CHECK(tally.valid == 6);
  CHECK(tally.mismatch > 0);
  CHECK(tally.invalid_signature > 0);
  CHECK(tally.invalid_public_key > 0);
  CHECK_FALSE(bt::sr25519::verify_batch(batch_views(valid)));
  check_against_single(valid, "the valid vectors");
}

TEST_CASE("sr25519 batch: the signing context, and results of the wrong size", "[sr25519][batch]") {
  bt::init_crypto();
  std::mt19937_64 rng(0xba7c'0006ULL);
  const auto signers = make_batch_signers(rng, 5);
  std::vector<owned_item> items;
  for (std::size_t i = 0; i < 10; ++i)
    items.push_back(sign_batch_item(signers[i % signers.size()], rng, "other-context"));
  const auto views = batch_views(items);
  CHECK_FALSE(bt::sr25519::verify_batch(views, "other-context"));
  check_against_single(items, "other context", nullptr, "other-context");
  CHECK(bt::sr25519::verify_batch(views) == bt::key_errc::signature_mismatch);
  verdict_tally tally;
  check_against_single(items, "other context checked as substrate", &tally);
  CHECK(tally.mismatch == 10);

  std::vector<std::error_code> short_results(items.size() - 1);
  bt::sr25519::verify_each_with_batch(views, short_results, "other-context");
  for (const auto& ec : short_results) CHECK(ec == std::errc::invalid_argument);
}
