// `bt-chain metagraph` end to end: the fake-subtensor program replays the recorded mainnet
// session (subnet 1 at block 6852690) on loopback, and bt-chain reads the metagraph from it.
// Registered by tests/chain_cli.cmake.
#include <bt/json.hpp>

#include "chain/run_bt_chain.hpp"
#include "proc.hpp"
#include "support/vectors.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace {

using namespace std::chrono_literals;

/// bt-chain with `args`: status, stdout, stderr.
bt::test::bt_chain_result run(const std::string& args) {
  return bt::test::run_bt_chain(args);
}

/// The fake-subtensor program on port 0; url() from its first stdout line.
struct fake_node {
  bt::perf::child_process child;
  std::string url;
  explicit fake_node(std::vector<std::string> extra = {})
      : child(bt::perf::child_process::spawn([&] {
          std::vector<std::string> argv{
              BT_FAKE_SUBTENSOR_EXE, "--session",
              bt::test::vectors_dir() + "/chain/session_sn1_block6852690.json"};
          argv.insert(argv.end(), extra.begin(), extra.end());
          return argv;
        }())) {
    auto line = child.read_line(10s);
    REQUIRE(line);
    url = bt::json::parse(*line).at("url").get<std::string>();
  }
  ~fake_node() { child.stop(); }
};

}  // namespace

TEST_CASE("bt-chain metagraph --json reads subnet 1 at block 6852690 from the fake node",
          "[chain][cli]") {
  fake_node node;
  auto r =
      run("metagraph --netuid 1 --block 6852690 --json --subtensor.chain_endpoint " + node.url);
  INFO(r.err);
  REQUIRE(r.status == 0);
  // Exactly one JSON object: one line, nothing after it.
  REQUIRE(!r.out.empty());
  CHECK(r.out.find('\n') == r.out.size() - 1);
  const bt::json j = bt::json::parse(r.out);
  CHECK(j.at("netuid") == 1);
  CHECK(j.at("block") == 6852690);
  CHECK(j.at("block_hash") == "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0");
  CHECK(j.at("n") == 1024);
  REQUIRE(j.at("neurons").size() == 1024);
  // uid 0, read by hand from the recorded hex (see tests/chain/subtensor_test.cpp): keys in
  // SS58 computed with Python's hashlib, the axon's fields from their byte offsets.
  const bt::json& n0 = j.at("neurons").at(0);
  CHECK(n0.at("uid") == 0);
  CHECK(n0.at("hotkey") == "5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ");
  CHECK(n0.at("coldkey") == "5EhQWxcFdYAk7B9tNdQnJQFzww5N3964rbsMk55SujcX3PwM");
  CHECK(n0.at("axon").at("ip") == "192.222.59.109");
  CHECK(n0.at("axon").at("port") == 6028);
  CHECK(n0.at("axon").at("ip_type") == 4);
  CHECK(n0.at("axon").at("serving") == true);
  for (const char* k : {"uid", "hotkey", "coldkey", "active", "validator_permit", "stake_rao",
                        "alpha_stake_rao", "tao_stake_rao", "axon"}) {
    CHECK(n0.contains(k));
  }
  CHECK_FALSE(j.contains("stake_source"));
}

TEST_CASE("bt-chain metagraph prints a table without --json", "[chain][cli]") {
  fake_node node;
  auto r = run("metagraph --netuid 1 --subtensor.chain_endpoint " + node.url);
  REQUIRE(r.status == 0);
  CHECK(r.out.starts_with("subnet 1 at block 6852690"));
  CHECK(r.out.find("5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ") != std::string::npos);
  CHECK(r.out.find("192.222.59.109:6028") != std::string::npos);
}

TEST_CASE("bt-chain: usage errors exit 2 with a JSON error naming the word or the option",
          "[chain][cli]") {
  SECTION("a misspelt command: named, with the commands there are") {
    auto r = run("metagrap --netuid 1");
    CHECK(r.status == 2);
    const std::string msg = bt::json::parse(r.err).at("error").get<std::string>();
    CHECK(msg.find("unknown command 'metagrap'") != std::string::npos);
    CHECK(msg.find("metagraph") != std::string::npos);
    CHECK(msg.find("serve-axon") != std::string::npos);
  }
  SECTION("a value that is not a number, and a negative one for an unsigned option") {
    for (const char* bad : {"abc", "-1"}) {
      CAPTURE(bad);
      auto r = run(std::string("metagraph --netuid ") + bad);
      CHECK(r.status == 2);
      const std::string msg = bt::json::parse(r.err).at("error").get<std::string>();
      CHECK(msg.find("--netuid") != std::string::npos);
      CHECK(msg.find(bad) != std::string::npos);
    }
  }
  SECTION("--help is not an error") {
    auto r = run("--help");
    CHECK(r.status == 0);
    CHECK(r.out.find("serve-axon") != std::string::npos);
  }
}

TEST_CASE("bt-chain metagraph: failures exit 2 with a JSON error naming what failed",
          "[chain][cli]") {
  SECTION("an unknown network name") {
    auto r = run("metagraph --netuid 1 --subtensor.network mainnet");
    CHECK(r.status == 2);
    const bt::json e = bt::json::parse(r.err);
    CHECK(e.at("error").get<std::string>().find("--subtensor.network") != std::string::npos);
  }
  SECTION("a bad endpoint URL") {
    auto r = run("metagraph --netuid 1 --subtensor.chain_endpoint http://127.0.0.1:1");
    CHECK(r.status == 2);
    CHECK(bt::json::parse(r.err).at("error").get<std::string>().find("unsupported scheme") !=
          std::string::npos);
  }
  SECTION("a subnet the recording has no answer for: the method and the endpoint") {
    fake_node node;
    auto r = run("metagraph --netuid 2 --block 6852690 --subtensor.chain_endpoint " + node.url);
    CHECK(r.status == 2);
    const std::string msg = bt::json::parse(r.err).at("error").get<std::string>();
    CHECK(msg.find("state_call NeuronInfoRuntimeApi_get_neurons_lite") != std::string::npos);
    CHECK(msg.find(node.url) != std::string::npos);
  }
  SECTION("a node that closes the connection mid-answer") {
    fake_node node({"--fault", "state_call=close"});
    auto r = run("metagraph --netuid 1 --block 6852690 --subtensor.chain_endpoint " + node.url);
    CHECK(r.status == 2);
    CHECK(bt::json::parse(r.err).at("error").get<std::string>().find("connection closed") !=
          std::string::npos);
  }
  SECTION("a slow node: --timeout bounds the wait") {
    fake_node node({"--fault", "state_call=delay:5000"});
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run("metagraph --netuid 1 --block 6852690 --timeout 0.3 --subtensor.chain_endpoint " +
                 node.url);
    CHECK(r.status == 2);
    CHECK(bt::json::parse(r.err).at("error").get<std::string>().find("timed out") !=
          std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < 4s);
  }
  SECTION("an answer over --subtensor.max_frame_mib: refused, naming the limit") {
    // 2 MB frames (a hex string of zeros): read under the default of 8 MiB (and then not a
    // neuron list), refused under a limit of 1 MiB.
    fake_node node({"--fault", "state_call=oversized:2000000"});
    auto r =
        run("metagraph --netuid 1 --block 6852690 --subtensor.max_frame_mib 1 "
            "--subtensor.chain_endpoint " +
            node.url);
    CHECK(r.status == 2);
    CHECK(bt::json::parse(r.err).at("error").get<std::string>().find(
              "exceeds the limit of 1048576 bytes") != std::string::npos);
    r = run("metagraph --netuid 1 --block 6852690 --subtensor.chain_endpoint " + node.url);
    CHECK(r.status == 2);
    CHECK(bt::json::parse(r.err).at("error").get<std::string>().find("exceeds the limit") ==
          std::string::npos);
    r = run("metagraph --netuid 1 --subtensor.max_frame_mib 0 --subtensor.chain_endpoint " +
            node.url);
    CHECK(r.status == 2);
  }
  SECTION("nothing listening") {
    auto r = run("metagraph --netuid 1 --timeout 2 --subtensor.chain_endpoint ws://127.0.0.1:1");
    CHECK(r.status == 2);
    CHECK(bt::json::parse(r.err).at("error").get<std::string>().find("cannot connect") !=
          std::string::npos);
  }
}
