// bt-axon's logger: text (spdlog's usual pattern) or JSON lines, on stderr or in a size-rotated
// file (--logging.format, --logging.file, --logging.max_bytes, --logging.max_files).
//
// Text: "[2026-01-02 03:04:05.678] [bt-axon] [info] message", spdlog's default pattern, with the
// message escaped (text_log_formatter): a message always stays on its own line, so text from
// outside (a peer's header, a node's error) can never start a line of its own. The escapes:
// backslash as \\, \n \r \t, other control characters (C0, DEL) as \xNN, C1 controls and the
// Unicode line and paragraph separators as \uNNNN, a malformed UTF-8 byte as \xNN.
//
// JSON: one object per line, {"ts":"2026-01-02T03:04:05.678901Z","level":"info",
// "logger":"bt-axon","thread":123,"msg":"..."}; the message is escaped as a JSON string
// (quotes, backslashes, control characters; invalid UTF-8 replaced by U+FFFD), so a message can
// never break a line or the object. Timestamps are UTC.
#pragma once

#include <bt/json.hpp>

#include <spdlog/formatter.h>
#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstddef>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

namespace bt::miner {

/// Appends `text` with the escapes described at the top of this file: the result holds no line
/// break and no terminal control sequence, and reads back unambiguously (a backslash in the
/// text is doubled, so "\\n" in the output can only come from a real newline).
inline void append_escaped_log_text(std::string_view text, std::string& out) {
  auto hex = [&](unsigned v, int digits) {  // \xNN or \uNNNN
    constexpr char digit[] = "0123456789abcdef";
    out += '\\';
    out += digits == 2 ? 'x' : 'u';
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += digit[(v >> shift) & 0xF];
  };
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned c = *p;
    if (c >= 0x20 && c < 0x7F) {
      if (c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++p;
      continue;
    }
    if (c < 0x80) {  // C0 or DEL
      if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else
        hex(c, 2);
      ++p;
      continue;
    }
    // A well-formed UTF-8 sequence is copied, except U+0080..U+009F (C1) and U+2028/U+2029.
    std::size_t n = 0;
    unsigned cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      cp = c & 0x07;
    }
    bool ok = n != 0 && static_cast<std::size_t>(end - p) >= n;
    for (std::size_t i = 1; ok && i < n; ++i) {
      if ((p[i] & 0xC0) != 0x80)
        ok = false;
      else
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (ok) {  // no overlong form, surrogate or value past U+10FFFF
      ok = (n == 2 || (n == 3 && cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) ||
            (n == 4 && cp >= 0x10000 && cp <= 0x10FFFF));
    }
    if (!ok) {
      hex(c, 2);
      ++p;
      continue;
    }
    if (cp <= 0x9F || cp == 0x2028 || cp == 0x2029)
      hex(cp, 4);
    else
      out.append(reinterpret_cast<const char*>(p), n);
    p += n;
  }
}

/// spdlog's default pattern ("%+") over the escaped message: one log call, one line.
class text_log_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    escaped_.clear();
    append_escaped_log_text(std::string_view(msg.payload.data(), msg.payload.size()), escaped_);
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(escaped_.data(), escaped_.size());
    inner_.format(copy, dest);
    // The colour sink reads the level's range from the message it passed (mutable fields).
    msg.color_range_start = copy.color_range_start;
    msg.color_range_end = copy.color_range_end;
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<text_log_formatter>();
  }

 private:
  spdlog::pattern_formatter inner_;  // "%+", spdlog's default
  std::string escaped_;              // reused; a sink formats under its own lock
};

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
  if (c.format == "json")
    log->set_formatter(std::make_unique<json_log_formatter>());
  else
    log->set_formatter(std::make_unique<text_log_formatter>());
  // Warnings and errors reach the file at once; info lines are flushed with them or when the
  // sink's buffer fills (and at exit).
  log->flush_on(c.file.empty() ? spdlog::level::trace : spdlog::level::info);
  spdlog::register_logger(log);
  return log;
}

}  // namespace bt::miner
