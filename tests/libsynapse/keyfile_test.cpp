#include <bt/keyfile.hpp>

#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include <catch2/catch.hpp>
#include <support/temp_dir.hpp>

#include <support/bytes.hpp>
#include <support/vectors.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <map>
#include <set>

namespace {

using bt::test::temp_dir;

std::vector<std::uint8_t> unhex(const std::string& s) {
  auto v = bt::from_hex(s);
  REQUIRE(v.has_value());
  return *v;
}

using bt::test::bytes_of;

const bt::json& find_case(const bt::json& v, const std::string& kind) {
  for (const auto& c : v.at("cases"))
    if (c.at("kind").get<std::string>() == kind) return c;
  FAIL("no keyfiles.json case of kind " << kind);
  throw std::logic_error("unreachable");
}

// Keys with non-null values, for comparing a written file with the vector's fields (bt::json
// is ordered_json, whose == depends on key order; keyfiles do not).
std::map<std::string, std::string> non_null(const bt::json& obj) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : obj.items())
    if (!v.is_null()) out[k] = v.get<std::string>();
  return out;
}

void check_keypair(const bt::keypair& kp, const bt::json& expected) {
  CHECK(bt::to_hex(kp.public_key()) == expected.at("public_hex").get<std::string>());
  CHECK(kp.ss58_address() == expected.at("ss58_42").get<std::string>());
  if (expected.contains("mini_secret_hex")) {
    REQUIRE(kp.seed().has_value());
    CHECK(bt::to_hex(*kp.seed()) == expected.at("mini_secret_hex").get<std::string>());
  }
  if (expected.contains("secret_key_btwallet_hex_64")) {
    REQUIRE(kp.secret_key_bytes().has_value());
    CHECK(bt::to_hex(*kp.secret_key_bytes()) ==
          expected.at("secret_key_btwallet_hex_64").get<std::string>());
  }
}

}  // namespace

TEST_CASE("keyfiles.json: every plaintext case reads in both key orders", "[keyfile]") {
  const auto v = bt::test::load_vectors("keyfiles.json");
  std::set<std::string> kinds;
  for (const auto& c : v.at("cases")) {
    const auto kind = c.at("kind").get<std::string>();
    kinds.insert(kind);
    if (c.at("encrypted").get<bool>()) continue;  // the encrypted cases have their own test
    INFO(kind);
    std::vector<std::string> contents{c.at("contents_utf8").get<std::string>()};
    if (c.contains("contents_utf8_other_key_order"))
      contents.push_back(c.at("contents_utf8_other_key_order").get<std::string>());
    for (const auto& text : contents) {
      CHECK(bt::detect_keyfile_encryption(bytes_of(text)) == bt::keyfile_encryption::none);
      // The vector's "fields" are exactly what the file holds.
      CHECK(non_null(bt::json::parse(text)) == non_null(c.at("fields")));
      CHECK(bt::json::parse(text).size() == c.at("fields").size());
      bt::error err;
      const auto kp = bt::deserialize_keyfile(text, err);
      REQUIRE(kp.has_value());
      CHECK_FALSE(err);
      check_keypair(*kp, c.at("expected_keypair"));
      const auto& fields = c.at("fields");
      const bool has_secret = non_null(fields).count("secretPhrase") ||
                              non_null(fields).count("secretSeed") ||
                              non_null(fields).count("privateKey");
      CHECK(kp->has_secret() == has_secret);
      if (non_null(fields).count("secretPhrase")) {
        CHECK(kp->mnemonic() ==
              std::optional<std::string>(fields.at("secretPhrase").get<std::string>()));
      }
      // Writing it back gives the same fields (btwallet's form: compact, nulls omitted).
      const std::string written =
          has_secret ? bt::serialize_keyfile(*kp) : bt::serialize_public_keyfile(*kp);
      CHECK((written.find(' ') == std::string::npos || non_null(fields).count("secretPhrase") > 0));
      CHECK(written.back() == '}');
      CHECK(non_null(bt::json::parse(written)) == non_null(fields));
      // The public-only form holds exactly accountId, publicKey and ss58Address.
      const auto pub = bt::json::parse(bt::serialize_public_keyfile(*kp));
      CHECK(pub.size() == 3);
      CHECK(pub.at("ss58Address") == c.at("expected_keypair").at("ss58_42"));
    }
  }
  // Every kind in the file is one this suite knows (so a new kind cannot be skipped silently).
  const std::set<std::string> known = {"hotkey",
                                       "hotkeypub",
                                       "coldkeypub",
                                       "coldkey_encrypted_nacl",
                                       "coldkey_encrypted_nacl_wrong_password",
                                       "hotkey_without_mnemonic_or_seed",
                                       "legacy_python_hotkey",
                                       "legacy_python_coldkeypub"};
  CHECK(kinds == known);
}

TEST_CASE("keyfiles.json: the public-only form of a keypair", "[keyfile]") {
  const auto v = bt::test::load_vectors("keyfiles.json");
  const auto& hotkey = find_case(v, "hotkey");
  const auto& hotkeypub = find_case(v, "hotkeypub");
  bt::error err;
  const auto kp = bt::deserialize_keyfile(hotkey.at("contents_utf8").get<std::string>(), err);
  REQUIRE(kp.has_value());
  CHECK(non_null(bt::json::parse(bt::serialize_public_keyfile(*kp))) ==
        non_null(hotkeypub.at("fields")));
  // The x8 (polkadot-js) privateKey form is accepted when it matches publicKey.
  bt::json alt = bt::json::object();
  alt["privateKey"] =
      "0x" + hotkey.at("expected_keypair").at("secret_key_polkadot_js_hex_64").get<std::string>();
  alt["publicKey"] = hotkey.at("fields").at("publicKey");
  const auto from_x8 = bt::deserialize_keyfile(alt.dump(), err);
  REQUIRE(from_x8.has_value());
  CHECK(from_x8->public_key() == kp->public_key());
  CHECK(bt::to_hex(*from_x8->secret_key_bytes()) ==
        hotkey.at("expected_keypair").at("secret_key_btwallet_hex_64").get<std::string>());
  // The canonical form checked against ss58Address alone works too.
  bt::json by_address = bt::json::object();
  by_address["privateKey"] = hotkey.at("fields").at("privateKey");
  by_address["ss58Address"] = hotkey.at("fields").at("ss58Address");
  CHECK(bt::deserialize_keyfile(by_address.dump(), err).has_value());
}

TEST_CASE("keyfile reading precedence and rejections", "[keyfile]") {
  const auto v = bt::test::load_vectors("keyfiles.json");
  const auto& hotkey = find_case(v, "hotkey");
  const auto& other = find_case(v, "hotkey_without_mnemonic_or_seed");
  bt::error err;

  // secretPhrase wins over everything else, even a mismatching privateKey (as btwallet).
  bt::json doc = other.at("fields");
  doc["secretPhrase"] = hotkey.at("fields").at("secretPhrase");
  auto kp = bt::deserialize_keyfile(doc.dump(), err);
  REQUIRE(kp.has_value());
  CHECK(kp->ss58_address() == hotkey.at("expected_keypair").at("ss58_42").get<std::string>());

  // secretSeed wins over privateKey.
  doc = other.at("fields");
  doc["secretSeed"] = hotkey.at("fields").at("secretSeed");
  kp = bt::deserialize_keyfile(doc.dump(), err);
  REQUIRE(kp.has_value());
  CHECK(kp->ss58_address() == hotkey.at("expected_keypair").at("ss58_42").get<std::string>());

  // A privateKey that belongs to another public key is rejected.
  doc = other.at("fields");
  doc["publicKey"] = hotkey.at("fields").at("publicKey");
  CHECK_FALSE(bt::deserialize_keyfile(doc.dump(), err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_invalid));

  // Null fields are skipped; unknown keys ignored.
  doc = other.at("fields");
  doc["secretPhrase"] = nullptr;
  doc["secretSeed"] = nullptr;
  doc["comment"] = "ignored";
  kp = bt::deserialize_keyfile(doc.dump(), err);
  REQUIRE(kp.has_value());
  CHECK(kp->ss58_address() == other.at("expected_keypair").at("ss58_42").get<std::string>());

  const std::vector<std::pair<std::string, bt::key_errc>> bad = {
      {"", bt::key_errc::keyfile_invalid},
      {"not json", bt::key_errc::keyfile_invalid},
      {"[]", bt::key_errc::keyfile_invalid},
      {"{}", bt::key_errc::keyfile_invalid},
      {R"({"accountId":"0x00"})", bt::key_errc::keyfile_invalid},
      {R"({"ss58Address":5})", bt::key_errc::keyfile_invalid},
      {R"({"privateKey":"0xzz"})", bt::key_errc::keyfile_invalid},
      {R"({"privateKey":"0x1234"})", bt::key_errc::keyfile_invalid},
      {R"({"secretSeed":"0x1234"})", bt::key_errc::keyfile_invalid},
      {R"({"secretPhrase":"abandon abandon"})", bt::key_errc::mnemonic_word_count},
      {R"({"ss58Address":"5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQZ"})",
       bt::key_errc::ss58_bad_checksum},
      {"0x46ebddef8cd9bb167dc30878d7113b7e168e6f0646beffd77d69d39bad76b47a",
       bt::key_errc::keyfile_invalid},
  };
  for (const auto& [text, code] : bad) {
    INFO(text);
    CHECK_FALSE(bt::deserialize_keyfile(text, err).has_value());
    CHECK(err.code == bt::make_error_code(code));
    CHECK_FALSE(err.message().empty());
  }
}

TEST_CASE("keyfiles.json: the NaCl coldkey decrypts with its password", "[keyfile][argon2]") {
  const auto v = bt::test::load_vectors("keyfiles.json");
  const auto& c = find_case(v, "coldkey_encrypted_nacl");
  const auto file = unhex(c.at("file_hex").get<std::string>());
  REQUIRE(file.size() == c.at("file_length_bytes").get<std::size_t>());
  CHECK(bt::detect_keyfile_encryption(file) == bt::keyfile_encryption::nacl);
  CHECK(bt::is_keyfile_encrypted(file));
  CHECK(bt::to_hex(std::span(file).subspan(5, 24)) == c.at("nonce_hex").get<std::string>());
  CHECK(bt::to_hex(std::span(file).subspan(29, 16)) == c.at("mac_hex").get<std::string>());
  const auto& kdf = c.at("kdf");
  CHECK(bt::to_hex(bt::nacl_salt) == kdf.at("salt_hex").get<std::string>());
  CHECK(bt::keyfile_kdf{}.opslimit == kdf.at("opslimit").get<unsigned long long>());
  CHECK(bt::keyfile_kdf{}.memlimit == kdf.at("memlimit_bytes").get<std::size_t>());

  const auto password = c.at("password").get<std::string>();
  CHECK(bt::to_hex(bytes_of(password)) == c.at("password_utf8_hex").get<std::string>());
  bt::error err;
  // One Argon2i run (about a second, 512 MiB); the rest reuses the key.
  const auto key = bt::derive_keyfile_key(password, err);
  REQUIRE(key.has_value());
  CHECK(bt::to_hex(key->bytes) == c.at("derived_key_hex").get<std::string>());
  const auto plain = bt::decrypt_keyfile_data(file, *key, err);
  REQUIRE(plain.has_value());
  CHECK(*plain == c.at("plaintext_utf8").get<std::string>());
  CHECK(non_null(bt::json::parse(*plain)) == non_null(c.at("fields")));
  const auto kp = bt::deserialize_keyfile(*plain, err);
  REQUIRE(kp.has_value());
  check_keypair(*kp, c.at("expected_keypair"));

  // Encrypting again (same key, fresh nonce) round-trips and never reuses the nonce.
  const auto again = bt::encrypt_keyfile_data(bytes_of(*plain), *key);
  const auto again2 = bt::encrypt_keyfile_data(bytes_of(*plain), *key);
  CHECK(again.size() == file.size());
  CHECK(again != again2);
  CHECK(std::equal(again.begin(), again.begin() + 5, file.begin()));
  CHECK(bt::decrypt_keyfile_data(again, *key, err) == plain);

  // A flipped ciphertext byte is caught by the MAC.
  auto corrupted = file;
  corrupted.back() ^= 1;
  CHECK_FALSE(bt::decrypt_keyfile_data(corrupted, *key, err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_wrong_password));

  // No password for an encrypted file: reported without deriving anything.
  CHECK_FALSE(bt::keypair_from_keyfile_data(file, std::nullopt, err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_wrong_password));
}

TEST_CASE("keyfiles.json: a wrong password is reported as such", "[keyfile][argon2]") {
  const auto v = bt::test::load_vectors("keyfiles.json");
  const auto& c = find_case(v, "coldkey_encrypted_nacl");
  const auto& wrong = find_case(v, "coldkey_encrypted_nacl_wrong_password");
  const auto file = unhex(wrong.at("file_hex").get<std::string>());
  CHECK(wrong.at("encrypted").get<bool>());
  CHECK(wrong.at("expect").get<std::string>().find("Wrong password") != std::string::npos);
  bt::error err;
  // Its derived key (one Argon2i run), then the MAC check fails.
  REQUIRE(wrong.at("file_hex") == c.at("file_hex"));
  const auto wrong_key = bt::derive_keyfile_key(wrong.at("password").get<std::string>(), err);
  REQUIRE(wrong_key.has_value());
  CHECK(bt::to_hex(wrong_key->bytes) == wrong.at("derived_key_hex").get<std::string>());
  CHECK_FALSE(bt::decrypt_keyfile_data(file, *wrong_key, err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_wrong_password));
  CHECK(err.message().find("wrong password") != std::string::npos);
}

TEST_CASE("encrypted formats other than NaCl are reported as unsupported", "[keyfile]") {
  bt::error err;
  const std::string vault = "$ANSIBLE_VAULT;1.1;AES256\n3338...";
  const std::string fernet = "gAAAAABkxyz";
  CHECK(bt::detect_keyfile_encryption(bytes_of(vault)) == bt::keyfile_encryption::ansible_vault);
  CHECK(bt::detect_keyfile_encryption(bytes_of(fernet)) == bt::keyfile_encryption::legacy_fernet);
  for (const auto* text : {&vault, &fernet}) {
    CHECK_FALSE(bt::keypair_from_keyfile_data(bytes_of(*text), "pw", err).has_value());
    CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_invalid));
    CHECK(err.detail.find("not supported") != std::string::npos);
    // Rejected before the (expensive) key derivation.
    CHECK_FALSE(bt::decrypt_keyfile_data(bytes_of(*text), std::string_view("pw"), err).has_value());
    CHECK(err.detail.find("not supported") != std::string::npos);
  }
  const std::string truncated = "$NACL0123456789";
  CHECK_FALSE(
      bt::decrypt_keyfile_data(bytes_of(truncated), std::string_view("pw"), err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_invalid));
  CHECK(err.detail.find("truncated") != std::string::npos);
}

TEST_CASE("keyfile writes are atomic, 0600, and never clobber unless asked", "[keyfile]") {
  temp_dir dir("bt-keyfile-test");
  const auto path = dir.path / "hotkey";
  bt::error err;
  const std::string first = "first", second = "second";
  REQUIRE(bt::write_keyfile_bytes(path, bytes_of(first), false, err));
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto back = bt::read_keyfile_bytes(path, err);
  REQUIRE(back.has_value());
  CHECK(std::string(back->begin(), back->end()) == first);

  CHECK_FALSE(bt::write_keyfile_bytes(path, bytes_of(second), false, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_io));
  CHECK(err.detail.find("already exists") != std::string::npos);
  back = bt::read_keyfile_bytes(path, err);
  CHECK(std::string(back->begin(), back->end()) == first);

  REQUIRE(bt::write_keyfile_bytes(path, bytes_of(second), true, err));
  back = bt::read_keyfile_bytes(path, err);
  CHECK(std::string(back->begin(), back->end()) == second);
  // No temporary file is left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path)) ++files;
  CHECK(files == 1);

  CHECK_FALSE(bt::read_keyfile_bytes(dir.path / "missing", err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_not_found));
  CHECK_FALSE(bt::write_keyfile_bytes(dir.path / "no-such-dir" / "x", bytes_of(first), false, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_io));
  CHECK_FALSE(bt::read_keyfile_bytes(dir.path, err).has_value());  // a directory
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_io));
}

TEST_CASE("keyfile_exposure names who else may read or replace a keyfile, and the chmod",
          "[keyfile]") {
  temp_dir dir("bt-keyfile-exposure");
  const auto folder = dir.path / "hotkeys";
  std::filesystem::create_directory(folder);
  REQUIRE(::chmod(folder.c_str(), 0700) == 0);
  const auto path = folder / "miner";
  bt::error err;
  REQUIRE(bt::write_keyfile_bytes(path, bytes_of(std::string("{}")), false, err));
  CHECK(bt::keyfile_exposure(path).empty());  // 0600 in a 0700 folder: the owner's alone

  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  CHECK(bt::keyfile_exposure(path) ==
        "mode 0644 lets other users read it; run: chmod 600 " + path.string());
  REQUIRE(::chmod(path.c_str(), 0620) == 0);
  CHECK(bt::keyfile_exposure(path) ==
        "mode 0620 lets other users change it; run: chmod 600 " + path.string());

  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  REQUIRE(::chmod(folder.c_str(), 0777) == 0);
  CHECK(bt::keyfile_exposure(path) ==
        "mode 0666 lets other users read and change it, its folder " + folder.string() +
            " (mode 0777) lets other users replace it; run: chmod 600 " + path.string() +
            " && chmod 700 " + folder.string());

  // A sticky folder (as /tmp) lets no one else replace the file; a 0600 file in it is private.
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  REQUIRE(::chmod(folder.c_str(), 01777) == 0);
  CHECK(bt::keyfile_exposure(path).empty());
  REQUIRE(::chmod(folder.c_str(), 0770) == 0);
  CHECK(bt::keyfile_exposure(path) ==
        "its folder " + folder.string() +
            " (mode 0770) lets other users replace it; run: chmod 700 " + folder.string());
  REQUIRE(::chmod(folder.c_str(), 0700) == 0);

  CHECK(bt::keyfile_exposure(folder / "missing").empty());  // reading it reports that
}
