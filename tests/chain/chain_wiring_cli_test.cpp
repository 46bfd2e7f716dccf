// The chain wired into the tools, end to end and offline: the fake-subtensor program replays the
// recorded mainnet session (subnet 1 at block 6852690, 1,024 neurons) on loopback.
//  * bt-axon --netuid 1 builds its policy metagraph from it: a caller that is not registered is
//    refused 403 "Unrecognized hotkey" (no recorded neuron's key is one we can sign with, so the
//    served case is the --blacklist.allow_non_registered control); with --metagraph.refresh_s 1,
//    the node going away keeps the last metagraph (still 403, a warning logged) and a node back
//    on the same port makes a later refresh succeed (logged); SIGHUP makes it read the chain at
//    once, well before the next periodic refresh: a node whose subnet now has //Alice's hotkey
//    (the recording with one neuron's hotkey swapped for hers) gets her served; SIGHUPs that come
//    while a read is in flight are merged into one more read.
//  * bt-dendrite query --netuid 1 --uids U takes exactly those uids' recorded axons as targets
//    (public addresses that no recorded axon answers from the tests: each target's outcome is an
//    error status, never a 200).
// Registered by tests/chain_wiring_cli.cmake.
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include "proc.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"
#include "support/vectors.hpp"
#include "support/wait.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using bt::test::shell_quote;
using bt::test::temp_dir;

namespace {

const std::string session = bt::test::vectors_dir() + "/chain/session_sn1_block6852690.json";

/// The fake-subtensor program; `port` 0 picks a free one (port() tells which).
struct fake_node {
  bt::perf::child_process child;
  int port = 0;
  std::string url;
  explicit fake_node(int want_port = 0, const std::string& session_file = session,
                     const std::vector<std::string>& extra_args = {})
      : child(bt::perf::child_process::spawn(args(want_port, session_file, extra_args))) {
    auto line = child.read_line(10s);
    REQUIRE(line);
    const bt::json j = bt::json::parse(*line);
    port = j.at("port").get<int>();
    url = j.at("url").get<std::string>();
  }
  static std::vector<std::string> args(int want_port, const std::string& session_file,
                                       const std::vector<std::string>& extra_args) {
    std::vector<std::string> v{BT_FAKE_SUBTENSOR_EXE, "--session", session_file, "--port",
                               std::to_string(want_port)};
    v.insert(v.end(), extra_args.begin(), extra_args.end());
    return v;
  }
};

/// Runs a shell command line; stdout captured (stderr as the command line redirects it).
bt::test::command_result run(const std::string& cmd) {
  return bt::test::run_command(cmd);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

/// Waits (bounded) until `log` holds at least `n` occurrences of `what`. When it does not, the
/// log as it is then goes with the failing assertion.
bool wait_for_log(const fs::path& log, const std::string& what, std::size_t n,
                  std::chrono::seconds limit) {
  // Another process writes the log: there is nothing to be notified by.
  if (bt::test::poll_until([&] { return count_of(slurp(log), what) >= n; }, limit, 50ms))
    return true;
  UNSCOPED_INFO("the log after " << limit.count() << " s, without " << n << " x '" << what << "':\n"
                                 << slurp(log));
  return false;
}

/// bt-axon --uri //Bob on 127.0.0.1:<free port> with `args`, its stderr (the log) in `log`.
struct axon_process {
  bt::perf::child_process child;
  int port = 0;
  axon_process(const std::string& args, const fs::path& log)
      : child(
            bt::perf::child_process::spawn({"/bin/sh", "-c",
                                            "exec " + std::string(BT_AXON_EXE) +
                                                " --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 " +
                                                args + " 2>" + shell_quote(log.string())})) {
    const std::string line = child.read_line(30s).value_or("");
    INFO("bt-axon log: " << slurp(log));
    const bt::json j = bt::json::parse(line, nullptr, false);
    REQUIRE((j.is_object() && j.contains("port")));
    port = j.at("port").get<int>();
  }
};

/// One ping (Synapse) of the axon at `port` signed by //Alice: the dendrite's status and message.
std::pair<int, std::string> ping_as_alice(int port) {
  const std::string bob = bt::keypair::from_uri("//Bob").ss58_address();
  const auto r =
      run(std::string(BT_DENDRITE_EXE) + " query --axon 127.0.0.1:" + std::to_string(port) + ":" +
          bob + " --uri //Alice --timeout 5 2>/dev/null");
  const bt::json j = bt::json::parse(r.out, nullptr, false);
  if (j.is_discarded() || !j.contains("dendrite")) return {-1, r.out};
  const bt::json& d = j.at("dendrite");
  return {d.value("status_code", -1),
          d.contains("status_message") && d["status_message"].is_string()
              ? d["status_message"].get<std::string>()
              : std::string()};
}

}  // namespace

TEST_CASE("bt-axon --netuid 1: the policy metagraph from the chain refuses an unregistered caller",
          "[chain][cli][axon]") {
  fake_node node;
  temp_dir tmp("bt-axon-netuid");
  const std::string chain = " --netuid 1 --subtensor.chain_endpoint " + node.url;

  SECTION("registration rules on: //Alice is not in subnet 1, refused 403") {
    const fs::path log = tmp.path / "axon.log";
    axon_process ax(chain, log);
    const std::string text = slurp(log);
    INFO(text);
    CHECK(text.find("metagraph of subnet 1 from " + node.url) != std::string::npos);
    CHECK(text.find("block 6852690, 1024 neurons") != std::string::npos);
    CHECK(text.find("metagraph of 1024 neurons") != std::string::npos);  // the policy line
    const auto [status, message] = ping_as_alice(ax.port);
    CHECK(status == 403);
    CHECK(message.find("Unrecognized hotkey") != std::string::npos);
  }
  SECTION("control: --blacklist.allow_non_registered serves the same caller") {
    axon_process ax(chain + " --blacklist.allow_non_registered", tmp.path / "axon.log");
    CHECK(ping_as_alice(ax.port).first == 200);
  }
}

TEST_CASE("bt-axon --netuid: a failed refresh keeps the last metagraph, the node back refreshes it",
          "[chain][cli][axon]") {
  temp_dir tmp("bt-axon-refresh");
  const fs::path log = tmp.path / "axon.log";
  std::optional<fake_node> node;
  node.emplace();
  const int port = node->port;
  axon_process ax(
      "--netuid 1 --metagraph.refresh_s 1 --subtensor.timeout 2 "
      "--subtensor.chain_endpoint " +
          node->url,
      log);
  INFO("bt-axon log at start-up: " << slurp(log));
  REQUIRE(
      wait_for_log(log, "metagraph refreshed: subnet 1 at block 6852690, 1024 neurons", 1, 15s));

  node->child.stop();  // the endpoint goes away
  node.reset();
  REQUIRE(wait_for_log(log, "metagraph refresh of subnet 1 from ", 1, 30s));
  {
    const std::string text = slurp(log);
    CHECK(text.find("failed; keeping the last good metagraph (block 6852690)") !=
          std::string::npos);
  }
  // Still the chain's metagraph (without one, //Alice would be served: 200).
  const auto [status, message] = ping_as_alice(ax.port);
  CHECK(status == 403);
  CHECK(message.find("Unrecognized hotkey") != std::string::npos);

  node.emplace(port);  // back, on the same port
  CHECK(wait_for_log(log,
                     "metagraph refresh of subnet 1 succeeded again: block 6852690, 1024 "
                     "neurons",
                     1, 30s));
  CHECK(ping_as_alice(ax.port).first == 403);

  // SIGTERM drains and exits 0, promptly, with the refresher running.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(ax.child.stop(20s) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 15s);
}

TEST_CASE("bt-axon --netuid: a hostile node's oversized answer fails the refresh, not the miner",
          "[chain][cli][axon]") {
  temp_dir tmp("bt-axon-hostile");
  const fs::path log = tmp.path / "axon.log";
  std::optional<fake_node> node;
  node.emplace();
  const int port = node->port;
  axon_process ax(
      "--netuid 1 --metagraph.refresh_s 1 --subtensor.timeout 5 "
      "--subtensor.chain_endpoint " +
          node->url,
      log);
  INFO("bt-axon log: " << slurp(log));
  REQUIRE(
      wait_for_log(log, "metagraph refreshed: subnet 1 at block 6852690, 1024 neurons", 1, 15s));
  // The node comes back answering the runtime calls with 9 MB frames (valid JSON, a hex string
  // of zeros): over the client's default limit of 8 MiB, refused before they are parsed.
  node->child.stop();
  node.reset();
  node.emplace(port, session, std::vector<std::string>{"--fault", "state_call=oversized:9000000"});
  REQUIRE(wait_for_log(log, "failed; keeping the last good metagraph (block 6852690)", 1, 30s));
  CHECK(slurp(log).find("exceeds the limit of 8388608 bytes") != std::string::npos);
  // Still serving, on the last good metagraph.
  const auto [status, message] = ping_as_alice(ax.port);
  CHECK(status == 403);
  CHECK(message.find("Unrecognized hotkey") != std::string::npos);
  CHECK(ax.child.stop(20s) == 0);
}

TEST_CASE("bt-axon --netuid: start-up fails closed, --netuid and --metagraph are exclusive",
          "[chain][cli][axon]") {
  const std::string axon =
      std::string(BT_AXON_EXE) + " --uri //Bob --axon.ip 127.0.0.1 " + "--axon.port 0 --netuid 1 ";
  SECTION("no node: exit 1 naming the endpoint and the failure, nothing served") {
    const auto r = run(axon +
                       "--subtensor.timeout 2 --subtensor.chain_endpoint "
                       "ws://127.0.0.1:1 2>&1");
    CHECK(r.status == 1);
    CHECK(r.out.find("cannot read the metagraph of subnet 1 from ws://127.0.0.1:1") !=
          std::string::npos);
    CHECK(r.out.find("\"port\"") == std::string::npos);  // no ready line
  }
  SECTION("with --metagraph FILE: usage error, exit 2") {
    temp_dir tmp("bt-axon-netuid-usage");
    std::ofstream(tmp.path / "mg.json") << "[]";
    const auto r = run(axon + "--metagraph " + shell_quote((tmp.path / "mg.json").string()) +
                       " --subtensor.chain_endpoint ws://127.0.0.1:1 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out.find("--netuid and --metagraph FILE are exclusive") != std::string::npos);
  }
  SECTION("--metagraph.refresh_s out of range: usage error, exit 2") {
    const auto r = run(axon + "--metagraph.refresh_s 0 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out.find("--metagraph.refresh_s") != std::string::npos);
  }
}

namespace {

/// The recorded metagraph as bt-chain prints it (--json) from `url`.
bt::json recorded_metagraph(const std::string& url) {
  const auto r = run(std::string(BT_CHAIN_EXE) +
                     " metagraph --netuid 1 --json --subtensor.chain_endpoint " + url);
  REQUIRE(r.status == 0);
  return bt::json::parse(r.out);
}

std::vector<bt::json> json_lines(const std::string& out) {
  std::vector<bt::json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) v.push_back(bt::json::parse(line));
  return v;
}

}  // namespace

TEST_CASE("bt-dendrite query --netuid 1 --uids: the asked uids' recorded axons are the targets",
          "[chain][cli][dendrite]") {
  fake_node node;
  const bt::json mg = recorded_metagraph(node.url);
  // Two serving uids (the second from the far end of the subnet) and one that does not serve.
  std::vector<const bt::json*> serving;
  const bt::json* idle = nullptr;
  for (const auto& n : mg.at("neurons")) {
    if (n.at("axon").at("serving").get<bool>()) {
      serving.push_back(&n);
    } else if (!idle) {
      idle = &n;
    }
  }
  REQUIRE(serving.size() >= 2);
  const bt::json& a = *serving.front();
  const bt::json& b = *serving.back();
  const std::string query = std::string(BT_DENDRITE_EXE) +
                            " query --netuid 1 --subtensor.chain_endpoint " + node.url +
                            " --uri //Alice ";

  SECTION("two uids: one line each, in the order asked, to the recorded address; none answered") {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run(query + "--timeout 1 --uids " + std::to_string(b.at("uid").get<int>()) +
                       "," + std::to_string(a.at("uid").get<int>()) + " 2>/dev/null");
    CHECK(std::chrono::steady_clock::now() - t0 < 30s);
    CHECK(r.status == 1);  // not every answer was 200
    const auto v = json_lines(r.out);
    REQUIRE(v.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      const bt::json& want = i == 0 ? b : a;
      INFO(v[i].dump());
      CHECK(v[i].at("axon").at("ip") == want.at("axon").at("ip"));
      CHECK(v[i].at("axon").at("port") == want.at("axon").at("port"));
      CHECK(v[i].at("axon").at("hotkey") == want.at("hotkey"));
      // What an unreachable public address gives depends on the network the tests run in (no
      // route: 503; filtered: 408; a sandbox's intercepting proxy: its HTTP error, 422): never a
      // success, since no axon of the recording is reachable from here.
      REQUIRE(v[i].at("dendrite").at("status_code").is_number_integer());
      CHECK(v[i].at("dendrite").at("status_code").get<int>() != 200);
    }
  }
  SECTION("a uid that does not serve, or is not in the subnet: usage error naming it") {
    REQUIRE(idle != nullptr);
    const std::string uid = std::to_string(idle->at("uid").get<int>());
    auto r = run(query + "--uids " + uid + " 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out.find("--uids: uid " + uid + " does not serve an axon on subnet 1") !=
          std::string::npos);
    r = run(query + "--uids 5000 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out.find("--uids: uid 5000 is not in subnet 1 at block 6852690 (1024 neurons)") !=
          std::string::npos);
  }
  SECTION("--netuid excludes --axon; --uids needs --netuid") {
    const std::string bob = bt::keypair::from_uri("//Bob").ss58_address();
    auto r = run(query + "--axon 127.0.0.1:1:" + bob + " 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out.find("excludes --axon") != std::string::npos);
    r = run(std::string(BT_DENDRITE_EXE) + " query --uids 1 --uri //Alice 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out.find("--uids needs --netuid") != std::string::npos);
  }
}

namespace {

std::string lower_hex(const bt::keypair& k) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const auto b : k.public_key()) {
    out += digits[static_cast<unsigned char>(b) >> 4];
    out += digits[static_cast<unsigned char>(b) & 0xf];
  }
  return out;
}

}  // namespace

TEST_CASE("bt-axon --netuid: SIGHUP refreshes the metagraph from the chain at once",
          "[chain][cli][axon]") {
  temp_dir tmp("bt-axon-sighup");
  const fs::path log = tmp.path / "axon.log";
  std::optional<fake_node> node;
  node.emplace();
  const int port = node->port;

  // The chain's next state: the recording with uid 0's hotkey replaced by //Alice's (the
  // recording's hex is lower case), so that she is registered in subnet 1 and uid 0's key is not.
  const bt::json mg = recorded_metagraph(node->url);
  const std::string uid0 = mg.at("neurons").at(0).at("hotkey").get<std::string>();
  const std::string from = lower_hex(bt::keypair::from_ss58(uid0));
  const std::string to = lower_hex(bt::keypair::from_uri("//Alice"));
  std::string next = slurp(session);
  std::size_t swapped = 0;
  for (auto p = next.find(from); p != std::string::npos; p = next.find(from, p + to.size())) {
    next.replace(p, from.size(), to);
    ++swapped;
  }
  REQUIRE(swapped > 0);
  const fs::path next_session = tmp.path / "session_with_alice.json";
  std::ofstream(next_session) << next;

  // No periodic refresh within the test: only SIGHUP can bring the new metagraph.
  axon_process ax(
      "--netuid 1 --metagraph.refresh_s 3600 --subtensor.timeout 10 --subtensor.chain_endpoint " +
          node->url,
      log);
  INFO("bt-axon log at start-up: " << slurp(log));
  CHECK(ping_as_alice(ax.port).first == 403);  // not registered at first

  node->child.stop();
  node.reset();
  node.emplace(port, next_session.string());  // the chain moved on, on the same endpoint

  REQUIRE(::kill(ax.child.pid(), SIGHUP) == 0);
  REQUIRE(wait_for_log(log,
                       "policy metagraph of subnet 1 from the chain (block 6852690): 1024 neurons "
                       "(+1 -1, 0 changed)",
                       1, 30s));
  {
    const std::string text = slurp(log);
    CHECK(text.find("SIGHUP: refreshing the metagraph of subnet 1 from the chain") !=
          std::string::npos);
    CHECK(text.find("metagraph refreshed on request: subnet 1 at block 6852690, 1024 neurons") !=
          std::string::npos);
    CHECK(text.find("SIGHUP: no --blacklist.hotkeys") == std::string::npos);
  }
  const auto [status, message] = ping_as_alice(ax.port);
  INFO(message);
  CHECK(status == 200);  // registered now: served

  // SIGHUPs handled while a read is in flight (the node answers chain_getHead, once per read,
  // after 2.5 s) are merged into one more read: three signals, two reads. The second and third
  // go once the node has the first read's chain_getHead (it echoes each request it receives):
  // sent before the read began, they would merge into it.
  node->child.stop();
  node.reset();
  node.emplace(port, next_session.string(),
               std::vector<std::string>{"--fault", "chain_getHead=delay:2500", "--echo-requests"});
  const std::string asked = "SIGHUP: refreshing the metagraph of subnet 1 from the chain";
  const std::string read = "metagraph refreshed on request: subnet 1";
  const std::size_t asked0 = count_of(slurp(log), asked), read0 = count_of(slurp(log), read);
  REQUIRE(::kill(ax.child.pid(), SIGHUP) == 0);
  REQUIRE(wait_for_log(log, asked, asked0 + 1, 10s));
  for (;;) {
    const auto line = node->child.read_line(10s);
    REQUIRE(line);  // the read's requests arrive
    if (line->find("chain_getHead") != std::string::npos) break;
  }
  for (std::size_t i = 2; i <= 3; ++i) {  // one at a time: pending signals would coalesce
    REQUIRE(::kill(ax.child.pid(), SIGHUP) == 0);
    REQUIRE(wait_for_log(log, asked, asked0 + i, 10s));
  }
  REQUIRE(wait_for_log(log, read, read0 + 2, 30s));
  std::this_thread::sleep_for(6s);  // a third read, if one were made, would have ended by now
  CHECK(count_of(slurp(log), read) == read0 + 2);

  // A SIGHUP whose chain read fails keeps the last good metagraph (her, still served).
  node->child.stop();
  node.reset();
  REQUIRE(::kill(ax.child.pid(), SIGHUP) == 0);
  REQUIRE(wait_for_log(log, "failed; keeping the last good metagraph (block 6852690)", 1, 30s));
  CHECK(ping_as_alice(ax.port).first == 200);
  CHECK(ax.child.stop(20s) == 0);
}
