// bt::axon_info: how a miner's axon is published and addressed (PROTOCOL 8.1).
#pragma once

#include <bt/codec_error.hpp>
#include <bt/json.hpp>
#include <bt/version.hpp>

#include <cstdint>
#include <string>
#include <string_view>

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

  /// The one parser of the "IP:PORT:HOTKEY" form every command-line program takes (IPv6 as
  /// "[::1]:8091:5F..." or bare "::1:8091:5F...": the text is split at its last two colons).
  /// IP must be an IP address (a host name such as "localhost" is refused: a dendrite resolves
  /// nothing), PORT a decimal in 1..65535, HOTKEY an SS58 address (a typo would
  /// otherwise be signed for a key nobody holds and end in the axon's 401); ip_type follows the
  /// IP's form, the other fields keep their defaults. Throws std::invalid_argument
  /// "NAME 'TEXT': <the part that is wrong and why>", NAME being `name` (a flag such as
  /// "--axon"; nothing when empty).
  static axon_info parse(std::string_view text, std::string_view name = {});

  /// A published address one can connect to: a non-empty IP other than the unspecified
  /// "0.0.0.0" / "::" (what the chain reports for a neuron that never served) and a non-zero
  /// port.
  bool routable() const noexcept;

  friend bool operator==(const axon_info&, const axon_info&) = default;
};

/// Throws std::invalid_argument("{where}: hotkey '...' is not an SS58 address (...)") when the
/// hotkey of `a` is not SS58 (for targets read from elsewhere than parse, e.g. a JSON file).
void check_axon_hotkey(const axon_info& a, std::string_view where);

/// {"version","ip","port","ip_type","hotkey","coldkey","protocol","placeholder1","placeholder2"}
json to_json_value(const axon_info& a);
/// Parses one AxonInfo object; ip_type is derived from ip when absent.
error axon_info_from_json(const json& j, axon_info& out);

}  // namespace bt
