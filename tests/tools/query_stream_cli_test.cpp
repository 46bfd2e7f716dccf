// `bt-dendrite query --stream` end to end against a real bt-axon process and its WordStream route:
// items printed one per line as they arrive, then the final synapse's JSON line with its status;
// typed and dynamic synapses; a stream cut at the deadline (408, exit 1); usage errors. Registered
// by tests/dendrite_query_stream.cmake.
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include <catch2/catch.hpp>

#include <proc.hpp>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// bt-axon --uri //Bob on 127.0.0.1:<free port> as a child process (perf/proc/proc.hpp's
/// child_process); stopped and reaped on exit.
class axon_process {
 public:
  explicit axon_process(int delay_ms)
      : proc_(bt::perf::child_process::spawn({BT_AXON_EXE, "--uri", "//Bob", "--axon.ip",
                                              "127.0.0.1", "--axon.port", "0", "--stream.delay_ms",
                                              std::to_string(delay_ms)})) {
    const std::string line = proc_.read_line(std::chrono::seconds(20)).value_or("");
    const bt::json j = bt::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("port"))
      throw std::runtime_error("bt-axon did not start: '" + line + "'");
    port_ = j.at("port").get<int>();
  }

  std::string target() const {
    return "127.0.0.1:" + std::to_string(port_) + ":" +
           bt::keypair::from_uri("//Bob").ss58_address();
  }

 private:
  bt::perf::child_process proc_;
  int port_ = 0;
};

struct run_result {
  int status = -1;
  std::vector<std::string> lines;
};

run_result run(const std::string& args) {
  const std::string cmd = std::string(BT_DENDRITE_EXE) + " " + args;
  run_result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) r.lines.push_back(line);
  return r;
}

bt::json last_json(const run_result& r) {
  REQUIRE_FALSE(r.lines.empty());
  auto j = bt::json::parse(r.lines.back(), nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  REQUIRE(j.is_object());
  return j;
}

}  // namespace

TEST_CASE("bt-dendrite query --stream against bt-axon's WordStream", "[dendrite][cli][stream]") {
  axon_process ax(0);

  SECTION("typed: one item per line, then the final synapse") {
    auto r = run("query --stream --axon " + ax.target() +
                 " --synapse WordStream --fields '{\"text\": \"hello streaming  world\"}' --uri "
                 "//Alice --timeout 5");
    CHECK(r.status == 0);
    REQUIRE(r.lines.size() == 4);
    CHECK(r.lines[0] == "hello");
    CHECK(r.lines[1] == "streaming");
    CHECK(r.lines[2] == "world");
    auto j = last_json(r);
    CHECK(j.at("name") == "WordStream");
    CHECK(j.at("dendrite").at("status_code") == 200);
    CHECK(j.at("words") == bt::json::array({"hello", "streaming", "world"}));
    CHECK(j.at("text") == "hello streaming  world");
  }
  SECTION("dynamic: the raw bytes verbatim, then the final synapse") {
    auto r = run("query --stream --dynamic --axon " + ax.target() +
                 " --synapse WordStream --fields '{\"text\": \"one two\"}' --required text"
                 " --hash-fields text --uri //Alice --timeout 5");
    CHECK(r.status == 0);
    REQUIRE(r.lines.size() == 3);
    CHECK(r.lines[0] == "one");
    CHECK(r.lines[1] == "two");
    auto j = last_json(r);
    CHECK(j.at("dendrite").at("status_code") == 200);
  }
  SECTION("--stream with a non-streaming known type is bad usage") {
    auto r =
        run("query --stream --axon " + ax.target() + " --synapse Dummy --uri //Alice 2>/dev/null");
    CHECK(r.status == 2);
  }
}

TEST_CASE("bt-dendrite query --stream: a slow stream is cut at the deadline",
          "[dendrite][cli][stream]") {
  axon_process ax(300);
  auto r = run("query --stream --axon " + ax.target() +
               " --synapse WordStream --fields '{\"text\": \"a b c d e f g h i j\"}' --uri //Alice "
               "--timeout 1");
  CHECK(r.status == 1);
  REQUIRE(r.lines.size() >= 2);  // at least one word, then the final line
  CHECK(r.lines[0] == "a");
  CHECK(r.lines.size() < 11);
  auto j = last_json(r);
  CHECK(j.at("dendrite").at("status_code") == 408);
  CHECK(j.at("dendrite").at("status_message") == "Request timeout after 1.0 seconds");
  CHECK(j.at("words").size() == r.lines.size() - 1);
}

TEST_CASE("bt-dendrite query --stream prints each item as it arrives (flushed)",
          "[dendrite][cli][stream]") {
  // The axon waits 1 s before each of three words. Printed and flushed per item, the first read
  // of the pipe returns the first word alone, a second before the next one exists; output
  // buffered until exit would arrive as one block with the final JSON line.
  axon_process ax(1000);
  const std::string cmd =
      std::string(BT_DENDRITE_EXE) + " query --stream --axon " + ax.target() +
      " --synapse WordStream --fields '{\"text\": \"one two three\"}' --uri //Alice --timeout 10";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  const int fd = fileno(p);
  std::vector<std::string> reads;  // what each read() returned, in order
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pf{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&pf, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    reads.emplace_back(buf, static_cast<std::size_t>(n));
  }
  const int st = pclose(p);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  REQUIRE(reads.size() >= 3);
  CHECK(reads[0] == "one\n");
  CHECK(reads[1] == "two\n");
  std::string all;
  for (const auto& r : reads) all += r;
  CHECK(all.rfind("one\ntwo\nthree\n{", 0) == 0);  // then the final JSON line
}
