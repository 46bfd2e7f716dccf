#include <bt/wallet.hpp>

#include <bt/json.hpp>
#include <bt/keyfile.hpp>
#include <bt/keypair.hpp>
#include <bt/mnemonic.hpp>

#include <catch2/catch.hpp>
#include <support/temp_dir.hpp>

#include <support/vectors.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#include <fstream>

namespace {

using bt::test::temp_dir;

unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

// Sets an environment variable for the scope of a test and restores it afterwards.
struct scoped_env {
  std::string name;
  std::optional<std::string> old;
  scoped_env(std::string n, const char* value) : name(std::move(n)) {
    if (const char* o = std::getenv(name.c_str())) old = o;
    if (value)
      ::setenv(name.c_str(), value, 1);
    else
      ::unsetenv(name.c_str());
  }
  ~scoped_env() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("wallet layout, defaults and environment", "[wallet]") {
  {
    scoped_env a("BT_WALLET_PATH", nullptr), b("BT_WALLET_NAME", nullptr),
        c("BT_WALLET_HOTKEY", nullptr);
    const auto cfg = bt::wallet_config::from_env();
    CHECK(cfg.path == "~/.bittensor/wallets");
    CHECK(cfg.name == "default");
    CHECK(cfg.hotkey == "default");
  }
  {
    scoped_env a("BT_WALLET_PATH", "/w"), b("BT_WALLET_NAME", "cold"), c("BT_WALLET_HOTKEY", "");
    const auto cfg = bt::wallet_config::from_env();
    CHECK(cfg.path == "/w");
    CHECK(cfg.name == "cold");
    CHECK(cfg.hotkey == "default");  // empty means unset
    const bt::wallet w(cfg);
    CHECK(w.directory() == "/w/cold");
    CHECK(w.coldkey_path() == "/w/cold/coldkey");
    CHECK(w.coldkeypub_path() == "/w/cold/coldkeypub.txt");
    CHECK(w.hotkey_path() == "/w/cold/hotkeys/default");
    CHECK(w.hotkeypub_path() == "/w/cold/hotkeys/defaultpub.txt");
    CHECK(w.hotkey_path("miner1") == "/w/cold/hotkeys/miner1");
    // A config written out takes the environment for the fields it leaves out, as the tools and
    // Python's wallet do.
    CHECK(bt::wallet(bt::wallet_config{.name = "miner"}).directory() == "/w/miner");
    CHECK(bt::wallet_config{.path = "/x"}.name == "cold");
  }
  {
    scoped_env home("HOME", "/home/tester/"), path("BT_WALLET_PATH", nullptr),
        name("BT_WALLET_NAME", nullptr);
    CHECK(bt::expand_user("~") == "/home/tester/");
    CHECK(bt::expand_user("~/.bittensor/wallets") == "/home/tester/.bittensor/wallets");
    CHECK(bt::expand_user("/abs/~") == "/abs/~");
    CHECK(bt::expand_user("rel") == "rel");
    CHECK(bt::expand_user("~no-such-user-bt/x") == "~no-such-user-bt/x");
    CHECK(bt::wallet(bt::wallet_config{}).directory() == "/home/tester/.bittensor/wallets/default");
  }
  for (const char* bad : {"", ".", "..", "a/b"}) {
    CHECK_THROWS_AS(bt::wallet(bt::wallet_config{.name = bad}), std::invalid_argument);
    CHECK_THROWS_AS(bt::wallet(bt::wallet_config{.hotkey = bad}), std::invalid_argument);
  }
}

TEST_CASE("a wallet written here reads back, with 0600 files and 0700 directories",
          "[wallet][argon2]") {
  temp_dir tmp("bt-wallet-test");
  const bt::wallet w(
      bt::wallet_config{.path = (tmp.path / "wallets").string(), .name = "alice", .hotkey = "hk1"});
  bt::error err;

  // Nothing there yet: each missing piece is reported as such.
  CHECK_FALSE(w.load_hotkey(err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_not_found));
  CHECK_FALSE(w.coldkeypub_ss58(err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_not_found));
  CHECK_THROWS_AS(w.load_hotkey(), std::system_error);

  const auto phrase = bt::generate_mnemonic(12);
  const auto cold = bt::keypair::from_mnemonic(phrase);
  const auto hot = bt::keypair::from_uri("//Alice");
  const std::string password = "correct horse battery staple";

  REQUIRE(w.write_hotkey(hot, false, err));
  REQUIRE(w.write_coldkey(cold, password, false, err));

  CHECK(mode_of(tmp.path / "wallets") == 0700);
  CHECK(mode_of(w.directory()) == 0700);
  CHECK(mode_of(w.directory() / "hotkeys") == 0700);
  for (const auto& p :
       {w.coldkey_path(), w.coldkeypub_path(), w.hotkey_path(), w.hotkeypub_path()}) {
    INFO(p);
    CHECK(mode_of(p) == 0600);
  }

  // Hotkey: plaintext, reads back to the same key, signs.
  const auto hk = w.load_hotkey();
  CHECK(hk.ss58_address() == "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY");
  CHECK(hk.has_secret());
  CHECK(hot.verify("m", hk.sign(std::string_view("m"))));
  const auto hk_bytes = bt::read_keyfile_bytes(w.hotkey_path(), err).value();
  CHECK_FALSE(bt::is_keyfile_encrypted(hk_bytes));
  const auto hk_pub = bt::read_keyfile_bytes(w.hotkeypub_path(), err).value();
  CHECK(bt::json::parse(std::string(hk_pub.begin(), hk_pub.end())).size() == 3);

  // Coldkey public part.
  CHECK(w.coldkeypub_ss58(err) == std::optional<std::string>(cold.ss58_address()));

  // Coldkey: encrypted; the right password opens it, a wrong or missing one does not.
  CHECK(w.coldkey_encrypted(err) == std::optional<bool>(true));
  const auto ck = w.load_coldkey(password, err);
  REQUIRE(ck.has_value());
  CHECK(ck->ss58_address() == cold.ss58_address());
  CHECK(ck->mnemonic() == std::optional<std::string>(phrase));
  // (A wrong password costs another Argon2i run: keyfile_test and the bt-wallet test cover it.)
  CHECK_FALSE(w.load_coldkey(std::nullopt, err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_wrong_password));

  // No clobbering without overwrite; with it, replaced (here by an unencrypted coldkey).
  CHECK_FALSE(w.write_hotkey(cold, false, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_io));
  CHECK(w.load_hotkey().ss58_address() == hot.ss58_address());
  const auto cold2 = bt::keypair::from_uri("//Bob");
  REQUIRE(w.write_coldkey(cold2, std::nullopt, true, err));
  CHECK(w.coldkey_encrypted(err) == std::optional<bool>(false));
  CHECK(w.load_coldkey(std::nullopt, err)->ss58_address() == cold2.ss58_address());
  CHECK(w.coldkeypub_ss58(err) == std::optional<std::string>(cold2.ss58_address()));

  // Public-only keypairs cannot be written as secret keys.
  CHECK_FALSE(w.write_hotkey(bt::keypair::from_ss58(cold.ss58_address()), true, err));
  CHECK(err.code == bt::make_error_code(bt::key_errc::invalid_secret_key));

  // Listing.
  REQUIRE(w.write_hotkey(cold, false, err) == false);
  const bt::wallet w2(bt::wallet_config{.path = w.config().path, .name = "alice", .hotkey = "hk2"});
  REQUIRE(w2.write_hotkey(bt::keypair::from_uri("//Charlie"), false, err));
  CHECK(w.hotkey_names() == std::vector<std::string>{"hk1", "hk2"});
  const bt::wallet w3(bt::wallet_config{.path = w.config().path, .name = "bob"});
  REQUIRE(w3.write_coldkeypub(cold2, false, err));
  CHECK(bt::list_wallets(w.config().path) == std::vector<std::string>{"alice", "bob"});
  CHECK(w3.hotkey_names().empty());
  CHECK_FALSE(w3.load_hotkey(err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_not_found));
}

TEST_CASE("wallet reads files written by btwallet and by bittensor 7", "[wallet]") {
  const auto v = bt::test::load_vectors("keyfiles.json");
  temp_dir tmp("bt-wallet-test");
  const bt::wallet w(bt::wallet_config{.path = tmp.path.string(), .name = "w", .hotkey = "h"});
  std::filesystem::create_directories(w.directory() / "hotkeys");
  auto put = [](const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  };
  for (const auto& c : v.at("cases")) {
    const auto kind = c.at("kind").get<std::string>();
    if (kind != "hotkey" && kind != "legacy_python_hotkey" && kind != "coldkeypub" &&
        kind != "legacy_python_coldkeypub")
      continue;
    INFO(kind);
    bt::error err;
    const auto text = c.at("contents_utf8").get<std::string>();
    if (kind.find("hotkey") != std::string::npos) {
      put(w.hotkey_path(), text);
      const auto kp = w.load_hotkey(err);
      REQUIRE(kp.has_value());
      CHECK(kp->ss58_address() == c.at("expected_keypair").at("ss58_42").get<std::string>());
    } else {
      put(w.coldkeypub_path(), text);
      CHECK(w.coldkeypub_ss58(err) ==
            std::optional<std::string>(c.at("expected_keypair").at("ss58_42").get<std::string>()));
    }
  }
  bt::error err;
  put(w.hotkey_path(), "{broken");
  CHECK_FALSE(w.load_hotkey(err).has_value());
  CHECK(err.code == bt::make_error_code(bt::key_errc::keyfile_invalid));
  CHECK(err.message().find(w.hotkey_path().string()) != std::string::npos);
}
