// `bt-chain serve-axon --dry-run` end to end: the fake-subtensor program serves the recorded head
// (block 6852690) and, for each of the four recorded runtimes, that runtime's metadata and
// version; bt-chain prints the signed extrinsic, and tests/node/chain_extrinsic_peer.mjs
// (@polkadot/types) decodes it with the same metadata, checks the call and its arguments, and
// verifies the signature over the payload it rebuilds, which must equal the printed one.
// Without --dry-run: the fake accepts any author_submitExtrinsic and, only once one was received,
// serves SubtensorModule.Axons(netuid, hotkey) with the AxonInfo the test expects (or another).
// Registered by tests/chain_serve_axon_cli.cmake. Needs node and tests/node/node_modules
// (scripts/setup); when either is missing the test fails, never skips.
#include <bt/chain/hashing.hpp>
#include <bt/chain/uint128.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include "chain/metadata_vectors.hpp"
#include "chain/polkadot_peer.hpp"
#include "chain/run_bt_chain.hpp"
#include "proc.hpp"
#include "support/vectors.hpp"

#include <catch2/catch.hpp>
#include <support/temp_dir.hpp>

#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using bt::test::shell_quote;
using bt::test::temp_dir;

using namespace std::chrono_literals;

constexpr const char* head_hash =
    "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0";
constexpr const char* genesis =
    "0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03";

/// The answers serve-axon needs beyond the recorded session, for one runtime.
fs::path write_session(const fs::path& dir, const std::string& metadata_file, int spec,
                       const std::string& ss58, std::uint64_t nonce) {
  const bt::json calls = bt::json::array({
      {{"method", "chain_getBlockHash"},
       {"params", bt::json::array({0})},
       {"response", {{"result", genesis}}}},
      {{"method", "state_getRuntimeVersion"},
       {"params", bt::json::array({head_hash})},
       {"response", {{"result", {{"specVersion", spec}, {"transactionVersion", 1}}}}}},
      {{"method", "state_getMetadata"},
       {"params", bt::json::array({head_hash})},
       {"response", {{"result", "0x" + bt::to_hex(bt::test::metadata_bytes(metadata_file))}}}},
      {{"method", "system_accountNextIndex"},
       {"params", bt::json::array({ss58})},
       {"response", {{"result", nonce}}}},
  });
  const fs::path path = dir / ("session_" + metadata_file + ".json");
  std::ofstream(path) << bt::json{{"calls", calls}}.dump();
  return path;
}

struct fake_node {
  bt::perf::child_process child;
  std::string url;
  explicit fake_node(const fs::path& extra_session)
      : child(bt::perf::child_process::spawn(
            {BT_FAKE_SUBTENSOR_EXE, "--session",
             bt::test::vectors_dir() + "/chain/session_sn1_block6852690.json", "--session",
             extra_session.string()})) {
    auto line = child.read_line(10s);
    REQUIRE(line);
    url = bt::json::parse(*line).at("url").get<std::string>();
  }
  ~fake_node() { child.stop(); }
};

}  // namespace

TEST_CASE(
    "bt-chain serve-axon --dry-run: @polkadot/types decodes and verifies it, for each "
    "recorded runtime",
    "[chain][cli][node]") {
  const auto bob = bt::keypair::from_uri("//Bob");
  temp_dir tmp("bt-serve-axon");
  bt::json cases = bt::json::array();
  std::vector<bt::json> printed;
  int i = 0;
  for (const char* file : bt::test::metadata_files) {
    INFO(file);
    const int spec = std::string(file).find("spec393") != std::string::npos   ? 393
                     : std::string(file).find("spec365") != std::string::npos ? 365
                                                                              : 343;
    const std::uint64_t nonce = 40 + i;
    fake_node node(write_session(tmp.path, file, spec, bob.ss58_address(), nonce));
    const std::string ip = i % 2 == 0 ? "203.0.113.7" : "2001:db8::7";
    const auto r = bt::test::run_bt_chain("serve-axon --netuid 1 --ip " + ip +
                                          " --port 8091 --uri //Bob --dry-run " +
                                          "--subtensor.chain_endpoint " + node.url);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const bt::json j = bt::json::parse(r.out);
    CHECK(j.size() == 7);
    CHECK(j.at("spec_version") == spec);
    CHECK(j.at("transaction_version") == 1);
    CHECK(j.at("nonce") == nonce);
    CHECK(j.at("era_block") == 6852690);
    cases.push_back({{"name", file},
                     {"metadata_path", bt::test::metadata_path(file)},
                     {"extrinsic_hex", j.at("extrinsic_hex")},
                     {"spec_version", spec},
                     {"transaction_version", 1},
                     {"genesis_hash", genesis},
                     {"block_hash", head_hash}});
    printed.push_back(j);
    ++i;
  }

  const fs::path cases_path = tmp.path / "cases.json";
  const fs::path out_path = tmp.path / "out.json";
  std::ofstream(cases_path) << cases.dump();
  const bt::json out = bt::test::run_polkadot_peer(
      "chain_extrinsic_peer.mjs", {cases_path.string(), out_path.string()}, out_path);
  REQUIRE(out.size() == printed.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const bt::json& r = out[k];
    INFO(r.dump());
    CHECK(r.at("section") == "subtensorModule");
    CHECK(r.at("method") == "serveAxon");
    CHECK(r.at("signer") == bob.ss58_address());
    const bt::json& a = r.at("args");
    CHECK(a.at("netuid") == "1");
    CHECK(a.at("version") == "10002000");
    CHECK(a.at("port") == "8091");
    CHECK(a.at("ipType") == (k % 2 == 0 ? "4" : "6"));
    CHECK(a.at("ip") == (k % 2 == 0 ? "3405803783" : "42540766411282592856903984951653826567"));
    CHECK(a.at("protocol") == "4");
    CHECK(r.at("nonce") == std::to_string(40 + k));
    CHECK(r.at("era_period") == "128");
    CHECK("0x" + r.at("signing_payload_hex").get<std::string>() ==
          printed[k].at("signing_payload_hex"));
    CHECK(r.at("signature_valid") == true);
  }
}

namespace {

/// SCALE of subtensor's AxonInfo: block u64, version u32, ip u128, port u16, ip_type u8,
/// protocol u8, placeholder1 u8, placeholder2 u8 (little-endian), written by hand.
std::string axon_info_hex(std::uint64_t block, std::uint32_t version, std::uint32_t ipv4,
                          std::uint16_t port, std::uint8_t ip_type, std::uint8_t protocol) {
  std::vector<std::uint8_t> b;
  auto le = [&b](bt::uint128_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  le(block, 8);
  le(version, 4);
  le(ipv4, 16);
  le(port, 2);
  le(ip_type, 1);
  le(protocol, 1);
  le(0, 2);
  return "0x" + bt::to_hex(b);
}

/// The submission's answers: any extrinsic is accepted; the Axons entry of `hotkey` on subnet 1
/// is empty (null) until one was submitted, then `stored_hex`.
fs::path write_submit_session(const fs::path& dir, const bt::keypair& hotkey,
                              const std::string& stored_hex) {
  const std::string key = "0x" + bt::to_hex(bt::axons_storage_key(1, hotkey.public_key()));
  const bt::json calls = bt::json::array({
      {{"method", "author_submitExtrinsic"},
       {"params", "*"},
       {"response", {{"result", "0x" + std::string(64, 'e')}}}},
      {{"method", "state_getStorage"}, {"params", "*"}, {"response", {{"result", nullptr}}}},
      {{"method", "state_getStorage"},
       {"params", bt::json::array({key})},
       {"after", "author_submitExtrinsic"},
       {"response", {{"result", stored_hex}}}},
  });
  const fs::path path = dir / "submit.json";
  std::ofstream(path) << bt::json{{"calls", calls}}.dump();
  return path;
}

struct submit_node {
  bt::perf::child_process child;
  std::string url;
  submit_node(const fs::path& runtime, const fs::path& submit)
      : child(bt::perf::child_process::spawn(
            {BT_FAKE_SUBTENSOR_EXE, "--session",
             bt::test::vectors_dir() + "/chain/session_sn1_block6852690.json", "--session",
             runtime.string(), "--session", submit.string()})) {
    auto line = child.read_line(10s);
    REQUIRE(line);
    url = bt::json::parse(*line).at("url").get<std::string>();
  }
  ~submit_node() { child.stop(); }
};

}  // namespace

TEST_CASE("bt-chain serve-axon submits, then confirms the axon from storage", "[chain][cli]") {
  const auto bob = bt::keypair::from_uri("//Bob");
  temp_dir tmp("bt-serve-axon-submit");
  const fs::path runtime =
      write_session(tmp.path, "metadata_v16_spec393.hex", 393, bob.ss58_address(), 7);
  // 203.0.113.7 = 0xCB007107; version 10002000 is the version_as_int this build speaks (the
  // dry-run test checks the same value in the call).
  const std::uint32_t ip = 0xCB007107u;

  SECTION("storage shows the served axon: success, one JSON object") {
    submit_node node(runtime, write_submit_session(
                                  tmp.path, bob, axon_info_hex(6852691, 10002000, ip, 8091, 4, 4)));
    const auto r = bt::test::run_bt_chain(
        "serve-axon --netuid 1 --ip 203.0.113.7 --port 8091 --uri //Bob --confirm-timeout 10 "
        "--subtensor.chain_endpoint " +
        node.url);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find('\n') == r.out.size() - 1);
    const bt::json j = bt::json::parse(r.out);
    CHECK(j.at("extrinsic_hash") == "0x" + std::string(64, 'e'));
    CHECK(j.at("netuid") == 1);
    CHECK(j.at("hotkey") == bob.ss58_address());
    CHECK(j.at("ip") == "203.0.113.7");
    CHECK(j.at("port") == 8091);
    CHECK(j.at("ip_type") == 4);
    CHECK(j.at("protocol") == 4);
    CHECK(j.at("version") == 10002000);
  }
  SECTION("storage keeps another axon: a timeout error naming the extrinsic, exit 2") {
    // The stored port is 9999, not 8091: never a match.
    submit_node node(runtime, write_submit_session(
                                  tmp.path, bob, axon_info_hex(6852691, 10002000, ip, 9999, 4, 4)));
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = bt::test::run_bt_chain(
        "serve-axon --netuid 1 --ip 203.0.113.7 --port 8091 --uri //Bob --confirm-timeout 1 "
        "--subtensor.chain_endpoint " +
        node.url);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    const std::string msg = bt::json::parse(r.err).at("error").get<std::string>();
    CHECK(msg.find("SubtensorModule.Axons did not show the served axon within 1000 ms") !=
          std::string::npos);
    CHECK(msg.find("0x" + std::string(64, 'e')) != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < 30s);  // no hang
  }
  SECTION("a stored AxonInfo cut short: an error naming the field that is missing") {
    // 30 of the 34 bytes: block, version, ip and port; ip_type is missing.
    std::string cut = axon_info_hex(6852691, 10002000, ip, 8091, 4, 4);
    cut.resize(cut.size() - 8);
    submit_node node(runtime, write_submit_session(tmp.path, bob, cut));
    const auto r = bt::test::run_bt_chain(
        "serve-axon --netuid 1 --ip 203.0.113.7 --port 8091 --uri //Bob --confirm-timeout 10 "
        "--subtensor.chain_endpoint " +
        node.url);
    INFO(r.err);
    CHECK(r.status != 0);
    CHECK(r.out.empty());
    CHECK(r.err.find("AxonInfo.ip_type") != std::string::npos);
  }
}

TEST_CASE("bt-chain serve-axon refuses locally what the chain would refuse", "[chain][cli]") {
  // No node at all: the refusal comes before any connection.
  for (const std::string& bad :
       {std::string("--ip 127.0.0.1 --port 8091"), std::string("--ip 0.0.0.0 --port 8091"),
        std::string("--ip ::1 --port 8091"), std::string("--ip 203.0.113.7 --port 0"),
        std::string("--ip not-an-ip --port 8091")}) {
    INFO(bad);
    const auto r = bt::test::run_bt_chain(
        "serve-axon --netuid 1 " + bad +
        " --uri //Bob --dry-run --subtensor.chain_endpoint ws://127.0.0.1:1");
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    const bt::json e = bt::json::parse(r.err);
    CHECK(e.contains("error"));
    CHECK(r.err.find("127.0.0.1:1") == std::string::npos);  // not a connection error
  }
}
