// bt::axon_info: how a miner's axon is published and addressed (PROTOCOL 8.1).
#pragma once

#include <bt/codec_error.hpp>
#include <bt/json.hpp>
#include <bt/version.hpp>

#include <cstdint>
#include <string>

namespace bt {

struct axon_info {
  std::int64_t version = version_as_int;
  std::string ip;  ///< dotted IPv4 or IPv6 text
  std::uint16_t port = 0;
  int ip_type = 4;      ///< 4 or 6
  std::string hotkey;   ///< SS58
  std::string coldkey;  ///< SS58 (may be empty when unknown)
  int protocol = axon_protocol;
  int placeholder1 = 0;
  int placeholder2 = 0;

  friend bool operator==(const axon_info&, const axon_info&) = default;
};

/// {"version","ip","port","ip_type","hotkey","coldkey","protocol","placeholder1","placeholder2"}
json to_json_value(const axon_info& a);
/// Parses one AxonInfo object; ip_type is derived from ip when absent.
error axon_info_from_json(const json& j, axon_info& out);

}  // namespace bt
