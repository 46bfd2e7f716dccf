// bt::terminal_info: one side's view of a call (PROTOCOL 1.1). All fields optional, in wire order.
#pragma once

#include <bt/detail/member_table.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

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

/// TerminalInfo's fields in wire order, named once: every codec (headers bt_header_axon_<name>
/// and bt_header_dendrite_<name>, JSON bodies, terminal_info_from_json) walks this table.
inline constexpr auto terminal_info_members =
    std::tuple{detail::named_member{"status_code", &terminal_info::status_code},
               detail::named_member{"status_message", &terminal_info::status_message},
               detail::named_member{"process_time", &terminal_info::process_time},
               detail::named_member{"ip", &terminal_info::ip},
               detail::named_member{"port", &terminal_info::port},
               detail::named_member{"version", &terminal_info::version},
               detail::named_member{"nonce", &terminal_info::nonce},
               detail::named_member{"uuid", &terminal_info::uuid},
               detail::named_member{"hotkey", &terminal_info::hotkey},
               detail::named_member{"signature", &terminal_info::signature}};

}  // namespace bt
