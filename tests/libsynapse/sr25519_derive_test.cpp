#include <bt/sr25519.hpp>

#include <bt/hex.hpp>
#include <bt/keypair.hpp>
#include <bt/ss58.hpp>

#include <catch2/catch.hpp>
#include <support/bytes.hpp>
#include <support/vectors.hpp>

#include <string>

// The derivation math (schnorrkel HDKD) from the chain codes given in sr25519_derive.json. The
// URI grammar and junction encoding are the identity sources' (secret_uri_test.cpp); the root
// mini secret of each case is given by the vector, so mnemonics are not needed here.

using bt::test::hex_n;

TEST_CASE("sr25519 hard and soft derivation match every case of sr25519_derive.json",
          "[sr25519][derive]") {
  bt::init_crypto();
  const auto v = bt::test::load_vectors("sr25519_derive.json");
  REQUIRE(v.at("cases").size() >= 16);
  int soft_cases = 0;
  for (const auto& c : v.at("cases")) {
    INFO(c.at("uri").get<std::string>());
    const auto& root = c.at("root");
    const auto mini = hex_n<32>(root.contains("mini_secret_hex") ? root.at("mini_secret_hex")
                                                                 : root.at("seed_hex"));
    auto sk = bt::sr25519::expand_mini_secret(mini);
    auto pub = bt::sr25519::to_public(sk);
    bool last_was_soft = false;
    for (const auto& j : c.at("junctions")) {
      const auto cc = hex_n<32>(j.at("chain_code_hex"));
      const auto type = j.at("type").get<std::string>();
      if (type == "hard") {
        sk = bt::sr25519::derive_hard(sk, cc);
        pub = bt::sr25519::to_public(sk);
        last_was_soft = false;
      } else {
        REQUIRE(type == "soft");
        bt::sr25519::chain_code next_secret{}, next_public{};
        bt::sr25519::public_key derived_pub{};
        REQUIRE_FALSE(bt::sr25519::derive_soft_public(pub, cc, derived_pub, &next_public));
        sk = bt::sr25519::derive_soft(sk, pub, cc, &next_secret);
        pub = bt::sr25519::to_public(sk);
        // The public path gives the same key and chain code as the secret path.
        CHECK(derived_pub == pub);
        CHECK(next_public == next_secret);
        last_was_soft = true;
        ++soft_cases;
      }
    }
    CHECK(bt::to_hex(pub) == c.at("public_hex").get<std::string>());
    CHECK(bt::ss58::encode(pub) == c.at("ss58_42").get<std::string>());
    const auto canonical = bt::to_hex(bt::sr25519::to_bytes(sk));
    const auto ed_form = bt::to_hex(bt::sr25519::to_ed25519_bytes(sk));
    const auto want_canonical = c.at("secret_key_btwallet_hex_64").get<std::string>();
    const auto want_ed_form = c.at("secret_key_hex_64").get<std::string>();
    // The scalar is deterministic in both forms.
    CHECK(canonical.substr(0, 64) == want_canonical.substr(0, 64));
    CHECK(ed_form.substr(0, 64) == want_ed_form.substr(0, 64));
    // The nonce after a soft junction comes from schnorrkel's witness RNG (random in schnorrkel
    // and sp-core as here), so only a hard junction's (or the root's) nonce can be compared.
    if (!last_was_soft) {
      CHECK(canonical == want_canonical);
      CHECK(ed_form == want_ed_form);
    }
  }
  CHECK(soft_cases >= 5);
}

TEST_CASE("sr25519 soft derivation gives a fresh nonce but the same scalar each time",
          "[sr25519][derive]") {
  bt::init_crypto();
  const auto sk = bt::sr25519::expand_mini_secret(std::array<std::uint8_t, 32>{7});
  const auto pub = bt::sr25519::to_public(sk);
  const bt::sr25519::chain_code cc{1, 2, 3};
  const auto a = bt::sr25519::derive_soft(sk, pub, cc);
  const auto b = bt::sr25519::derive_soft(sk, pub, cc);
  CHECK(a.scalar == b.scalar);
  CHECK(a.nonce != b.nonce);
  // A derived key signs, and its public key verifies.
  const auto a_pub = bt::sr25519::to_public(a);
  const std::array<std::uint8_t, 3> msg{1, 2, 3};
  CHECK_FALSE(bt::sr25519::verify(a_pub, msg, bt::sr25519::sign(a, a_pub, msg)));
}

TEST_CASE("sr25519 hard derivation is deterministic and depends on the chain code",
          "[sr25519][derive]") {
  bt::init_crypto();
  const auto sk = bt::sr25519::expand_mini_secret(std::array<std::uint8_t, 32>{9});
  const bt::sr25519::chain_code a{1}, b{2};
  CHECK(bt::sr25519::hard_derive_mini_secret(sk, a) == bt::sr25519::hard_derive_mini_secret(sk, a));
  CHECK(bt::sr25519::hard_derive_mini_secret(sk, a) != bt::sr25519::hard_derive_mini_secret(sk, b));
}

TEST_CASE("sr25519 soft public derivation rejects an invalid parent key", "[sr25519][derive]") {
  bt::init_crypto();
  std::array<std::uint8_t, 32> bad;
  bad.fill(0xff);
  bt::sr25519::public_key out{};
  CHECK(bt::sr25519::derive_soft_public(bad, bt::sr25519::chain_code{}, out) ==
        bt::key_errc::invalid_public_key);
}
