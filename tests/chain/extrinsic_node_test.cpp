// Our signed serve_axon extrinsics against an independent decoder: for each of the four recorded
// runtimes (metadata V14, V15 and two V16), tests/node/chain_extrinsic_peer.mjs decodes the
// extrinsic with @polkadot/types and that runtime's metadata, and verifies the signature over
// the payload it rebuilds itself. Needs node and tests/node/node_modules (scripts/setup); when
// either is missing the test fails, never skips.
#include <bt/chain/extrinsic.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>

#include <catch2/catch.hpp>
#include <support/temp_dir.hpp>

#include <chain/decimal.hpp>
#include <chain/metadata_vectors.hpp>
#include <chain/polkadot_peer.hpp>
#include <support/dev_keys.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using bt::test::dec;
using bt::test::shell_quote;
using bt::test::temp_dir;

struct built {
  std::string name;
  bt::serve_axon_args args;
  bt::signing_context ctx;
  bt::signed_extrinsic x;
  std::vector<std::string> extensions;
};

}  // namespace

TEST_CASE("extrinsic: @polkadot/types decodes our serve_axon extrinsic and verifies its signature",
          "[extrinsic][node]") {
  const auto& hotkey = bt::test::bob();
  std::vector<built> all;
  bt::json cases = bt::json::array();
  for (const char* file : bt::test::metadata_files) {
    const auto md = bt::decode_metadata(bt::test::metadata_bytes(file));
    built b;
    b.name = file;
    b.args.netuid = 7;
    b.args.version = 10'002'000;
    b.args.ip_type = all.size() % 2 == 0 ? 4 : 6;  // both address families
    b.args.ip = b.args.ip_type == 4 ? bt::parse_ip("203.0.113.7")->first
                                    : bt::parse_ip("2001:db8:85a3::8a2e:370:7334")->first;
    b.args.port = 8091;
    b.args.protocol = 4;
    b.ctx.spec_version = file[10] == '4' || file[10] == '5' ? 343 : 365;
    b.ctx.transaction_version = 1;
    for (std::size_t i = 0; i < 32; ++i) {
      b.ctx.genesis_hash[i] = static_cast<std::uint8_t>(0x2f + 3 * i);
      b.ctx.era_block_hash[i] = static_cast<std::uint8_t>(0xc1 ^ i);
    }
    b.ctx.nonce = 70'000 + all.size();  // a four-byte compact
    b.ctx.era = bt::mortal_era::from_block(128, 6852690 + all.size());
    for (const auto& e : md.extensions) b.extensions.push_back(e.identifier);
    b.x = bt::sign_extrinsic(md, bt::encode_serve_axon_call(md, b.args), b.ctx, hotkey);
    cases.push_back({{"name", b.name},
                     {"metadata_path", bt::test::metadata_path(file)},
                     {"extrinsic_hex", "0x" + bt::to_hex(b.x.extrinsic)},
                     {"spec_version", b.ctx.spec_version},
                     {"transaction_version", b.ctx.transaction_version},
                     {"genesis_hash", "0x" + bt::to_hex(b.ctx.genesis_hash)},
                     {"block_hash", "0x" + bt::to_hex(b.ctx.era_block_hash)}});
    all.push_back(std::move(b));
  }

  temp_dir tmp("bt-chain-extrinsic");
  const fs::path cases_path = tmp.path / "cases.json";
  const fs::path out_path = tmp.path / "out.json";
  std::ofstream(cases_path) << cases.dump();
  const bt::json out = bt::test::run_polkadot_peer(
      "chain_extrinsic_peer.mjs", {cases_path.string(), out_path.string()}, out_path);
  REQUIRE(out.size() == all.size());

  for (std::size_t i = 0; i < all.size(); ++i) {
    const built& b = all[i];
    const bt::json& r = out[i];
    INFO(b.name << ": " << r.dump());
    CHECK(r.at("name") == b.name);
    CHECK(r.at("signed") == true);
    CHECK(r.at("version") == 0x84);
    CHECK(r.at("section") == "subtensorModule");
    CHECK(r.at("method") == "serveAxon");
    const bt::json& a = r.at("args");
    CHECK(a.at("netuid") == dec(b.args.netuid));
    CHECK(a.at("version") == dec(b.args.version));
    CHECK(a.at("ip") == dec(b.args.ip));
    CHECK(a.at("port") == dec(b.args.port));
    CHECK(a.at("ipType") == dec(b.args.ip_type));  // polkadot-js camelCases names
    CHECK(a.at("protocol") == dec(b.args.protocol));
    CHECK(a.at("placeholder1") == "0");
    CHECK(a.at("placeholder2") == "0");
    CHECK(a.size() == 8);
    CHECK(r.at("signer") == hotkey.ss58_address());
    CHECK(r.at("nonce") == dec(b.ctx.nonce));
    CHECK(r.at("tip") == "0");
    CHECK(r.at("era_period") == "128");
    CHECK(r.at("era_phase") == dec(b.ctx.era.phase));
    CHECK(r.at("encoded_length") == b.x.extrinsic.size());
    // The extensions, in order, as @polkadot/types reads them from the same metadata.
    CHECK(r.at("extensions").get<std::vector<std::string>>() == b.extensions);
    // The payload @polkadot/types rebuilds is the one we signed, and our signature verifies.
    CHECK(r.at("signing_payload_hex") == bt::to_hex(b.x.signing_payload));
    CHECK(r.at("signature_valid") == true);
  }
}
