#include <bt/ed25519.hpp>

#include <bt/hex.hpp>
#include <bt/key_error.hpp>
#include <bt/keypair.hpp>
#include <bt/ss58.hpp>

#include <catch2/catch.hpp>
#include <support/bytes.hpp>
#include <support/vectors.hpp>

#include <map>
#include <string>

namespace {

using bt::test::bytes_of;
using bt::test::hex;
using bt::test::hex_n;

const std::map<std::string, bt::key_errc>& expected_reasons() {
  static const std::map<std::string, bt::key_errc> m = {
      // The flipped R no longer decodes to a curve point.
      {"one bit flipped in R (byte 3)", bt::key_errc::invalid_signature},
      {"one bit flipped in s (byte 33)", bt::key_errc::signature_mismatch},
      {"message changed: one bit flipped in message byte 0", bt::key_errc::signature_mismatch},
      {"non-canonical s: s + L (RFC 8032 requires s < L)", bt::key_errc::invalid_signature},
      {"high bit of s set (s >= 2^255, non-canonical)", bt::key_errc::invalid_signature},
      {"wrong public key", bt::key_errc::signature_mismatch},
      {"wrong public key (unrelated key)", bt::key_errc::signature_mismatch},
      // R = 0 encodes a point of order 4, which libsodium refuses.
      {"all-zero signature", bt::key_errc::invalid_signature},
  };
  return m;
}

}  // namespace

TEST_CASE("ed25519 keys of ed25519_signatures.json", "[ed25519]") {
  bt::init_crypto();
  const auto v = bt::test::load_vectors("ed25519_signatures.json");
  for (const auto& [name, key] : v.at("keys").items()) {
    INFO(name);
    const auto sk = bt::ed25519::from_seed(hex_n<32>(key.at("seed_hex")));
    CHECK(bt::to_hex(sk.public_part()) == key.at("public_hex").get<std::string>());
    std::array<std::uint8_t, 32> pub{};
    std::copy(sk.public_part().begin(), sk.public_part().end(), pub.begin());
    CHECK(bt::ss58::encode(pub) == key.at("ss58_42").get<std::string>());
    // seed || public loads back; a mismatched public half does not.
    bt::ed25519::secret_key loaded;
    REQUIRE_FALSE(bt::ed25519::from_bytes(sk.bytes, loaded));
    CHECK(loaded.bytes == sk.bytes);
    auto tampered = sk.bytes;
    tampered[40] ^= 1;
    CHECK(bt::ed25519::from_bytes(tampered, loaded) == bt::key_errc::invalid_secret_key);
    CHECK(bt::ed25519::from_bytes(std::span(sk.bytes).first(32), loaded) ==
          bt::key_errc::invalid_secret_key);
  }
}

TEST_CASE("ed25519 signs and verifies every case of ed25519_signatures.json, with its reason",
          "[ed25519]") {
  bt::init_crypto();
  const auto v = bt::test::load_vectors("ed25519_signatures.json");
  REQUIRE(v.at("cases").size() >= 14);
  std::size_t invalid = 0;
  for (const auto& c : v.at("cases")) {
    const auto why = c.at("why").get<std::string>();
    INFO(why);
    const auto pub = hex_n<32>(c.at("public_hex"));
    const auto msg = c.at("message_utf8").get<std::string>();
    const auto sig = hex(c.at("signature_hex"));
    const std::error_code ec = bt::ed25519::verify(pub, bytes_of(msg), sig);
    CHECK(bt::verify_signature(bt::crypto_type::ed25519, pub, bytes_of(msg), sig) == ec);
    if (c.at("valid").get<bool>()) {
      CHECK_FALSE(ec);
      // Deterministic: our signature is byte-identical.
      const auto sk = bt::ed25519::from_seed(hex_n<32>(c.at("seed_hex")));
      CHECK(bt::to_hex(sk.public_part()) == c.at("public_hex").get<std::string>());
      CHECK(bt::to_hex(bt::ed25519::sign(sk, bytes_of(msg))) ==
            c.at("signature_hex").get<std::string>());
    } else {
      REQUIRE(expected_reasons().count(why) == 1);
      CHECK(ec == expected_reasons().at(why));
      ++invalid;
    }
  }
  CHECK(invalid == expected_reasons().size());
}

TEST_CASE("ed25519 verify reports lengths and invalid public keys", "[ed25519]") {
  bt::init_crypto();
  const auto sk = bt::ed25519::from_seed(std::array<std::uint8_t, 32>{5});
  std::array<std::uint8_t, 32> pub{};
  std::copy(sk.public_part().begin(), sk.public_part().end(), pub.begin());
  const std::string msg = "m";
  const auto sig = bt::ed25519::sign(sk, bytes_of(msg));
  CHECK_FALSE(bt::ed25519::verify(pub, bytes_of(msg), sig));
  CHECK(bt::ed25519::verify(pub, bytes_of(msg), std::span(sig).first(63)) ==
        bt::key_errc::invalid_signature);
  std::array<std::uint8_t, 32> small_order{};  // y = 0: order 4
  CHECK(bt::ed25519::verify(small_order, bytes_of(msg), sig) == bt::key_errc::invalid_public_key);
  std::array<std::uint8_t, 32> identity{1};  // y = 1: the identity, small order
  CHECK(bt::ed25519::verify(identity, bytes_of(msg), sig) == bt::key_errc::invalid_public_key);
}
