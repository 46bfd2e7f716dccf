// bt-axon's logger: text (spdlog's usual pattern) or JSON lines, on stderr or in a size-rotated
// file (--logging.format, --logging.file, --logging.max_bytes, --logging.max_files).
//
// JSON: one object per line, {"ts":"2026-01-02T03:04:05.678901Z","level":"info",
// "logger":"bt-axon","thread":123,"msg":"..."}; the message is escaped as a JSON string
// (quotes, backslashes, control characters; invalid UTF-8 replaced by U+FFFD), so a message can
// never break a line or the object. Timestamps are UTC.
#pragma once

#include <bt/json.hpp>

#include <spdlog/formatter.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstddef>
#include <ctime>
#include <memory>
#include <string>

namespace bt::miner {

class json_log_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    bt::json j = bt::json::object();
    j["ts"] = utc_timestamp(msg.time);
    const auto level = spdlog::level::to_string_view(msg.level);
    j["level"] = std::string(level.data(), level.size());
    j["logger"] = std::string(msg.logger_name.data(), msg.logger_name.size());
    j["thread"] = msg.thread_id;
    j["msg"] = std::string(msg.payload.data(), msg.payload.size());
    const std::string line = j.dump(-1, ' ', false, bt::json::error_handler_t::replace);
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<json_log_formatter>();
  }

 private:
  static std::string utc_timestamp(spdlog::log_clock::time_point t) {
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
    const std::time_t secs = static_cast<std::time_t>(us / 1'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[40];
    const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%06lldZ", static_cast<long long>(us % 1'000'000));
    return std::string(buf, n) + frac;
  }
};

struct log_config {
  std::string format = "text";  // text | json
  std::string file{};           // empty: stderr
  std::size_t max_bytes = 100 * 1024 * 1024;
  std::size_t max_files = 5;
};

/// The logger `name` as configured (registered with spdlog). Throws spdlog::spdlog_ex when the
/// file cannot be opened.
inline std::shared_ptr<spdlog::logger> make_logger(const std::string& name, const log_config& c) {
  spdlog::sink_ptr sink;
  if (c.file.empty()) {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  } else {
    sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(c.file, c.max_bytes, c.max_files);
  }
  auto log = std::make_shared<spdlog::logger>(name, std::move(sink));
  if (c.format == "json") log->set_formatter(std::make_unique<json_log_formatter>());
  // Warnings and errors reach the file at once; info lines are flushed with them or when the
  // sink's buffer fills (and at exit).
  log->flush_on(c.file.empty() ? spdlog::level::trace : spdlog::level::info);
  spdlog::register_logger(log);
  return log;
}

}  // namespace bt::miner
