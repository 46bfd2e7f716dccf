// Our dendrite against an independent Python-shaped axon written in Node.js
// (tests/node/python_axon_peer.mjs): it verifies our sr25519 signatures with
// @polkadot/util-crypto, checks every request against PROTOCOL 2-4 and answers as 5.11.
// Registered by tests/dendrite_node.cmake. A missing node or node_modules fails the test
// (run scripts/setup); nothing is skipped.
#include <bt/dendrite.hpp>

#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/json_body.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

extern char** environ;

namespace {

const bt::keypair& alice() {
  static const bt::keypair k = bt::keypair::from_uri("//Alice");
  return k;
}
const bt::keypair& bob() {
  static const bt::keypair k = bt::keypair::from_uri("//Bob");
  return k;
}

/// The Node peer as a child process; killed (by its pid) and reaped on destruction.
class node_peer {
 public:
  node_peer() {
    const std::filesystem::path dir = BT_NODE_DIR;
    if (!std::filesystem::exists(dir / "node_modules" / "@polkadot" / "util-crypto"))
      throw std::runtime_error("tests/node/node_modules is missing: run scripts/setup (npm ci)");
    int out[2], in[2];
    if (pipe(out) != 0 || pipe(in) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
    const std::string script = (dir / "python_axon_peer.mjs").string();
    const std::string hotkey = bob().ss58_address();
    std::string node = BT_NODE_EXE;
    char* argv[] = {node.data(), const_cast<char*>(script.c_str()), const_cast<char*>(hotkey.c_str()),
                    nullptr};
    const int rc = posix_spawnp(&pid_, node.c_str(), &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(in[0]);
    stdin_ = in[1];
    if (rc != 0) {
      close(out[0]);
      throw std::runtime_error("cannot start node: " + std::string(strerror(rc)));
    }
    // The first stdout line: {"port": N, "hotkey": "..."}; bounded wait.
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (line.find('\n') == std::string::npos) {
      pollfd p{out[0], POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[256];
      const ssize_t n = read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    close(out[0]);
    const bt::json j = bt::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("port"))
      throw std::runtime_error("the node peer did not start: '" + line + "'");
    port_ = static_cast<std::uint16_t>(j.at("port").get<int>());
    if (j.at("hotkey").get<std::string>() != hotkey) throw std::runtime_error("peer hotkey mismatch");
  }
  ~node_peer() {
    close(stdin_);  // the peer exits when its stdin closes
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  node_peer(const node_peer&) = delete;
  node_peer& operator=(const node_peer&) = delete;

  bt::axon_info axon() const {
    bt::axon_info a;
    a.ip = "127.0.0.1";
    a.port = port_;
    a.hotkey = bob().ss58_address();
    return a;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace

TEST_CASE("a Python-shaped axon accepts every request we send", "[dendrite][node]") {
  node_peer peer;
  bt::dendrite d(alice());

  SECTION("Dummy, the ping and a hashed dynamic synapse, repeatedly on one connection") {
    for (int i = 0; i < 20; ++i) {
      bt::examples::dummy q;
      q.dummy_input = i;
      auto r = d.call(peer.axon(), q, 5.0);
      INFO(r.dendrite.status_message.value_or("None"));
      REQUIRE(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 2 * i);
      CHECK(r.dendrite.status_message == "Success");
      CHECK(r.axon.process_time.has_value());
    }
    auto ping = d.call(peer.axon(), bt::synapse{}, 5.0);
    INFO(ping.dendrite.status_message.value_or("None"));
    CHECK(ping.dendrite.status_code == 200);

    bt::error err;
    auto echo = bt::make_dynamic_descriptor(
        "Echo", {{"text", bt::field_kind::required}, {"reply", bt::field_kind::optional}}, {"text"},
        err);
    REQUIRE_FALSE(err);
    for (const char* text : {"hello", "", "quote ' and \" and \\", "caf\xc3\xa9 \xf0\x9f\x98\x80"}) {
      bt::dynamic_synapse s(echo);
      *s.get("text") = text;
      auto r = d.call(peer.axon(), s, 5.0);
      INFO(r.dendrite.status_message.value_or("None"));
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.get("text")->get<std::string>() == text);
      REQUIRE(r.get("reply")->is_string());
    }
    CHECK(d.stats().connections_opened == 1);
  }

  SECTION("a sequential fan-out: nonces strictly increase as the peer requires") {
    bt::dendrite seq(alice(), {.max_concurrency = 1});
    bt::examples::dummy q;
    q.dummy_input = 3;
    auto rs = seq.forward(std::vector<bt::axon_info>(10, peer.axon()), q, 5.0);
    for (auto& r : rs) {
      INFO(r.dendrite.status_message.value_or("None"));
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 6);
    }
  }

  SECTION("a request signed for another hotkey is refused as Python refuses it") {
    auto target = peer.axon();
    target.hotkey = alice().ss58_address();
    auto r = d.call(target, bt::examples::dummy{}, 5.0);
    CHECK(r.dendrite.status_code == 401);
    CHECK_THAT(r.dendrite.status_message.value_or(""),
               Catch::StartsWith("Not Verified with error: Signature mismatch with "));
  }

  SECTION("an unknown synapse gets Python's 404") {
    bt::error err;
    auto other = bt::make_dynamic_descriptor("Other", {}, {}, err);
    REQUIRE_FALSE(err);
    auto r = d.call(peer.axon(), bt::dynamic_synapse(other), 5.0);
    CHECK(r.dendrite.status_code == 404);
    CHECK(r.dendrite.status_message ==
          "Synapse name 'Other' not found. Available synapses ['Synapse', 'Dummy', 'Echo']");
  }
}
