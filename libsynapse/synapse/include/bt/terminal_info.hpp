// bt::terminal_info: one side's view of a call (PROTOCOL 1.1). All fields optional, in wire order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bt {

struct terminal_info {
  std::optional<std::int64_t> status_code;    ///< HTTP-like status as seen by this terminal
  std::optional<std::string> status_message;  ///< human-readable status
  std::optional<double> process_time;         ///< seconds spent by this terminal
  std::optional<std::string> ip;
  std::optional<std::int64_t> port;
  std::optional<std::int64_t> version;   ///< version_as_int of the terminal's SDK
  std::optional<std::int64_t> nonce;     ///< wall-clock nanoseconds (fits int64 until 2262)
  std::optional<std::string> uuid;       ///< terminal instance id (uuid1 text)
  std::optional<std::string> hotkey;     ///< SS58 address
  std::optional<std::string> signature;  ///< "0x" + 128 hex digits

  friend bool operator==(const terminal_info&, const terminal_info&) = default;
};

/// The ten field names in wire order, for codecs that iterate.
inline constexpr const char* terminal_info_fields[10] = {
    "status_code", "status_message", "process_time", "ip",     "port",
    "version",     "nonce",          "uuid",         "hotkey", "signature"};

}  // namespace bt
