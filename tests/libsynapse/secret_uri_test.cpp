#include <bt/secret_uri.hpp>

#include <bt/hex.hpp>
#include <bt/keypair.hpp>
#include <bt/mnemonic.hpp>
#include <bt/sr25519.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

namespace {

std::string hex32(const std::array<std::uint8_t, 32>& a) {
  return bt::to_hex(a);
}

std::string cc_of(std::string_view text, bool hard = true) {
  return hex32(bt::derive_junction::from_text(text, hard).chain_code);
}

}  // namespace

TEST_CASE("sr25519_derive.json: junctions, roots and keys of every case", "[secret_uri]") {
  const auto v = bt::test::load_vectors("sr25519_derive.json");
  const auto& cases = v.at("cases");
  REQUIRE(cases.size() >= 16);
  for (const auto& c : cases) {
    const auto text = c.at("uri").get<std::string>();
    INFO(text);
    const auto uri = bt::parse_secret_uri(text);

    // Junctions: kind and chain code.
    const auto& junctions = c.at("junctions");
    REQUIRE(uri.junctions.size() == junctions.size());
    for (std::size_t i = 0; i < junctions.size(); ++i) {
      CHECK(uri.junctions[i].hard == (junctions[i].at("type").get<std::string>() == "hard"));
      CHECK(hex32(uri.junctions[i].chain_code) ==
            junctions[i].at("chain_code_hex").get<std::string>());
    }

    // Root: phrase (dev phrase when absent) and password, or a hex seed.
    const auto& root = c.at("root");
    if (root.contains("seed_hex")) {
      CHECK(uri.is_hex_seed());
      CHECK(uri.phrase == "0x" + root.at("seed_hex").get<std::string>());
    } else {
      const auto phrase = root.at("mnemonic").get<std::string>();
      const auto password = root.at("password").get<std::string>();
      CHECK(uri.phrase == phrase);
      CHECK(uri.phrase_is_dev == (text.rfind("//", 0) == 0));
      CHECK(uri.password.value_or("") == password);
      CHECK(bt::to_hex(bt::mnemonic_to_mini_secret(phrase, password)) ==
            root.at("mini_secret_hex").get<std::string>());
    }

    // The derived keypair.
    const auto kp = bt::keypair::from_uri(text);
    CHECK(kp.type() == bt::crypto_type::sr25519);
    CHECK(bt::to_hex(kp.public_key()) == c.at("public_hex").get<std::string>());
    CHECK(kp.ss58_address() == c.at("ss58_42").get<std::string>());
    CHECK_FALSE(kp.mnemonic().has_value());  // as btwallet's create_from_uri
    CHECK_FALSE(kp.seed().has_value());
    const auto secret = kp.secret_key_bytes();
    REQUIRE(secret.has_value());
    const auto btwallet = c.at("secret_key_btwallet_hex_64").get<std::string>();
    const auto polkadot = c.at("secret_key_hex_64").get<std::string>();
    bt::sr25519::secret_key sk;
    REQUIRE_FALSE(bt::sr25519::from_bytes(*secret, sk));
    const auto ed_form = bt::sr25519::to_ed25519_bytes(sk);
    bool soft = false;
    for (const auto& j : junctions) soft = soft || j.at("type").get<std::string>() == "soft";
    if (soft) {
      // A soft junction's nonce comes from schnorrkel's witness RNG (random); the scalar is fixed.
      CHECK(bt::to_hex(*secret).substr(0, 64) == btwallet.substr(0, 64));
      CHECK(bt::to_hex(ed_form).substr(0, 64) == polkadot.substr(0, 64));
    } else {
      CHECK(bt::to_hex(*secret) == btwallet);
      CHECK(bt::to_hex(ed_form) == polkadot);
    }

    // The derived key signs, and its signature verifies against the vector's public key.
    const auto sig = kp.sign(std::string_view("derived"));
    CHECK(bt::keypair::from_ss58(c.at("ss58_42").get<std::string>()).verify("derived", sig));
  }
}

TEST_CASE("secret URI grammar as sp-core's regex", "[secret_uri]") {
  SECTION("dev phrase, junction kinds and the password") {
    auto u = bt::parse_secret_uri("//Alice//stash/0///pa/ss//word");
    CHECK(u.phrase == bt::dev_phrase);
    CHECK(u.phrase_is_dev);
    REQUIRE(u.junctions.size() == 3);
    CHECK(u.junctions[0].hard);
    CHECK(u.junctions[1].hard);
    CHECK_FALSE(u.junctions[2].hard);
    REQUIRE(u.password.has_value());
    CHECK(*u.password == "pa/ss//word");  // everything after the first "///"

    u = bt::parse_secret_uri("");
    CHECK(u.phrase_is_dev);
    CHECK(u.junctions.empty());
    CHECK_FALSE(u.password.has_value());

    u = bt::parse_secret_uri("abandon about///");
    CHECK(u.phrase == "abandon about");
    CHECK(u.password == std::optional<std::string>(""));

    u = bt::parse_secret_uri("////x");  // "///" then the password "/x"
    CHECK(u.junctions.empty());
    CHECK(u.password == std::optional<std::string>("/x"));

    u = bt::parse_secret_uri("0x" + std::string(64, 'a') + "//1");
    CHECK(u.is_hex_seed());
    CHECK(u.junctions.size() == 1);
  }
  SECTION("invalid URIs name the problem") {
    for (const char* bad : {"/", "//", "//Alice/", "//Alice//", "abandon-about",
                            "word//x/ /y\xc3\xa9//", "//Alice///pass\nword", "caf\xc3\xa9//x"}) {
      INFO(bad);
      bt::error err;
      CHECK_FALSE(bt::parse_secret_uri(bad, err).has_value());
      CHECK(err.code == bt::make_error_code(bt::key_errc::invalid_uri));
      CHECK_FALSE(err.detail.empty());
      CHECK_THROWS_AS(bt::parse_secret_uri(bad), std::system_error);
    }
    // A junction may hold any character but '/', including spaces and non-ASCII.
    const auto u = bt::parse_secret_uri("//a b/\xc3\xa9");
    CHECK(u.junctions.size() == 2);
  }
}

TEST_CASE("junction chain codes: numbers, text and hashing", "[secret_uri]") {
  // u64 little-endian, zero-padded.
  CHECK(cc_of("0") == std::string(64, '0'));
  CHECK(cc_of("1") == "01" + std::string(62, '0'));
  CHECK(cc_of("007") == "07" + std::string(62, '0'));  // Rust parse::<u64> accepts leading zeros
  CHECK(cc_of("+5") == "05" + std::string(62, '0'));   // ... and a leading '+'
  CHECK(cc_of("18446744073709551615") == "ffffffffffffffff" + std::string(48, '0'));
  // Beyond u64::MAX, '-', or empty after '+': SCALE-encoded text instead.
  CHECK(cc_of("18446744073709551616").substr(0, 2) == "50");  // compact(20) = 20 << 2
  CHECK(cc_of("-1") == "082d31" + std::string(58, '0'));
  CHECK(cc_of("+") == "042b" + std::string(60, '0'));
  // The hard/soft flag does not change the chain code.
  CHECK(cc_of("Alice", true) == cc_of("Alice", false));
  CHECK(cc_of("Alice") == "14416c696365" + std::string(52, '0'));
  // 31 bytes of text + 1 length byte = 32 bytes: kept; 32 bytes of text: hashed.
  CHECK(cc_of(std::string(31, 'x')).substr(0, 2) == "7c");
  const auto hashed = cc_of(std::string(32, 'x'));
  CHECK(hashed.substr(0, 2) != "80");
  CHECK(hashed != cc_of(std::string(33, 'x')));
}

TEST_CASE("SCALE compact lengths in all four modes", "[secret_uri]") {
  auto enc = [](std::uint64_t n) {
    std::vector<std::uint8_t> out;
    bt::detail::scale_compact(n, out);
    return bt::to_hex(out);
  };
  CHECK(enc(0) == "00");
  CHECK(enc(63) == "fc");
  CHECK(enc(64) == "0101");
  CHECK(enc(16383) == "fdff");
  CHECK(enc(16384) == "02000100");
  CHECK(enc((1u << 30) - 1) == "feffffff");
  CHECK(enc(1u << 30) == "0300000040");
  CHECK(enc(UINT64_MAX) == "13ffffffffffffffff");
}

TEST_CASE("URIs: seeds, passwords and errors for sr25519 and ed25519", "[secret_uri]") {
  // A hex seed ignores the password (sp-core), and equals from_seed for no junctions.
  const std::string seed_hex = "01b0a3024e1a1328f14f9c332ad45ef0e1847245cd79a35e3e7fb75e5cb7bdd0";
  const auto seed = bt::from_hex(seed_hex).value();
  const auto a = bt::keypair::from_uri("0x" + seed_hex);
  const auto b = bt::keypair::from_uri("0x" + seed_hex + "///ignored");
  CHECK(a.public_key() == b.public_key());
  CHECK(a.public_key() ==
        bt::keypair::from_seed(std::span<const std::uint8_t, 32>(seed.data(), 32)).public_key());

  // The mnemonic with a password equals from_mnemonic with that password.
  const auto m = bt::keypair::from_uri(std::string(bt::dev_phrase) + "///password");
  CHECK(m.public_key() == bt::keypair::from_mnemonic(bt::dev_phrase, "password").public_key());

  bt::error err;
  CHECK_FALSE(bt::keypair::from_uri("0x1234//a", bt::crypto_type::sr25519, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::invalid_uri));
  CHECK_FALSE(bt::keypair::from_uri("0x" + std::string(63, 'a'), bt::crypto_type::sr25519, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::invalid_uri));
  CHECK_FALSE(bt::keypair::from_uri("0x" + std::string(64, 'g'), bt::crypto_type::sr25519, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::invalid_uri));
  CHECK_FALSE(bt::keypair::from_uri("abandon abandon//x", bt::crypto_type::sr25519, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::mnemonic_word_count));
  CHECK_FALSE(bt::keypair::from_uri("/", bt::crypto_type::sr25519, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::invalid_uri));
  CHECK_THROWS_AS(bt::keypair::from_uri("//"), std::system_error);

  // ed25519: hard junctions as sp-core ("Ed25519HDKD"); soft junctions are an error.
  const auto ss58 = bt::test::load_vectors("ss58.json");
  std::string alice_ed;
  for (const auto& c : ss58.at("cases"))
    if (c.at("key_label").get<std::string>() == "ed25519 //Alice")
      alice_ed = c.at("public_key_hex").get<std::string>();
  REQUIRE_FALSE(alice_ed.empty());
  const auto ed = bt::keypair::from_uri("//Alice", bt::crypto_type::ed25519);
  CHECK(ed.type() == bt::crypto_type::ed25519);
  CHECK(bt::to_hex(ed.public_key()) == alice_ed);
  const auto ed_root = bt::keypair::from_uri("", bt::crypto_type::ed25519);
  CHECK(bt::to_hex(ed_root.public_key()) ==
        "345071da55e5dccefaaa440339415ef9f2663338a38f7da0df21be5ab4e055ef");
  CHECK_FALSE(bt::keypair::from_uri("//Alice/soft", bt::crypto_type::ed25519, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::unsupported_crypto));
  const auto sig = ed.sign(std::string_view("m"));
  CHECK(ed.verify("m", sig));
}
