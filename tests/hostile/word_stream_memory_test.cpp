// Memory of bt-axon's WordStream route under a large body: a real `bt-axon` process (loopback, a
// body limit that admits the request) receives one signed WordStream request whose `text` is
// 8 MiB of one-letter words, from a client that reads the head and the first word and then stops
// reading, so the stream stays open (the miner waits on a full socket) until the client leaves.
// While it is held open, the axon's resident memory (VmRSS) must stay within a small multiple of
// the body: the route walks `text` lazily, one word at a time, and keeps no per-word index (an
// index of string_views costs 16 bytes per 2-byte word, 8x the body). Then the slow client goes
// away and an honest streaming request is served in full.
//
// Part of hostile_tests (tests/hostile.cmake); docs/reliability.md "Hostile inputs" quotes the
// measured figures.
#include <bt/dendrite.hpp>

#include <bt/examples/word_stream.hpp>
#include <bt/json.hpp>

#include <catch2/catch.hpp>

#include <axon/support/python_client.hpp>
#include <proc.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/collector.hpp"
#include "support/dev_keys.hpp"

using namespace std::chrono_literals;
using bt::examples::word_stream;

#if defined(__SANITIZE_ADDRESS__)
#define BT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BT_TEST_ASAN 1
#endif
#endif

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

#ifdef BT_TEST_ASAN
constexpr bool asan = true;
#else
constexpr bool asan = false;
#endif

/// Under ASan, the axon child runs with the inherited ASAN_OPTIONS plus quarantine_size_mb=0 (a
/// later option overrides an earlier one): the quarantine keeps freed blocks resident (up to
/// 256 MiB) to catch use-after-free, which would measure freed memory, not what the route holds.
/// Restores the variable when destroyed. Set while no other thread runs (before the spawn).
class asan_child_options {
 public:
  asan_child_options() {
    if (!asan) return;
    const char* old = std::getenv("ASAN_OPTIONS");
    if (old) old_ = old;
    const std::string v = old_ ? *old_ + ":quarantine_size_mb=0" : "quarantine_size_mb=0";
    ::setenv("ASAN_OPTIONS", v.c_str(), 1);
  }
  ~asan_child_options() {
    if (!asan) return;
    if (old_)
      ::setenv("ASAN_OPTIONS", old_->c_str(), 1);
    else
      ::unsetenv("ASAN_OPTIONS");
  }
  asan_child_options(const asan_child_options&) = delete;
  asan_child_options& operator=(const asan_child_options&) = delete;

 private:
  std::optional<std::string> old_;
};

/// A field of /proc/<pid>/status in bytes (VmRSS: resident now, VmHWM: peak resident).
std::optional<std::uint64_t> status_bytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream v(line.substr(field.size() + 1));
    std::uint64_t kb = 0;
    if (v >> kb) return kb * 1024;
  }
  return std::nullopt;
}

/// A blocking loopback TCP client on a plain socket, each operation bounded by a deadline: it
/// can stop reading at any point, which is what holds the axon's stream open.
class slow_client {
 public:
  explicit slow_client(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  }
  ~slow_client() { close(); }
  slow_client(const slow_client&) = delete;
  slow_client& operator=(const slow_client&) = delete;

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  /// Sends all of `bytes`; false if the peer closed or `timeout` passed first.
  bool send_all(std::string_view bytes, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!bytes.empty()) {
      if (!wait(POLLOUT, deadline)) return false;
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// Reads until what was received contains `needle` (or the peer closes, or `timeout` passes);
  /// returns everything received so far.
  std::string read_until(std::string_view needle, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (received_.find(needle) == std::string::npos) {
      if (!wait(POLLIN, deadline)) break;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      received_.append(buf, static_cast<std::size_t>(n));
    }
    return received_;
  }

 private:
  bool wait(short events, std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, events, 0};
    return ::poll(&p, 1, static_cast<int>(left.count())) > 0;
  }

  int fd_ = -1;
  std::string received_;
};

}  // namespace

TEST_CASE("a WordStream request of a large body is streamed without a per-word index",
          "[hostile][stream][memory]") {
  // 8 MiB of "a ": 4 Mi words. An index of them (16-byte string_views) alone would be 64 MiB,
  // 8x the body; walked lazily the route holds the text it was given and one chunk. (Small
  // enough to stay quick under ASan, large enough that an index would break the bound clearly.)
  constexpr std::size_t words = 4 * 1024 * 1024;
  constexpr std::uint64_t body_limit = 16 * MiB;

  std::optional<asan_child_options> child_env;
  child_env.emplace();
  auto proc = bt::perf::child_process::spawn(
      {BT_AXON_EXE, "--uri", "//Bob", "--axon.ip", "127.0.0.1", "--axon.port", "0",
       "--axon.io_threads", "2", "--axon.max_workers", "2", "--axon.max_body_bytes",
       std::to_string(body_limit)},
      /*quiet_stderr=*/true);
  child_env.reset();
  const auto line = proc.read_line(20s);
  REQUIRE(line);
  const auto info_json = bt::json::parse(*line, nullptr, false);
  REQUIRE(info_json.is_object());
  bt::axon_info info;
  info.ip = "127.0.0.1";
  info.port = info_json.at("port").get<std::uint16_t>();
  info.hotkey = info_json.at("hotkey").get<std::string>();
  info.version = info_json.at("version").get<std::int64_t>();

  const auto idle_rss = status_bytes(proc.pid(), "VmRSS");
  REQUIRE(idle_rss);

  std::string wire;
  std::uint64_t body_bytes = 0;
  {
    word_stream big;
    big.text.assign(2 * words, ' ');
    for (std::size_t i = 0; i < words; ++i) big.text[2 * i] = 'a';
    bt::test::python_request_options o;
    o.axon_port = info.port;
    o.timeout = 60;  // the stream stays open while we measure; the client closes it first
    const auto parts = bt::test::python_request(std::move(big), bt::test::alice(), info.hotkey, o);
    body_bytes = parts.body.size();
    wire = parts.wire(info.port);
  }
  REQUIRE(body_bytes <= body_limit);

  slow_client slow(info.port);
  REQUIRE(slow.send_all(wire, 60s));
  wire = std::string();  // the test's own copy is not the axon's memory, but free it anyway
  // The head and the first word: the handler is running and has sent its first chunk. Then this
  // client stops reading: the socket buffers fill and the miner waits on its next send.
  const std::string got = slow.read_until("a\n", 60s);
  INFO("received: " << got.substr(0, 200));
  REQUIRE(got.rfind("HTTP/1.1 200", 0) == 0);
  REQUIRE(got.find("a\n") != std::string::npos);

  // Sampled for half a second while the stream is held open: the largest resident size.
  std::uint64_t held_rss = 0;
  for (int i = 0; i < 10; ++i) {
    const auto rss = status_bytes(proc.pid(), "VmRSS");
    REQUIRE(rss);
    held_rss = std::max(held_rss, *rss);
    std::this_thread::sleep_for(50ms);
  }
  const auto peak = status_bytes(proc.pid(), "VmHWM");
  // While the stream is held the axon keeps the request body it read and the parsed `text` (2x
  // the body), and the allocator may keep the parse's transient copy as free heap (glibc does
  // for blocks under its 32 MiB mmap threshold): 3x. One more body of slack for the allocator.
  // An index of every word would add 8x on top. Under ASan one more body covers its shadow
  // memory (an eighth of what is allocated) and the redzones around each block.
  const std::uint64_t bound = *idle_rss + (asan ? 5 : 4) * body_bytes;
  INFO("body " << body_bytes / MiB << " MiB; axon RSS idle " << *idle_rss / MiB << " MiB, held "
               << held_rss / MiB << " MiB, peak " << peak.value_or(0) / MiB << " MiB; bound "
               << bound / MiB << " MiB");
  CHECK(held_rss < bound);

  // The slow client leaves; an honest streaming request is served in full.
  slow.close();
  bt::dendrite honest(bt::test::alice());
  word_stream q;
  q.text = "still  serving\tafter the big one";
  bt::test::collector items;
  const word_stream r = honest.call_stream(info, q, 10.0, std::ref(items));
  INFO("honest call: " << r.dendrite.status_code.value_or(-1) << " "
                       << r.dendrite.status_message.value_or(""));
  CHECK(r.dendrite.status_code == 200);
  CHECK(items.get() == std::vector<std::string>{"still", "serving", "after", "the", "big", "one"});
  CHECK(proc.stop(10s) == 0);
}
