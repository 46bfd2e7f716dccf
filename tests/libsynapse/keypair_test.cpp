#include <bt/keypair.hpp>

#include <bt/hex.hpp>
#include <bt/ss58.hpp>
#include "keypair_access.hpp"

#include <catch2/catch.hpp>
#include <support/bytes.hpp>
#include <support/vectors.hpp>

#include <string>

namespace {

using bt::test::hex;
using bt::test::hex_n;

}  // namespace

TEST_CASE("keypair from_seed (sr25519) matches sr25519_keys.json", "[keypair]") {
  const auto v = bt::test::load_vectors("sr25519_keys.json");
  for (const auto& c : v.at("cases")) {
    INFO(c.at("label").get<std::string>());
    const auto seed = hex_n<32>(c.at("mini_secret_hex"));
    const auto kp = bt::keypair::from_seed(seed);
    CHECK(kp.type() == bt::crypto_type::sr25519);
    CHECK(bt::to_hex(kp.public_key()) == c.at("public_hex").get<std::string>());
    CHECK(kp.ss58_address() == c.at("ss58_42").get<std::string>());
    REQUIRE(kp.has_secret());
    REQUIRE(kp.secret_key_bytes().has_value());
    CHECK(bt::to_hex(*kp.secret_key_bytes()) ==
          c.at("secret_key_btwallet_hex_64").get<std::string>());
    REQUIRE(kp.seed().has_value());
    CHECK(*kp.seed() == seed);
    CHECK_FALSE(kp.mnemonic().has_value());
  }
}

TEST_CASE("keypair from_secret_key takes both sr25519 forms", "[keypair]") {
  const auto v = bt::test::load_vectors("sr25519_keys.json");
  for (const auto& c : v.at("cases")) {
    INFO(c.at("label").get<std::string>());
    const auto pub = hex_n<32>(c.at("public_hex"));
    const auto canonical = hex(c.at("secret_key_btwallet_hex_64"));
    const auto ed_form = hex(c.at("secret_key_hex_64"));
    for (const auto* expected : {static_cast<const bt::public_key_bytes*>(nullptr), &pub}) {
      for (const auto& secret : {canonical, ed_form}) {
        bt::error err;
        const auto kp =
            bt::keypair::from_secret_key(secret, bt::crypto_type::sr25519, err, expected);
        REQUIRE(kp.has_value());
        CHECK(kp->public_key() == pub);
        CHECK(kp->ss58_address() == c.at("ss58_42").get<std::string>());
        // Always stored (and written to keyfiles) in the canonical form; no seed is known.
        CHECK(bt::to_hex(*kp->secret_key_bytes()) ==
              c.at("secret_key_btwallet_hex_64").get<std::string>());
        CHECK_FALSE(kp->seed().has_value());
      }
    }
    // A public key that matches neither form is refused.
    auto other = pub;
    other[0] ^= 0x10;
    bt::error err;
    CHECK_FALSE(
        bt::keypair::from_secret_key(canonical, bt::crypto_type::sr25519, err, &other).has_value());
    CHECK(err.code == bt::key_errc::invalid_secret_key);
  }
  bt::error err;
  CHECK_FALSE(bt::keypair::from_secret_key(std::vector<std::uint8_t>(32, 1),
                                           bt::crypto_type::sr25519, err));
  CHECK(err.code == bt::key_errc::invalid_secret_key);
}

TEST_CASE("keypair ed25519 from seed and from secret key", "[keypair]") {
  const auto v = bt::test::load_vectors("ed25519_signatures.json");
  for (const auto& [name, key] : v.at("keys").items()) {
    INFO(name);
    const auto seed = hex_n<32>(key.at("seed_hex"));
    const auto kp = bt::keypair::from_seed(seed, bt::crypto_type::ed25519);
    CHECK(kp.type() == bt::crypto_type::ed25519);
    CHECK(bt::to_hex(kp.public_key()) == key.at("public_hex").get<std::string>());
    CHECK(kp.ss58_address() == key.at("ss58_42").get<std::string>());
    const auto sk = *kp.secret_key_bytes();
    CHECK(bt::to_hex(std::span(sk).first(32)) == key.at("seed_hex").get<std::string>());
    bt::error err;
    const auto again =
        bt::keypair::from_secret_key(sk, bt::crypto_type::ed25519, err, &kp.public_key());
    REQUIRE(again.has_value());
    CHECK(again->public_key() == kp.public_key());
    CHECK(*again->seed() == seed);
  }
  for (const auto& c : v.at("cases")) {
    if (!c.at("valid").get<bool>()) continue;
    const auto kp = bt::keypair::from_seed(hex_n<32>(c.at("seed_hex")), bt::crypto_type::ed25519);
    const auto msg = c.at("message_utf8").get<std::string>();
    CHECK(bt::to_hex(kp.sign(msg)) == c.at("signature_hex").get<std::string>());
    CHECK(kp.verify(msg, kp.sign(msg)));
  }
}

TEST_CASE("keypair public-only: verifies vectors, refuses to sign", "[keypair]") {
  const auto v = bt::test::load_vectors("sr25519_signatures.json");
  for (const auto& c : v.at("cases")) {
    const auto pub = hex_n<32>(c.at("public_hex"));
    const auto kp = bt::keypair::from_public_key(pub);
    CHECK_FALSE(kp.has_secret());
    CHECK_FALSE(kp.secret_key_bytes().has_value());
    const auto msg = c.at("message_utf8").get<std::string>();
    CHECK(kp.verify(msg, hex(c.at("signature_hex"))) == c.at("valid").get<bool>());
    CHECK_THROWS_AS(kp.sign(msg), std::logic_error);
  }
}

TEST_CASE("keypair from_ss58", "[keypair]") {
  const std::string alice = "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY";
  const auto kp = bt::keypair::from_ss58(alice);
  CHECK(bt::to_hex(kp.public_key()) ==
        "d43593c715fdd31c61141abd04a99fd6822c8558854ccde39a5684e7a56da27d");
  CHECK(kp.ss58_address() == alice);
  CHECK(kp.ss58_address(0) == "15oF4uVJwmo4TdGW7VfQxNLavjCXviqxT9S1MgbjMNHr6Sp5");
  // Another format's address of the same key gives the same keypair, in format 42.
  const auto polkadot = bt::keypair::from_ss58("15oF4uVJwmo4TdGW7VfQxNLavjCXviqxT9S1MgbjMNHr6Sp5");
  CHECK(polkadot.public_key() == kp.public_key());
  CHECK(polkadot.ss58_address() == alice);

  bt::error err;
  CHECK_FALSE(bt::keypair::from_ss58("5HYY6FoLyKHsmjAkxTwwyyshp3heTjiVsubjF7rVsV7p9AhC",
                                     bt::crypto_type::sr25519, err));
  CHECK(err.code == bt::key_errc::ss58_bad_checksum);
  CHECK(err.message().find("ss58") != std::string::npos);
  try {
    (void)bt::keypair::from_ss58("5HYY6FoLyK0smjAkxTwwyyshp3heTjiVsubjF7rVsV7p9Amc");
    FAIL("no exception");
  } catch (const std::system_error& e) {
    CHECK(e.code() == bt::key_errc::ss58_bad_character);
  }
}

TEST_CASE("keypair sign and verify, copies and moves", "[keypair]") {
  const auto kp = bt::keypair::from_seed(std::array<std::uint8_t, 32>{42});
  const std::string msg = "1718000000123456789.a.b.c.d";
  const auto sig = kp.sign(msg);
  CHECK(kp.verify(msg, sig));
  CHECK_FALSE(kp.verify(msg + ".", sig));
  CHECK_FALSE(kp.verify(msg, std::span(sig).first(63)));
  CHECK_FALSE(bt::verify_signature(
      bt::crypto_type::sr25519, kp.public_key(),
      std::span(reinterpret_cast<const std::uint8_t*>(msg.data()), msg.size()), sig));
  // The same bytes are not an ed25519 signature of that key.
  CHECK(bt::verify_signature(
      bt::crypto_type::ed25519, kp.public_key(),
      std::span(reinterpret_cast<const std::uint8_t*>(msg.data()), msg.size()), sig));

  bt::keypair copy = kp;
  CHECK(copy.public_key() == kp.public_key());
  CHECK(copy.has_secret());
  CHECK(kp.verify(msg, copy.sign(msg)));
  bt::keypair moved = std::move(copy);
  CHECK(moved.has_secret());
  CHECK(kp.verify(msg, moved.sign(msg)));
  bt::keypair assigned = bt::keypair::from_public_key(kp.public_key());
  assigned = moved;
  CHECK(assigned.has_secret());
  CHECK(*assigned.secret_key_bytes() == *kp.secret_key_bytes());
}

TEST_CASE("keypair_access records a mnemonic and exposes the secret for derivation", "[keypair]") {
  const std::array<std::uint8_t, 32> seed{1, 2, 3};
  const auto kp =
      bt::keypair_access::make_from_seed(seed, bt::crypto_type::sr25519, std::string("some words"));
  CHECK(kp.mnemonic() == std::optional<std::string>("some words"));
  CHECK(kp.public_key() == bt::keypair::from_seed(seed).public_key());
  REQUIRE(bt::keypair_access::sr25519_secret(kp) != nullptr);
  CHECK(bt::keypair_access::ed25519_secret(kp) == nullptr);
  CHECK(bt::sr25519::to_public(*bt::keypair_access::sr25519_secret(kp)) == kp.public_key());
  const auto pub_only = bt::keypair::from_public_key(kp.public_key());
  CHECK(bt::keypair_access::sr25519_secret(pub_only) == nullptr);
}
