// The ctest of examples/first_validator.cpp: the validator reads its targets from a subtensor
// node, here the tests' fake-subtensor replaying a small subnet written below (three neurons: one
// never served, one served at 127.0.0.1 on an in-process Dummy miner, one served without a port),
// and queries the one served, routable axon. Then: a node it cannot reach, and a subnet the node
// does not know, each said with exit status 1; a bad NETUID gives the usage and exit status 2.
//
//   example_first_validator_check <example_first_validator> <fake-subtensor>
#include <bt/axon.hpp>
#include <bt/chain/scale_writer.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>
#include <bt/keypair.hpp>
#include <bt/wallet.hpp>

#include <proc.hpp>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok: " : "FAILED: ") << what << std::endl;
  if (!ok) ++failures;
}

// One NeuronInfoLite of subnet 1 in the runtime's encoding (docs/chain.md, "Layouts").
void write_neuron(bt::scale_writer& w, const bt::keypair& hotkey, std::uint16_t uid,
                  bt::uint128_t ip, std::uint16_t port) {
  const auto cold = bt::keypair::from_uri("//Ferdie");
  w.bytes(hotkey.public_key());
  w.bytes(cold.public_key());
  w.compact(uid);
  w.compact(1);     // netuid
  w.boolean(true);  // active
  w.u64(1);         // axon_info: block
  w.u32(100);       // version
  w.u128(ip);       // 0: never served
  w.u16(port);
  w.u8(4);  // ip_type
  w.u8(4);  // protocol
  w.u8(0);
  w.u8(0);
  w.u64(0);  // prometheus_info: block, version, ip, port, ip_type
  w.u32(0);
  w.u128(0);
  w.u16(0);
  w.u8(0);
  w.length(0);                               // stake
  for (int i = 0; i < 8; ++i) w.compact(0);  // rank ... last_update
  w.boolean(false);                          // validator_permit
  w.compact(0);                              // pruning_score
}

// The calls bt::read_metagraph makes, answered for a head at block 7: its get_neurons_lite the
// three neurons, its get_subnet_state an error (a runtime without it: the stake fallback).
bt::json session(const std::string& neurons_hex) {
  const std::string head = "0x" + std::string(64, '7');
  auto call = [](const std::string& method, bt::json params, bt::json response) {
    return bt::json{{"method", method}, {"params", std::move(params)}, {"response", response}};
  };
  bt::json calls = bt::json::array();
  calls.push_back(call("chain_getHead", bt::json::array(), {{"result", head}}));
  calls.push_back(call("chain_getHeader", {head}, {{"result", {{"number", "0x7"}}}}));
  calls.push_back(call("state_call", {"NeuronInfoRuntimeApi_get_neurons_lite", "0100", head},
                       {{"result", neurons_hex}}));
  calls.push_back(call("state_call", {"SubnetInfoRuntimeApi_get_subnet_state", "0100", head},
                       {{"error", {{"code", 4003}, {"message", "not found"}}}}));
  return bt::json{{"calls", calls}};
}

// Runs the validator with `args`; its stdout lines and exit status.
std::pair<std::vector<std::string>, int> run(const std::string& exe,
                                             const std::vector<std::string>& args) {
  using namespace std::chrono_literals;
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = bt::perf::child_process::spawn(argv);
  std::vector<std::string> lines;
  while (auto line = p.read_line(60s)) lines.push_back(*line);
  return {lines, p.stop(30s)};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  if (argc != 3) {
    std::cerr
        << "usage: example_first_validator_check <example_first_validator> <fake-subtensor>\n";
    return 2;
  }
  const auto bob = bt::keypair::from_uri("//Bob");
  bt::axon miner(bob, bt::axon_options::loopback());
  miner.attach<bt::examples::dummy>(
      [](bt::examples::dummy& d) { d.dummy_output = d.dummy_input * 2; });
  miner.start();

  bt::scale_writer w;
  w.length(3);
  write_neuron(w, bt::keypair::from_uri("//Charlie"), 0, 0, 0);        // never served
  write_neuron(w, bob, 1, 0x7F000001, miner.info().port);              // the miner
  write_neuron(w, bt::keypair::from_uri("//Dave"), 2, 0x7F000001, 0);  // no port
  const auto dir =
      std::filesystem::temp_directory_path() / ("bt-first-validator-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto session_file = dir / "session.json";
  std::ofstream(session_file) << session("0x" + bt::to_hex(w.view())).dump();

  // The validator's wallet: //Alice as hotkey "default" of wallet "validator".
  bt::wallet_config wc{
      .path = (dir / "wallets").string(), .name = "validator", .hotkey = "default"};
  bt::error err;
  check(bt::wallet(wc).write_hotkey(bt::keypair::from_uri("//Alice"), true, err),
        "the validator's hotkey is written: " + err.message());
  ::setenv("BT_WALLET_PATH", wc.path.c_str(), 1);
  ::setenv("BT_WALLET_NAME", "validator", 1);
  ::setenv("BT_WALLET_HOTKEY", "default", 1);

  auto node = bt::perf::child_process::spawn({argv[2], "--session", session_file.string()});
  const auto ready = node.read_line(30s);
  bt::json j;
  check(ready && !bt::parse_json(*ready, j) && j.contains("url"),
        "fake-subtensor is listening: " + ready.value_or("<nothing>"));
  if (failures == 0) {
    const std::string url = j.at("url").get<std::string>();
    const auto [lines, status] = run(argv[1], {url, "1"});
    check(status == 0, "the validator exits 0 (got " + std::to_string(status) + ")");
    check(lines.size() == 1, "one line: only the served, routable axon is queried (" +
                                 std::to_string(lines.size()) + " lines)");
    for (const auto& l : lines) std::cout << "  " << l << "\n";
    check(!lines.empty() && lines[0].rfind(bob.ss58_address() + ": correct, 200 ", 0) == 0,
          "the miner's answer is correct");

    const auto unknown = run(argv[1], {url, "2"});  // the node has no such call recorded
    check(unknown.first.empty() && unknown.second == 1,
          "a subnet the node cannot give: exit 1 (got " + std::to_string(unknown.second) + ")");
  }
  node.stop(15s);
  const auto unreachable = run(argv[1], {"ws://127.0.0.1:1", "1"});
  check(unreachable.first.empty() && unreachable.second == 1,
        "a node that is not there: exit 1 (got " + std::to_string(unreachable.second) + ")");
  const auto usage = run(argv[1], {"ws://127.0.0.1:1", "65536"});
  check(usage.second == 2, "NETUID 65536: exit 2 (got " + std::to_string(usage.second) + ")");
  miner.stop();
  std::filesystem::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
