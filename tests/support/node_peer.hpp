// An independent Node.js peer (tests/node/*.mjs) as a child process: started with
// `node <script> <hotkey SS58> <args...>` in tests/node, it prints one JSON line
// {"port": N, "hotkey": "..."} once listening and exits when its stdin closes; the destructor
// closes its stdin, then stops it (SIGTERM, SIGKILL after a grace period) and reaps it. Spawning
// and reading the first line is perf/proc/proc.hpp's child_process (link bt_proc). Needs
// BT_NODE_DIR and BT_NODE_EXE (the tests' CMake files define them); a missing node_modules is an
// error that says to run scripts/setup.
#pragma once

#ifndef BT_NODE_DIR
#error "node_peer.hpp needs BT_NODE_DIR and BT_NODE_EXE (see tests/dendrite_node.cmake)"
#endif

#include <bt/axon_info.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include <proc.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace bt::test {

class node_peer {
 public:
  /// Starts `script` serving as `hotkey`; waits at most 30 s for its first line.
  node_peer(const std::string& script, const bt::keypair& hotkey,
            const std::vector<std::string>& args = {})
      : hotkey_(hotkey.ss58_address()), proc_(start(script, hotkey_, args)) {
    // The first stdout line: {"port": N, "hotkey": "..."}; bounded wait.
    const std::string line = proc_.read_line(std::chrono::seconds(30)).value_or("");
    const bt::json j = bt::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("port") || !j.contains("hotkey"))
      throw std::runtime_error("the node peer did not start: '" + line + "'");
    port_ = static_cast<std::uint16_t>(j.at("port").get<int>());
    if (j.at("hotkey").get<std::string>() != hotkey_)
      throw std::runtime_error("peer hotkey mismatch");
  }
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
  static bt::perf::child_process start(const std::string& script, const std::string& hotkey,
                                       const std::vector<std::string>& args) {
    const std::filesystem::path dir = BT_NODE_DIR;
    if (!std::filesystem::exists(dir / "node_modules" / "@polkadot" / "util-crypto"))
      throw std::runtime_error("tests/node/node_modules is missing: run scripts/setup (npm ci)");
    std::vector<std::string> argv{BT_NODE_EXE, (dir / script).string(), hotkey};
    argv.insert(argv.end(), args.begin(), args.end());
    // stdin a pipe: the peer exits when it closes (child_process::stop closes it first).
    return bt::perf::child_process::spawn(argv, {.stdin_pipe = true, .cwd = dir.string()});
  }

  std::string hotkey_;
  bt::perf::child_process proc_;  // stopped and reaped by its destructor, also on a throw above
  std::uint16_t port_ = 0;
};

}  // namespace bt::test
