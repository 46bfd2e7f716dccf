// Live cross-check of our sr25519 against an independent implementation:
// tests/node/sr25519_peer.mjs runs polkadot-js @polkadot/util-crypto (pure JS, @scure/sr25519)
// and @polkadot/wasm-crypto (Rust schnorrkel 0.11 in WASM). It verifies signatures made by our
// code on random messages and makes signatures that our code verifies. One node process, bounded
// by `timeout`. Missing node or node_modules FAILS the test: run scripts/setup.
#include <bt/sr25519.hpp>

#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include <catch2/catch.hpp>
#include <support/temp_dir.hpp>

#include <support/bytes.hpp>
#include <support/vectors.hpp>

#include <sodium.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using bt::test::shell_quote;
using bt::test::temp_dir;

constexpr int our_signatures = 300;       // verified by both node verifiers
constexpr int node_signing_rounds = 150;  // each gives two signatures (polkadot-js and wasm)
constexpr int tampered = 20;

std::vector<std::uint8_t> random_bytes(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  if (n) randombytes_buf(v.data(), n);
  return v;
}

template <std::size_t N>
std::array<std::uint8_t, N> random_array() {
  std::array<std::uint8_t, N> a;
  randombytes_buf(a.data(), N);
  return a;
}

std::vector<std::uint8_t> random_message() {
  return random_bytes(randombytes_uniform(257));
}

using bt::test::hex;

struct key {
  bt::sr25519::secret_key secret;
  bt::sr25519::public_key pub;
};

}  // namespace

TEST_CASE("sr25519 cross-check with polkadot-js and schnorrkel (wasm) in node", "[sr25519][node]") {
  bt::init_crypto();
  const fs::path node_dir = fs::path(bt::test::source_dir()) / "tests" / "node";
  const fs::path script = node_dir / "sr25519_peer.mjs";
  REQUIRE(fs::exists(script));
  INFO("node_modules missing: run scripts/setup (npm ci in tests/node)");
  REQUIRE(fs::exists(node_dir / "node_modules" / "@polkadot" / "util-crypto" / "package.json"));
  REQUIRE(fs::exists(node_dir / "node_modules" / "@polkadot" / "wasm-crypto" / "package.json"));
  INFO("node not found on PATH");
  REQUIRE(std::system("node --version > /dev/null 2>&1") == 0);

  // Our keys: freshly expanded ones, and derived ones whose scalars are not from an expansion.
  std::vector<key> keys;
  for (int i = 0; i < 6; ++i) {
    key k{bt::sr25519::expand_mini_secret(random_array<32>()), {}};
    k.pub = bt::sr25519::to_public(k.secret);
    keys.push_back(k);
  }
  for (int i = 0; i < 3; ++i) {
    const key& parent = keys[static_cast<std::size_t>(i)];
    key k{i == 2 ? bt::sr25519::derive_hard(parent.secret, random_array<32>())
                 : bt::sr25519::derive_soft(parent.secret, parent.pub, random_array<32>()),
          {}};
    k.pub = bt::sr25519::to_public(k.secret);
    keys.push_back(k);
  }

  temp_dir dir("bt-node-crosscheck");
  std::ofstream req(dir.path / "requests.jsonl");
  int id = 0;
  struct verify_expect {
    bool valid;
  };
  std::map<int, verify_expect> verify_ids;
  // 1. Node verifies our signatures (and rejects tampered ones).
  for (int i = 0; i < our_signatures + tampered; ++i) {
    const key& k = keys[static_cast<std::size_t>(i) % keys.size()];
    auto msg = random_message();
    const auto sig = bt::sr25519::sign(k.secret, k.pub, msg);
    const bool valid = i < our_signatures;
    if (!valid) msg.push_back(0x2e);
    req << bt::json{{"id", ++id},
                    {"op", "verify"},
                    {"public_key", bt::to_hex(k.pub)},
                    {"message", bt::to_hex(msg)},
                    {"signature", bt::to_hex(sig)}}
               .dump()
        << '\n';
    verify_ids[id] = {valid};
  }
  // 2. Node signs with seeds we also expand; we verify.
  struct sign_request {
    std::array<std::uint8_t, 32> seed;
    std::vector<std::uint8_t> message;
  };
  std::map<int, sign_request> sign_ids;
  std::vector<std::array<std::uint8_t, 32>> seeds;
  for (int i = 0; i < 10; ++i) seeds.push_back(random_array<32>());
  for (int i = 0; i < node_signing_rounds; ++i) {
    sign_request r{seeds[static_cast<std::size_t>(i) % seeds.size()], random_message()};
    req << bt::json{{"id", ++id},
                    {"op", "sign"},
                    {"seed", bt::to_hex(r.seed)},
                    {"message", bt::to_hex(r.message)}}
               .dump()
        << '\n';
    sign_ids[id] = r;
  }
  // 3. Node signs with our secret keys in the polkadot-js (ed25519) form, derived keys included.
  std::map<int, std::pair<std::size_t, std::vector<std::uint8_t>>> secret_ids;
  for (std::size_t i = 0; i < keys.size() * 2; ++i) {
    const key& k = keys[i % keys.size()];
    auto ed_form = bt::sr25519::to_ed25519_bytes(k.secret);
    auto msg = random_message();
    req << bt::json{{"id", ++id},
                    {"op", "sign_secret"},
                    {"secret_key", bt::to_hex(ed_form)},
                    {"public_key", bt::to_hex(k.pub)},
                    {"message", bt::to_hex(msg)}}
               .dump()
        << '\n';
    sodium_memzero(ed_form.data(), ed_form.size());
    secret_ids[id] = {i % keys.size(), msg};
  }
  // 4. Soft public derivation.
  std::map<int, bt::sr25519::public_key> derive_ids;
  for (std::size_t i = 0; i < 10; ++i) {
    const key& k = keys[i % keys.size()];
    const auto cc = random_array<32>();
    bt::sr25519::public_key derived{};
    REQUIRE_FALSE(bt::sr25519::derive_soft_public(k.pub, cc, derived));
    req << bt::json{{"id", ++id},
                    {"op", "derive_soft_public"},
                    {"public_key", bt::to_hex(k.pub)},
                    {"chain_code", bt::to_hex(cc)}}
               .dump()
        << '\n';
    derive_ids[id] = derived;
  }
  req.close();

  const fs::path out_path = dir.path / "responses.jsonl";
  const fs::path err_path = dir.path / "stderr.txt";
  const std::string cmd = "timeout 120 node " + shell_quote(script.string()) + " " +
                          shell_quote((dir.path / "requests.jsonl").string()) + " > " +
                          shell_quote(out_path.string()) + " 2> " + shell_quote(err_path.string());
  const int rc = std::system(cmd.c_str());
  std::ifstream err_in(err_path);
  std::stringstream err_text;
  err_text << err_in.rdbuf();
  INFO("node stderr: " << err_text.str());
  REQUIRE(rc == 0);

  std::ifstream in(out_path);
  std::string line;
  int responses = 0, node_verified = 0, node_rejected = 0, we_verified = 0;
  while (std::getline(in, line)) {
    const auto r = bt::json::parse(line, nullptr, false);
    REQUIRE_FALSE(r.is_discarded());
    INFO(line);
    REQUIRE_FALSE(r.contains("error"));
    const int rid = r.at("id").get<int>();
    ++responses;
    if (auto it = verify_ids.find(rid); it != verify_ids.end()) {
      CHECK(r.at("polkadot_js").get<bool>() == it->second.valid);
      CHECK(r.at("schnorrkel_wasm").get<bool>() == it->second.valid);
      (it->second.valid ? node_verified : node_rejected) += 1;
    } else if (auto s = sign_ids.find(rid); s != sign_ids.end()) {
      const auto sk = bt::sr25519::expand_mini_secret(s->second.seed);
      const auto pub = bt::sr25519::to_public(sk);
      CHECK(r.at("public_key").get<std::string>() == bt::to_hex(pub));
      CHECK(r.at("secret_key").get<std::string>() == bt::to_hex(bt::sr25519::to_ed25519_bytes(sk)));
      for (const char* who : {"polkadot_js", "schnorrkel_wasm"}) {
        INFO(who);
        const auto sig = hex(r.at(who));
        CHECK_FALSE(bt::sr25519::verify(pub, s->second.message, sig));
        auto other = s->second.message;
        other.push_back(0);
        CHECK(bt::sr25519::verify(pub, other, sig) == bt::key_errc::signature_mismatch);
        ++we_verified;
      }
    } else if (auto k = secret_ids.find(rid); k != secret_ids.end()) {
      const auto& pub = keys[k->second.first].pub;
      for (const char* who : {"polkadot_js", "schnorrkel_wasm"}) {
        INFO(who);
        CHECK_FALSE(bt::sr25519::verify(pub, k->second.second, hex(r.at(who))));
        ++we_verified;
      }
    } else if (auto d = derive_ids.find(rid); d != derive_ids.end()) {
      CHECK(r.at("polkadot_js").get<std::string>() == bt::to_hex(d->second));
      CHECK(r.at("schnorrkel_wasm").get<std::string>() == bt::to_hex(d->second));
    } else {
      FAIL("unexpected id " << rid);
    }
  }
  CHECK(responses == id);
  CHECK(node_verified == our_signatures);
  CHECK(node_rejected == tampered);
  CHECK(we_verified == 2 * node_signing_rounds + 2 * static_cast<int>(secret_ids.size()));
}
