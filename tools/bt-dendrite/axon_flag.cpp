// --axon IP:PORT:HOTKEY (see axon_flag.hpp).
#include "axon_flag.hpp"

#include <bt/ss58.hpp>

#include <stdexcept>
#include <system_error>

namespace bt::cli {

void check_axon_hotkey(const axon_info& a, const std::string& where) {
  std::error_code ec;
  if (!ss58::decode(a.hotkey, ec))
    throw std::invalid_argument(where + ": hotkey '" + a.hotkey + "' is not an SS58 address (" +
                                ec.message() + ")");
}

axon_info parse_axon_flag(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--axon '" + text + "': " + why);
  };
  const auto c2 = text.rfind(':');
  if (c2 == std::string::npos || c2 == 0) throw bad("expected IP:PORT:HOTKEY");
  const auto c1 = text.rfind(':', c2 - 1);
  if (c1 == std::string::npos) throw bad("expected IP:PORT:HOTKEY");
  axon_info a;
  a.hotkey = text.substr(c2 + 1);
  std::string ip = text.substr(0, c1);
  if (ip.size() >= 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  a.ip = ip;
  a.ip_type = ip.find(':') != std::string::npos ? 6 : 4;
  const std::string port = text.substr(c1 + 1, c2 - c1 - 1);
  unsigned long p = 0;
  try {
    std::size_t used = 0;
    p = std::stoul(port, &used);
    if (used != port.size()) throw std::invalid_argument("port");
  } catch (const std::exception&) {
    throw bad("invalid port '" + port + "'");
  }
  if (p == 0 || p > 65535) throw bad("port out of range");
  if (ip.empty() || a.hotkey.empty()) throw bad("expected IP:PORT:HOTKEY");
  a.port = static_cast<std::uint16_t>(p);
  check_axon_hotkey(a, "--axon '" + text + "'");
  return a;
}

}  // namespace bt::cli
