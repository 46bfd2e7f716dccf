// bt-axon's (and bt-ping's) log formatters (tools/common/log_setup.hpp): in the text format a log
// call is always exactly one line, whatever the message holds, and escapes read back unambiguously.
#include <log_setup.hpp>

#include <catch2/catch.hpp>

#include <spdlog/sinks/ostream_sink.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string escaped(std::string_view text) {
  std::string out;
  bt::miner::append_escaped_log_text(text, out);
  return out;
}

std::size_t count_newlines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST_CASE("log text escaping: control characters, separators, malformed bytes", "[tools][log]") {
  CHECK(escaped("plain text, [brackets] and 'quotes' stay") ==
        "plain text, [brackets] and 'quotes' stay");
  CHECK(escaped("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(escaped("back\\slash") == "back\\\\slash");  // so "\\n" cannot be forged
  CHECK(escaped("literal \\n") == "literal \\\\n");  // text "\n" differs from a newline
  CHECK(escaped(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(escaped("\x1b[31mred\x7f") == "\\x1b[31mred\\x7f");  // ESC (terminal codes) and DEL
  CHECK(escaped("nel\xC2\x85 csi\xC2\x9B") == "nel\\u0085 csi\\u009b");  // C1 controls
  CHECK(escaped("ls\xE2\x80\xA8ps\xE2\x80\xA9") == "ls\\u2028ps\\u2029");
  CHECK(escaped("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");  // other UTF-8 is kept
  CHECK(escaped("bad\xFF\xC3(\xE0\x80\x80\xED\xA0\x80") ==
        "bad\\xff\\xc3(\\xe0\\x80\\x80\\xed\\xa0\\x80");  // stray, truncated, overlong, surrogate
  CHECK(escaped("cut\xE2\x82") == "cut\\xe2\\x82");
}

TEST_CASE("text log format: one call is one line, the prefix is spdlog's", "[tools][log]") {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger log("bt-axon", sink);
  log.set_formatter(std::make_unique<bt::miner::text_log_formatter>());
  log.error("node error: {}",
            "oops\n[2026-01-01 00:00:00.000] [bt-axon] [info] metagraph "
            "refreshed: subnet 1 at block 99\r\x1b[2K");
  const std::string line = out.str();
  INFO(line);
  CHECK(count_newlines(line) == 1);
  CHECK(line.back() == '\n');
  CHECK(line.starts_with("["));
  CHECK(line.find("] [bt-axon] [error] node error: oops\\n[2026-01-01 00:00:00.000] [bt-axon] "
                  "[info] metagraph refreshed: subnet 1 at block 99\\r\\x1b[2K\n") !=
        std::string::npos);
}

TEST_CASE("make_logger: the text format writes a forged newline escaped into the file",
          "[tools][log]") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("bt-log-setup-test-" + std::to_string(getpid()) + ".log");
  std::filesystem::remove(path);
  {
    bt::miner::log_config c;
    c.file = path.string();
    auto log = bt::miner::make_logger("bt-log-test", c);
    log->info("first\nfake line");
    log->info("second");
    log->flush();
    spdlog::drop("bt-log-test");
  }
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  INFO(text);
  CHECK(count_newlines(text) == 2);
  CHECK(text.find("[info] first\\nfake line\n") != std::string::npos);
  CHECK(text.find("\nfake line") == std::string::npos);
  std::filesystem::remove(path);
}
