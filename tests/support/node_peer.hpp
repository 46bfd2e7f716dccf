// An independent Node.js peer (tests/node/*.mjs) as a child process: started with
// `node <script> <hotkey SS58> <args...>` in tests/node, it prints one JSON line
// {"port": N, "hotkey": "..."} once listening and exits when its stdin closes; the destructor
// also kills it by its pid and reaps it. Needs BT_NODE_DIR and BT_NODE_EXE (the tests' CMake
// files define them); a missing node_modules is an error that says to run scripts/setup.
#pragma once

#ifndef BT_NODE_DIR
#error "node_peer.hpp needs BT_NODE_DIR and BT_NODE_EXE (see tests/dendrite_node.cmake)"
#endif

#include <bt/axon_info.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace bt::test {

class node_peer {
 public:
  /// Starts `script` serving as `hotkey`; waits at most 30 s for its first line.
  node_peer(const std::string& script, const bt::keypair& hotkey,
            const std::vector<std::string>& args = {})
      : hotkey_(hotkey.ss58_address()) {
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
    std::vector<std::string> argv_strings{BT_NODE_EXE, (dir / script).string(), hotkey_};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(in[0]);
    stdin_ = in[1];
    if (rc != 0) {
      close(out[0]);
      close(stdin_);
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
    if (j.is_discarded() || !j.is_object() || !j.contains("port") || !j.contains("hotkey")) {
      stop();
      throw std::runtime_error("the node peer did not start: '" + line + "'");
    }
    port_ = static_cast<std::uint16_t>(j.at("port").get<int>());
    if (j.at("hotkey").get<std::string>() != hotkey_) {
      stop();
      throw std::runtime_error("peer hotkey mismatch");
    }
  }
  ~node_peer() { stop(); }
  node_peer(const node_peer&) = delete;
  node_peer& operator=(const node_peer&) = delete;

  /// Where the peer listens, as the dendrite addresses it.
  bt::axon_info axon() const {
    bt::axon_info a;
    a.ip = "127.0.0.1";
    a.port = port_;
    a.hotkey = hotkey_;
    return a;
  }

 private:
  void stop() noexcept {
    if (pid_ <= 0) return;
    close(stdin_);  // the peer exits when its stdin closes
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string hotkey_;
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace bt::test
