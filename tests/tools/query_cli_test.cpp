// `bt-dendrite query` end to end: against an in-process axon, with targets from
// flags and from a file, typed and dynamic synapses, --uri and wallet signers, and its exit
// statuses. Registered by tests/dendrite_query.cmake.
#include <bt/axon.hpp>
#include <bt/dendrite.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/wallet.hpp>

#include "dendrite/fault_server.hpp"
#include "support/run_command.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// Runs bt-dendrite with `args` (a shell-quoted string); stderr goes to the test log.
bt::test::command_result run(const std::string& args) {
  return bt::test::run_command(std::string(BT_DENDRITE_EXE) + " " + args);
}

std::vector<bt::json> lines(const std::string& out) {
  std::vector<bt::json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    auto j = bt::json::parse(line, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    v.push_back(std::move(j));
  }
  return v;
}

struct miner {
  bt::keypair key = bt::keypair::from_uri("//Bob");
  bt::axon ax{key, bt::axon_options::loopback()};
  miner() {
    ax.attach<bt::examples::dummy>(
        [](bt::examples::dummy& d) { d.dummy_output = d.dummy_input * 2; });
    ax.start();
  }
  ~miner() { ax.stop(); }
  std::string target() const {
    return "127.0.0.1:" + std::to_string(ax.port()) + ":" + key.ss58_address();
  }
};

}  // namespace

TEST_CASE("bt-dendrite query: Dummy against our axon", "[dendrite][cli]") {
  miner m;
  auto r = run("query --axon " + m.target() +
               " --synapse Dummy --fields '{\"dummy_input\": 4}' --uri //Alice --timeout 5");
  CHECK(r.status == 0);
  auto v = lines(r.out);
  REQUIRE(v.size() == 1);
  CHECK(v[0].at("name") == "Dummy");
  CHECK(v[0].at("dummy_input") == 4);
  CHECK(v[0].at("dummy_output") == 8);
  CHECK(v[0].at("dendrite").at("status_code") == 200);
  CHECK(v[0].at("dendrite").at("process_time").is_number_float());
  CHECK(v[0].at("dendrite").at("hotkey") == bt::keypair::from_uri("//Alice").ss58_address());
}

TEST_CASE("bt-dendrite query: several targets in order, file and flags, exit 1 on a failure",
          "[dendrite][cli]") {
  // Two miners: the calls of one query run concurrently, and one dendrite's increasing nonces
  // can reach a single axon out of order over two connections, which it rightly refuses (401,
  // PROTOCOL 5.5); listing the same axon twice made this test flaky under load.
  miner m, m2;
  const auto dir =
      std::filesystem::temp_directory_path() / ("bt-query-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  bt::axon_info good = m2.ax.info();
  good.ip = "127.0.0.1";
  bt::axon_info dead = good;
  dead.port = 1;
  {
    std::ofstream f(dir / "axons.json");
    f << bt::json::array({bt::to_json_value(dead), bt::to_json_value(good)}).dump();
  }
  auto r = run("query --axon " + m.target() + " --axons " + (dir / "axons.json").string() +
               " --uri //Alice --timeout 5 --external-ip 10.1.2.3");
  INFO(r.out);
  CHECK(r.status == 1);
  auto v = lines(r.out);
  REQUIRE(v.size() == 3);
  CHECK(v[0].at("dendrite").at("status_code") == 200);
  CHECK(v[0].at("name") == "Synapse");
  CHECK(v[0].at("dendrite").at("ip") == "10.1.2.3");
  CHECK(v[1].at("dendrite").at("status_code") == 503);
  CHECK(v[1].at("axon").at("port") == 1);
  CHECK(v[2].at("dendrite").at("status_code") == 200);
  CHECK(v[2].at("axon").at("port") == m2.ax.port());
  std::filesystem::remove_all(dir);
}

TEST_CASE("bt-dendrite query: a dynamic synapse and a wallet signer", "[dendrite][cli]") {
  miner m;
  const auto dir =
      std::filesystem::temp_directory_path() / ("bt-query-wallet-" + std::to_string(getpid()));
  bt::wallet w({.path = dir.string(), .name = "val", .hotkey = "hk"});
  bt::error err;
  REQUIRE(w.write_hotkey(bt::keypair::from_uri("//Alice"), true, err));
  auto r = run("query --axon " + m.target() + " --synapse Other --fields '{\"text\": \"hi\"}'" +
               " --required text --hash-fields text --wallet.path " + dir.string() +
               " --wallet.name val --wallet.hotkey hk --timeout 5");
  CHECK(r.status == 1);
  auto v = lines(r.out);
  REQUIRE(v.size() == 1);
  CHECK(v[0].at("name") == "Other");
  CHECK(v[0].at("text") == "hi");
  CHECK(v[0].at("dendrite").at("status_code") == 404);  // the axon serves no "Other"
  CHECK(v[0].at("dendrite").at("hotkey") == bt::keypair::from_uri("//Alice").ss58_address());
  std::filesystem::remove_all(dir);
}

TEST_CASE("bt-dendrite query: bad usage exits 2", "[dendrite][cli]") {
  // A well-formed target (Bob's address, nothing listening): each case fails for its own reason.
  const std::string target = "127.0.0.1:1:" + bt::keypair::from_uri("//Bob").ss58_address();
  CHECK(run("query --uri //Alice").status == 2);                  // no target
  CHECK(run("query --axon nonsense --uri //Alice").status == 2);  // bad target
  CHECK(run("query --axon " + target + " --uri //Alice --fields '[1]'").status == 2);
  CHECK(run("query --axon " + target + " --uri //Alice --synapse Dummy --fields '{\"nope\": 1}'")
            .status == 2);
  CHECK(run("query --axon " + target + " --uri not-a-uri-//").status == 2);
  CHECK(run("query --axons /nonexistent/axons.json --uri //Alice").status == 2);
  CHECK(run("query --no-such-flag").status == 2);
  CHECK(run("query --axon " + target + " --uri //Alice --timeout -1").status == 2);
}

TEST_CASE("bt-dendrite query: a target's hotkey must be an SS58 address", "[dendrite][cli]") {
  SECTION("--axon: a word, and an address with a broken checksum") {
    std::string bad = bt::keypair::from_uri("//Bob").ss58_address();
    bad.back() = bad.back() == 'a' ? 'b' : 'a';
    for (const std::string& hotkey : {std::string("hello"), bad}) {
      CAPTURE(hotkey);
      // stderr only: one JSON object whose error names the argument and the hotkey.
      const auto r =
          run("query --axon 127.0.0.1:18091:" + hotkey + " --uri //Alice 2>&1 >/dev/null");
      CHECK(r.status == 2);
      const auto err = lines(r.out);
      REQUIRE(err.size() == 1);
      const auto message = err[0].at("error").get<std::string>();
      CHECK(message.rfind("--axon '127.0.0.1:18091:" + hotkey + "': hotkey '" + hotkey +
                              "' is not an SS58 address",
                          0) == 0);
    }
  }
  SECTION("--axons: the entry is named") {
    const auto dir = std::filesystem::temp_directory_path() / "bt-query-hotkey-test";
    std::filesystem::create_directories(dir);
    const auto file = dir / "axons.json";
    std::ofstream(file) << R"([{"ip": "127.0.0.1", "port": 18091, "ip_type": 4, "hotkey": "nope",
                              "coldkey": "", "version": 0, "protocol": 4, "placeholder1": 0,
                              "placeholder2": 0}])";
    const auto r = run("query --axons " + file.string() + " --uri //Alice 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out.find("[0]: hotkey 'nope' is not an SS58 address") != std::string::npos);
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("bt-dendrite query: a required field missing from --fields is refused by name",
          "[dendrite][cli]") {
  const std::string target = "127.0.0.1:1:" + bt::keypair::from_uri("//Bob").ss58_address();
  auto r = run("query --axon " + target + " --uri //Alice --synapse Dummy 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out.find("Dummy requires 'dummy_input'") != std::string::npos);
  r = run("query --axon " + target + " --uri //Alice --synapse Other --fields '{\"a\": 1}'" +
          " --required b 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out.find("Other requires 'b'") != std::string::npos);
}

TEST_CASE("bt-dendrite query: a miner's non-UTF-8 headers cannot abort the run",
          "[dendrite][cli]") {
  // One hostile miner answers 200 with raw bytes in bt_header_axon_status_message and _uuid;
  // the honest miner's result must still be printed, and every line must be valid JSON.
  bt::test::fault_server bad(
      [](bt::test::tcp::socket& s, bt::test::server_log& log) -> bt::test::net::awaitable<void> {
        boost::beast::flat_buffer buf;
        if (!co_await bt::test::read_request(s, buf, log)) co_return;
        co_await bt::test::write_text(
            s, bt::test::http_response(200, R"({"dummy_input":4,"dummy_output":0})",
                                       "bt_header_axon_status_code: 200\r\n"
                                       "bt_header_axon_status_message: ok\xFF!\r\n"
                                       "bt_header_axon_uuid: \xC3(\r\n"));
      });
  miner m;
  const std::string bad_target =
      "127.0.0.1:" + std::to_string(bad.port()) + ":" + m.key.ss58_address();
  auto r = run("query --axon " + bad_target + " --axon " + m.target() +
               " --synapse Dummy --fields '{\"dummy_input\": 4}' --uri //Alice --timeout 5");
  INFO(r.out);
  CHECK(r.status == 0);
  auto v = lines(r.out);
  REQUIRE(v.size() == 2);
  CHECK(v[0].at("axon").at("status_message") == "ok\xEF\xBF\xBD!");
  CHECK(v[0].at("axon").at("uuid") == "\xEF\xBF\xBD(");
  CHECK(v[1].at("dendrite").at("status_code") == 200);
  CHECK(v[1].at("dummy_output") == 8);
}

TEST_CASE("bt-dendrite query: a wrong target hotkey is named as the likely cause of the 421",
          "[dendrite][cli]") {
  miner m;  // //Bob's axon, addressed with //Charlie's hotkey
  const std::string charlie = bt::keypair::from_uri("//Charlie").ss58_address();
  const std::string address = "127.0.0.1:" + std::to_string(m.ax.port());
  const std::string target = address + ":" + charlie;
  // The default (if_present): the axon's refusal is signed by //Bob, not //Charlie: 421, and the
  // message says that the axon answered, what, and that the hotkey is the likely mistake.
  auto r = run("query --axon " + target + " --uri //Alice --timeout 5");
  CHECK(r.status == 1);
  auto v = lines(r.out);
  REQUIRE(v.size() == 1);
  CHECK(v[0].at("dendrite").at("status_code") == 421);
  const auto message = v[0].at("dendrite").at("status_message").get<std::string>();
  INFO(message);
  CHECK(
      message.starts_with("Response not authenticated: signature mismatch with the axon's "
                          "hotkey " +
                          charlie + "; the axon at " + address + " answered 401 \"Not Verified"));
  CHECK(message.ends_with("\", signed by another key than " + charlie +
                          ": is the hotkey given for this axon right (bt-dendrite: --axon "
                          "IP:PORT:HOTKEY)?"));
  // --verify-responses off: the axon's own answer, as it came.
  r = run("query --axon " + target + " --uri //Alice --timeout 5 --verify-responses off");
  CHECK(r.status == 1);
  v = lines(r.out);
  REQUIRE(v.size() == 1);
  CHECK(v[0].at("dendrite").at("status_code") == 401);
  // A mode it does not know: usage, exit 2, naming the modes.
  r = run("query --axon " + target + " --uri //Alice --verify-responses maybe");
  CHECK(r.status == 2);
}
