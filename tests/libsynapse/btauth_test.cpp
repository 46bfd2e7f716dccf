// btauth/1: the signed payload, signing, and each verification step with its failure class.
#include <bt/btauth.hpp>
#include <bt/detail/text.hpp>
#include <bt/hex.hpp>
#include <bt/request_nonce.hpp>
#include <bt/sha256.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/dev_keys.hpp"

using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;
namespace ba = bt::btauth;

namespace {

constexpr std::int64_t t0 = 1'700'000'000'123'456'789;

/// The headers of `h` as a receiver collects them.
ba::header_fields fields_of(const ba::request_headers& h) {
  ba::header_fields f;
  f.feed("X-Bittensor-Version", "1");
  f.feed("X-Bittensor-Hotkey", h.hotkey);
  f.feed("X-Bittensor-Nonce", h.nonce);
  f.feed("X-Bittensor-Signature", h.signature);
  if (!h.crypto.empty()) f.feed("X-Bittensor-Crypto", h.crypto);
  if (!h.receiver.empty()) f.feed("X-Bittensor-Receiver", h.receiver);
  return f;
}

ba::policy bob_policy() {
  ba::policy p;
  p.self_hotkey = bob().ss58_address();
  return p;
}

/// The failure class of the whole verification (head, then signature) of a POST /forward.
std::optional<ba::failure> verdict(const ba::header_fields& f, std::string_view body,
                                   std::int64_t now = t0, const ba::policy& p = bob_policy(),
                                   std::string_view method = "POST",
                                   std::string_view target = "/forward") {
  ba::claim c;
  if (auto r = ba::check_head(f, now, p, c)) {
    CHECK(r->why.starts_with(ba::class_name(r->kind)));
    return r->kind;
  }
  std::string scratch;
  if (auto r = ba::check_signature(f, c, method, target, body, scratch)) {
    CHECK(r->why.starts_with(ba::class_name(r->kind)));
    return r->kind;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("btauth: the signed payload, byte for byte", "[btauth]") {
  // sha256("{}"), and the dev keys' addresses, as any implementation computes them.
  const std::string expected =
      "btauth/1\nsr25519\nPOST\n/forward?x=1&y=2\n"
      "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\n"
      "1700000000123456789\n"
      "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY\n"
      "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty";
  CHECK(ba::build_payload(bt::crypto_type::sr25519, "post", "/forward?x=1&y=2",
                          bt::sha256_hex("{}"), t0, alice().ss58_address(),
                          bob().ss58_address()) == expected);
  // Unbound: the receiver line is "-"; the scheme line names ed25519.
  const std::string unbound =
      ba::build_payload(bt::crypto_type::ed25519, "GET", "/", "ab", 5, alice().ss58_address(), {});
  CHECK(unbound == "btauth/1\ned25519\nGET\n/\nab\n5\n" + alice().ss58_address() + "\n-");
}

TEST_CASE("btauth: a signed request verifies, sr25519 and ed25519", "[btauth]") {
  const std::string body = R"({"x":1})";
  const auto h = ba::sign_request(alice(), "post", "/forward", body, bob().ss58_address(), t0);
  CHECK(h.hotkey == alice().ss58_address());
  CHECK(h.nonce == "1700000000123456789");
  CHECK(h.crypto.empty());
  CHECK(h.receiver == bob().ss58_address());
  REQUIRE(h.signature.size() == 130);
  const auto sig = bt::from_hex(h.signature);
  REQUIRE(sig);
  CHECK(alice().verify(ba::build_payload(bt::crypto_type::sr25519, "POST", "/forward",
                                         bt::sha256_hex(body), t0, h.hotkey, h.receiver),
                       *sig));
  CHECK(verdict(fields_of(h), body) == std::nullopt);

  const auto ed = bt::keypair::from_uri("//Dave", bt::crypto_type::ed25519);
  const auto he = ba::sign_request(ed, "POST", "/forward", body, bob().ss58_address(), t0);
  CHECK(he.crypto == "ed25519");
  CHECK(verdict(fields_of(he), body) == std::nullopt);
  // The scheme is the declared one only: the ed25519 signature under an sr25519 claim fails.
  auto claimed_sr = he;
  claimed_sr.crypto.clear();
  CHECK(verdict(fields_of(claimed_sr), body) == ba::failure::bad_signature);
  auto claimed_ed = h;
  claimed_ed.crypto = "ed25519";
  CHECK(verdict(fields_of(claimed_ed), body) == ba::failure::bad_signature);
}

TEST_CASE("btauth: what the signature covers", "[btauth]") {
  const std::string body = R"({"x":1})";
  const auto h = ba::sign_request(alice(), "POST", "/forward?q=1", body, bob().ss58_address(), t0);
  const auto f = fields_of(h);
  const ba::policy p = bob_policy();
  CHECK(verdict(f, body, t0, p, "POST", "/forward?q=1") == std::nullopt);
  CHECK(verdict(f, body, t0, p, "post", "/forward?q=1") == std::nullopt);  // upper-cased as signed
  CHECK(verdict(f, R"({"x":2})", t0, p, "POST", "/forward?q=1") == ba::failure::bad_signature);
  CHECK(verdict(f, body, t0, p, "PUT", "/forward?q=1") == ba::failure::bad_signature);
  CHECK(verdict(f, body, t0, p, "POST", "/forward") == ba::failure::bad_signature);
  CHECK(verdict(f, body, t0, p, "POST", "/forward?q=2") == ba::failure::bad_signature);
  // Another key's signature over the same payload.
  auto other = h;
  other.signature =
      ba::sign_request(charlie(), "POST", "/forward?q=1", body, h.receiver, t0).signature;
  CHECK(verdict(fields_of(other), body, t0, p, "POST", "/forward?q=1") ==
        ba::failure::bad_signature);
  // The nonce is signed: another nonce in the window does not verify.
  auto later = h;
  later.nonce = std::to_string(t0 + 1);
  CHECK(verdict(fields_of(later), body, t0, p, "POST", "/forward?q=1") ==
        ba::failure::bad_signature);
}

TEST_CASE("btauth: the receiver", "[btauth]") {
  const auto bound = ba::sign_request(alice(), "POST", "/forward", "", bob().ss58_address(), t0);
  const auto unbound = ba::sign_request(alice(), "POST", "/forward", "", {}, t0);
  const auto for_charlie =
      ba::sign_request(alice(), "POST", "/forward", "", charlie().ss58_address(), t0);
  ba::policy p = bob_policy();
  CHECK(verdict(fields_of(bound), "", t0, p) == std::nullopt);
  CHECK(verdict(fields_of(unbound), "", t0, p) == ba::failure::wrong_receiver);
  CHECK(verdict(fields_of(for_charlie), "", t0, p) == ba::failure::wrong_receiver);
  p.require_receiver = false;
  CHECK(verdict(fields_of(unbound), "", t0, p) == std::nullopt);
  CHECK(verdict(fields_of(for_charlie), "", t0, p) == ba::failure::wrong_receiver);
  // Dropping the receiver header of a bound request changes the payload ("-"): bad signature.
  auto stripped = bound;
  stripped.receiver.clear();
  CHECK(verdict(fields_of(stripped), "", t0, p) == ba::failure::bad_signature);
}

TEST_CASE("btauth: freshness in nanoseconds", "[btauth]") {
  const auto h = ba::sign_request(alice(), "POST", "/forward", "", bob().ss58_address(), t0);
  const auto f = fields_of(h);
  constexpr std::int64_t s = 1'000'000'000;
  CHECK(verdict(f, "", t0 + 10 * s) == std::nullopt);
  CHECK(verdict(f, "", t0 + 11 * s) == ba::failure::stale_request);
  CHECK(verdict(f, "", t0 - 2 * s) == std::nullopt);
  CHECK(verdict(f, "", t0 - 3 * s) == ba::failure::stale_request);
  ba::policy wide = bob_policy();
  wide.max_age_ns = 60 * s;
  CHECK(verdict(f, "", t0 + 11 * s, wide) == std::nullopt);
  // A millisecond nonce is 1970 in nanoseconds: stale, not malformed.
  const auto ms =
      ba::sign_request(alice(), "POST", "/forward", "", bob().ss58_address(), t0 / 1'000'000);
  CHECK(verdict(fields_of(ms), "", t0) == ba::failure::stale_request);
}

TEST_CASE("btauth: malformed heads are refused before any cryptography", "[btauth]") {
  const auto h = ba::sign_request(alice(), "POST", "/forward", "", bob().ss58_address(), t0);
  // The signed head with `name` replaced by `value` (nullopt: left out); `name` in any case.
  const auto head_with = [&](std::string_view name, const std::optional<std::string>& value) {
    ba::header_fields f;
    for (const auto& [n, v] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
             {"X-Bittensor-Version", "1"},
             {"X-Bittensor-Hotkey", h.hotkey},
             {"X-Bittensor-Nonce", h.nonce},
             {"X-Bittensor-Signature", h.signature},
             {"X-Bittensor-Receiver", h.receiver}})
      if (!bt::detail::iequals(n, bt::detail::to_lower(name))) f.feed(n, v);
    if (value) f.feed(name, *value);
    return f;
  };
  const auto with = [&](std::string_view name, const std::optional<std::string>& value) {
    return verdict(head_with(name, value), "");
  };
  const auto malformed = ba::failure::malformed_auth;
  // Names are matched in any case.
  CHECK(with("x-bittensor-version", "1") == std::nullopt);
  CHECK(with("X-BITTENSOR-NONCE", h.nonce) == std::nullopt);
  CHECK(with("X-Bittensor-Version", std::nullopt) == malformed);  // missing
  CHECK(with("X-Bittensor-Version", "2") == malformed);
  CHECK(with("X-Bittensor-Version", " 1") == malformed);
  CHECK(with("X-Bittensor-Hotkey", "") == malformed);
  CHECK(with("X-Bittensor-Hotkey", "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQZ") ==
        malformed);
  CHECK(with("X-Bittensor-Hotkey", std::nullopt) == malformed);
  CHECK(with("X-Bittensor-Nonce", std::nullopt) == malformed);
  CHECK(with("X-Bittensor-Nonce", "") == malformed);
  CHECK(with("X-Bittensor-Nonce", "+" + h.nonce) == malformed);
  CHECK(with("X-Bittensor-Nonce", "0" + h.nonce) == malformed);
  CHECK(with("X-Bittensor-Nonce", h.nonce + ".0") == malformed);
  CHECK(with("X-Bittensor-Nonce", "99999999999999999999") == malformed);
  CHECK(with("X-Bittensor-Nonce", "9223372036854775808") == malformed);
  CHECK(with("X-Bittensor-Signature", std::nullopt) == malformed);
  CHECK(with("X-Bittensor-Signature", "") == malformed);
  CHECK(with("X-Bittensor-Signature", h.signature.substr(0, 128)) == malformed);
  CHECK(with("X-Bittensor-Signature", h.signature + "00") == malformed);
  CHECK(with("X-Bittensor-Signature", "0x" + std::string(128, 'g')) == malformed);
  // With or without 0x, in either case of hex: the same 64 bytes.
  CHECK(with("X-Bittensor-Signature", h.signature.substr(2)) == std::nullopt);
  std::string upper = h.signature;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(with("X-Bittensor-Signature", upper) == std::nullopt);
  CHECK(with("X-Bittensor-Crypto", "sr25519") == std::nullopt);
  CHECK(with("X-Bittensor-Crypto", "SR25519") == std::nullopt);
  CHECK(with("X-Bittensor-Crypto", "ecdsa") == malformed);
  CHECK(with("X-Bittensor-Crypto", "") == malformed);
  CHECK(with("X-Bittensor-Trace", "anything") == std::nullopt);  // not a btauth/1 field: ignored
  // A repeated field, even with the same value.
  ba::header_fields twice = fields_of(h);
  twice.feed("x-bittensor-nonce", h.nonce);
  CHECK(verdict(twice, "") == malformed);
  // No field at all: any() is false and the version is the first thing named missing.
  ba::header_fields none;
  CHECK_FALSE(none.any());
  ba::claim c;
  const auto r = ba::check_head(none, t0, bob_policy(), c);
  REQUIRE(r);
  CHECK(r->why == "MalformedAuth: missing X-Bittensor-Version header");
  // A peer's value is quoted at most 80 bytes long, whatever it sent.
  const auto long_version = ba::check_head(
      head_with("X-Bittensor-Version", std::string(10'000, '7')), t0, bob_policy(), c);
  REQUIRE(long_version);
  CHECK(long_version->kind == malformed);
  CHECK(long_version->why.size() < 200);
}

TEST_CASE("btauth: names, classes and replay keys", "[btauth]") {
  CHECK(ba::header_fields::is_btauth("x-BITTENSOR-nonce"));
  CHECK_FALSE(ba::header_fields::is_btauth("X-Bittensor-"));
  CHECK_FALSE(ba::header_fields::is_btauth("Epistula-Version"));
  CHECK(ba::class_name(ba::failure::replayed_request) == "ReplayedRequest");
  CHECK(ba::replay_key(t0) == "btauth:1700000000123456789");
  CHECK(ba::parse_scheme("Ed25519") == bt::crypto_type::ed25519);
  CHECK_FALSE(ba::parse_scheme("ed25519 "));
}

TEST_CASE(
    "request nonces: one process-wide sequence, distinct across threads and increasing in each",
    "[btauth]") {
  // Two dendrites (or a dendrite and http_auth.sign) of one process signing for the same hotkey
  // in the same nanosecond must not share a nonce: the receiver would refuse the second.
  constexpr int threads = 4, per_thread = 20000;
  std::vector<std::vector<std::int64_t>> seen(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&seen, t] {
      seen[t].reserve(per_thread);
      for (int i = 0; i < per_thread; ++i) seen[t].push_back(bt::next_request_nonce());
    });
  for (auto& th : pool) th.join();
  std::vector<std::int64_t> all;
  for (const auto& s : seen) {
    CHECK(std::is_sorted(s.begin(), s.end()));
    CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
    all.insert(all.end(), s.begin(), s.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  // Nanoseconds of the system clock: within a minute of btauth's own clock reading.
  const std::int64_t now = ba::now_ns();
  CHECK(all.back() > now - 60'000'000'000);
  CHECK(all.back() <= bt::next_request_nonce());
}
