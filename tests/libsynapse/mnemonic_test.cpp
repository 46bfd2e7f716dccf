#include <bt/mnemonic.hpp>

#include <bt/hex.hpp>
#include <bt/keypair.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

#include <algorithm>
#include <set>

namespace {

std::vector<std::uint8_t> as_bytes(std::string_view s) {
  return {s.begin(), s.end()};
}

}  // namespace

TEST_CASE("BIP39 English word list is the embedded 2048-word list", "[mnemonic]") {
  CHECK(bt::bip39_word(0) == "abandon");
  CHECK(bt::bip39_word(2047) == "zoo");
  CHECK(bt::bip39_word_index("abandon") == std::optional<std::uint16_t>(0));
  CHECK(bt::bip39_word_index("zoo") == std::optional<std::uint16_t>(2047));
  CHECK(bt::bip39_word_index("bottom") == std::optional<std::uint16_t>(210));
  CHECK_FALSE(bt::bip39_word_index("Abandon"));
  CHECK_FALSE(bt::bip39_word_index("bittensor"));
  CHECK_FALSE(bt::bip39_word_index(""));
  for (std::uint16_t i = 0; i < 2048; ++i) REQUIRE(bt::bip39_word_index(bt::bip39_word(i)) == i);
  CHECK_THROWS(bt::bip39_word(2048));
}

TEST_CASE("mnemonic.json: entropy, mini secret and keys of every valid case", "[mnemonic]") {
  const auto v = bt::test::load_vectors("mnemonic.json");
  const auto& cases = v.at("cases");
  REQUIRE(cases.size() >= 10);
  for (const auto& c : cases) {
    const auto phrase = c.at("mnemonic").get<std::string>();
    const auto password = c.at("password").get<std::string>();
    INFO(phrase << " / password '" << password << "'");
    REQUIRE(bt::to_hex(as_bytes(password)) == c.at("password_utf8_hex").get<std::string>());

    bt::error err;
    const auto entropy = bt::mnemonic_to_entropy(phrase, err);
    REQUIRE(entropy.has_value());
    CHECK_FALSE(err);
    CHECK(entropy->size() * 3 / 4 == c.at("word_count").get<std::size_t>());
    CHECK(bt::to_hex(entropy->bytes()) == c.at("entropy_hex").get<std::string>());
    CHECK(bt::entropy_to_mnemonic(entropy->bytes()) == phrase);

    const auto mini = bt::mnemonic_to_mini_secret(phrase, password);
    CHECK(bt::to_hex(mini) == c.at("mini_secret_hex").get<std::string>());
    const auto std_seed = c.at("standard_bip39_seed_hex_not_used").get<std::string>();
    CHECK(bt::to_hex(mini) != std_seed.substr(0, 64));

    const auto sr = bt::keypair::from_mnemonic(phrase, password, bt::crypto_type::sr25519);
    CHECK(bt::to_hex(sr.public_key()) == c.at("sr25519_public_hex").get<std::string>());
    CHECK(sr.ss58_address() == c.at("ss58_42_sr25519").get<std::string>());
    CHECK(sr.mnemonic() == std::optional<std::string>(phrase));
    REQUIRE(sr.seed().has_value());
    CHECK(bt::to_hex(*sr.seed()) == c.at("mini_secret_hex").get<std::string>());

    const auto ed = bt::keypair::from_mnemonic(phrase, password, bt::crypto_type::ed25519);
    CHECK(bt::to_hex(ed.public_key()) == c.at("ed25519_public_hex").get<std::string>());
    CHECK(ed.ss58_address() == c.at("ss58_42_ed25519").get<std::string>());
  }
}

TEST_CASE("mnemonic.json: every invalid case is rejected with its reason", "[mnemonic]") {
  const auto v = bt::test::load_vectors("mnemonic.json");
  const auto& invalid = v.at("invalid");
  REQUIRE(invalid.size() >= 8);
  for (const auto& c : invalid) {
    const auto phrase = c.at("mnemonic").get<std::string>();
    const auto why = c.at("why").get<std::string>();
    INFO(phrase << " : " << why);
    bt::key_errc expected{};
    if (why.rfind("bad checksum", 0) == 0)
      expected = bt::key_errc::mnemonic_checksum;
    else if (why.rfind("unknown word", 0) == 0 || why.rfind("upper-case", 0) == 0)
      expected = bt::key_errc::mnemonic_unknown_word;
    else if (why.rfind("wrong word count", 0) == 0 || why == "empty string")
      expected = bt::key_errc::mnemonic_word_count;
    else
      FAIL("unclassified invalid case: " << why);

    bt::error err;
    CHECK_FALSE(bt::mnemonic_to_entropy(phrase, err).has_value());
    CHECK(err.code == bt::make_error_code(expected));
    CHECK_FALSE(err.detail.empty());
    CHECK_FALSE(bt::validate_mnemonic(phrase, err));
    CHECK(err.code == bt::make_error_code(expected));
    CHECK_THROWS_AS(bt::mnemonic_to_mini_secret(phrase), std::system_error);
    CHECK_FALSE(bt::keypair::from_mnemonic(phrase, "", bt::crypto_type::sr25519, err).has_value());
    CHECK(err.code == bt::make_error_code(expected));
    if (expected == bt::key_errc::mnemonic_unknown_word) {
      // The error names the offending word and its position.
      const std::string word = why.find("bittensor") != std::string::npos ? "bittensor" : "STEP";
      CHECK(err.detail.find(word) != std::string::npos);
    }
  }
}

TEST_CASE("mnemonic generation gives valid phrases of every length", "[mnemonic]") {
  std::set<std::string> seen;
  for (int words : {12, 15, 18, 21, 24}) {
    const auto phrase = bt::generate_mnemonic(words);
    bt::error err;
    const auto entropy = bt::mnemonic_to_entropy(phrase, err);
    REQUIRE(entropy.has_value());
    CHECK(entropy->size() == static_cast<std::size_t>(words) * 4 / 3);
    CHECK(std::count(phrase.begin(), phrase.end(), ' ') == words - 1);
    seen.insert(phrase);
  }
  CHECK(seen.size() == 5);
  CHECK(bt::generate_mnemonic() != bt::generate_mnemonic());
  CHECK_THROWS_AS(bt::generate_mnemonic(13), std::invalid_argument);
  CHECK_THROWS_AS(bt::generate_mnemonic(27), std::invalid_argument);
  CHECK_THROWS_AS(bt::entropy_to_mnemonic(std::vector<std::uint8_t>(17)), std::invalid_argument);
}

TEST_CASE("mnemonic words may be separated by any ASCII whitespace", "[mnemonic]") {
  const std::string spaced =
      "  bottom drive\tobey lake curtain smoke basket hold race lonely fit\nwalk ";
  CHECK(bt::to_hex(bt::mnemonic_to_entropy(spaced).bytes()) == "1a486a5fbe53639984cb64b070755f7b");
}

TEST_CASE("PBKDF2-HMAC-SHA512 matches published vectors", "[mnemonic]") {
  // P="password", S="salt": the commonly published PBKDF2-HMAC-SHA512 vectors (also what
  // CPython's hashlib.pbkdf2_hmac gives).
  std::array<std::uint8_t, 64> out{};
  bt::pbkdf2_hmac_sha512(as_bytes("password"), as_bytes("salt"), 1, out);
  CHECK(bt::to_hex(out) ==
        "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252"
        "c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce");
  bt::pbkdf2_hmac_sha512(as_bytes("password"), as_bytes("salt"), 2, out);
  CHECK(bt::to_hex(out) ==
        "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53c"
        "f76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e");
  // A key longer than the SHA-512 block (128 bytes) is hashed first, and an output longer than
  // one block takes a second block (CPython hashlib.pbkdf2_hmac("sha512", b"a"*200, b"salt", 3,
  // 80)).
  std::vector<std::uint8_t> long_out(80);
  bt::pbkdf2_hmac_sha512(std::vector<std::uint8_t>(200, 0x61), as_bytes("salt"), 3, long_out);
  CHECK(bt::to_hex(long_out) ==
        "2be5deb7b4ed2ec5f7d24a14692bf8a7444e00988f175d7bcb5ac6588a9569bdb2aec28289dae674c8b4245dcb"
        "7cbe39"
        "b0a30bb145d67918caa330d843841b1d8c7ac65782c29f846f07f63b834b7414");
  CHECK_THROWS_AS(bt::pbkdf2_hmac_sha512(as_bytes("p"), as_bytes("s"), 0, out),
                  std::invalid_argument);
}
