// AxonInfo (PROTOCOL 8.1): the JSON form of AxonInfo.to_string(), and a parser that also
// accepts the chain's integer IP, decoded by ip_type (not by magnitude, defect D20).
#include <bt/axon_info.hpp>

#include "codec_detail.hpp"

#include <bt/keypair.hpp>
#include <bt/ss58.hpp>

#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <system_error>

namespace bt {
namespace {

std::string ip_from_integer(std::uint64_t v, int ip_type) {
  if (ip_type == 4) {
    std::string s;
    for (int shift = 24; shift >= 0; shift -= 8) {
      if (shift != 24) s += '.';
      detail::append_int(static_cast<unsigned>((v >> shift) & 0xFF), s);
    }
    return s;
  }
  std::array<unsigned char, 16> bytes{};
  for (int i = 0; i < 8; ++i) bytes[15 - i] = static_cast<unsigned char>(v >> (8 * i));
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf) == nullptr) return {};
  return buf;
}

error read_int(const json& j, std::string_view key, std::int64_t min, std::int64_t max,
               std::int64_t& out) {
  const std::string where = "axon_info." + std::string(key);
  std::int64_t v = 0;
  if (auto err = detail::cast_int(j, v, where)) return err;
  if (v < min || v > max)
    return detail::make_error(
        codec_errc::invalid_integer, where,
        "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  out = v;
  return {};
}

}  // namespace

void check_axon_hotkey(const axon_info& a, std::string_view where) {
  bt::init_crypto();  // the SS58 checksum is libsodium's BLAKE2b
  std::error_code ec;
  if (!ss58::decode(a.hotkey, ec))
    throw std::invalid_argument(std::string(where) + ": hotkey '" + a.hotkey +
                                "' is not an SS58 address (" + ec.message() + ")");
}

axon_info axon_info::parse(std::string_view text, std::string_view name) {
  const std::string quoted =
      std::string(name) + (name.empty() ? "'" : " '") + std::string(text) + "'";
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(quoted + ": " + why);
  };
  const auto c2 = text.rfind(':');
  const auto c1 = c2 == std::string_view::npos || c2 == 0 ? c2 : text.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos) throw bad("expected IP:PORT:HOTKEY");
  std::string_view ip = text.substr(0, c1);
  if (ip.size() >= 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  if (ip.empty()) throw bad("the IP is empty (expected IP:PORT:HOTKEY)");
  // An IP literal, as AxonInfo carries it: a dendrite connects to addresses and resolves no name.
  const std::string ip_text(ip);
  if (std::array<unsigned char, 16> bytes{};
      ::inet_pton(AF_INET, ip_text.c_str(), bytes.data()) != 1 &&
      ::inet_pton(AF_INET6, ip_text.c_str(), bytes.data()) != 1)
    throw bad("'" + ip_text +
              "' is not an IP address; an axon is addressed by its IP, as AxonInfo has it (this "
              "machine: 127.0.0.1 or [::1])");
  const std::string_view port = text.substr(c1 + 1, c2 - c1 - 1);
  unsigned p = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || p == 0 || p > 65535)
    throw bad("the port '" + std::string(port) + "' is not an integer from 1 to 65535");
  axon_info a;
  a.ip = std::string(ip);
  a.ip_type = ip.find(':') != std::string_view::npos ? 6 : 4;
  a.port = static_cast<std::uint16_t>(p);
  a.hotkey = std::string(text.substr(c2 + 1));
  if (a.hotkey.empty()) throw bad("the hotkey is empty (expected IP:PORT:HOTKEY)");
  check_axon_hotkey(a, quoted);
  return a;
}

bool axon_info::routable() const noexcept {
  return port != 0 && !ip.empty() && ip != "0.0.0.0" && ip != "::";
}

json to_json_value(const axon_info& a) {
  json j = json::object();
  j["version"] = a.version;
  j["ip"] = a.ip;
  j["port"] = a.port;
  j["ip_type"] = a.ip_type;
  j["hotkey"] = a.hotkey;
  j["coldkey"] = a.coldkey;
  j["protocol"] = a.protocol;
  j["placeholder1"] = a.placeholder1;
  j["placeholder2"] = a.placeholder2;
  return j;
}

error axon_info_from_json(const json& j, axon_info& out) {
  if (!j.is_object())
    return detail::make_error(codec_errc::wrong_type, "axon_info",
                              "expected an object, got " + std::string(detail::json_type_name(j)));
  axon_info a;
  constexpr auto int_max = std::numeric_limits<int>::max();
  constexpr auto int_min = std::numeric_limits<int>::min();
  std::int64_t v = 0;

  auto ip_type_it = j.find("ip_type");
  bool have_ip_type = ip_type_it != j.end() && !ip_type_it->is_null();
  if (have_ip_type) {
    if (auto err = read_int(*ip_type_it, "ip_type", 4, 6, v)) return err;
    if (v != 4 && v != 6)
      return detail::make_error(codec_errc::invalid_integer, "axon_info.ip_type", "must be 4 or 6");
    a.ip_type = static_cast<int>(v);
  }

  auto ip_it = j.find("ip");
  if (ip_it == j.end() || ip_it->is_null())
    return detail::make_error(codec_errc::missing_field, "axon_info.ip", "required");
  if (ip_it->is_string()) {
    a.ip = ip_it->get<std::string>();
    if (!have_ip_type) a.ip_type = a.ip.find(':') != std::string::npos ? 6 : 4;
  } else if (ip_it->is_number_unsigned() || ip_it->is_number_integer()) {
    if (ip_it->is_number_integer() && ip_it->get<std::int64_t>() < 0)
      return detail::make_error(codec_errc::invalid_integer, "axon_info.ip", "negative address");
    const auto n = ip_it->get<std::uint64_t>();
    if (!have_ip_type) a.ip_type = n <= 0xFFFFFFFFu ? 4 : 6;
    if (a.ip_type == 4 && n > 0xFFFFFFFFu)
      return detail::make_error(codec_errc::invalid_integer, "axon_info.ip", "does not fit IPv4");
    a.ip = ip_from_integer(n, a.ip_type);
  } else {
    return detail::make_error(
        codec_errc::wrong_type, "axon_info.ip",
        "expected a string or an integer, got " + std::string(detail::json_type_name(*ip_it)));
  }

  auto port_it = j.find("port");
  if (port_it == j.end() || port_it->is_null())
    return detail::make_error(codec_errc::missing_field, "axon_info.port", "required");
  if (auto err = read_int(*port_it, "port", 0, 65535, v)) return err;
  a.port = static_cast<std::uint16_t>(v);

  auto hotkey_it = j.find("hotkey");
  if (hotkey_it == j.end() || hotkey_it->is_null())
    return detail::make_error(codec_errc::missing_field, "axon_info.hotkey", "required");
  if (!hotkey_it->is_string())
    return detail::make_error(
        codec_errc::wrong_type, "axon_info.hotkey",
        "expected a string, got " + std::string(detail::json_type_name(*hotkey_it)));
  a.hotkey = hotkey_it->get<std::string>();

  if (auto it = j.find("coldkey"); it != j.end() && !it->is_null()) {
    if (!it->is_string())
      return detail::make_error(
          codec_errc::wrong_type, "axon_info.coldkey",
          "expected a string, got " + std::string(detail::json_type_name(*it)));
    a.coldkey = it->get<std::string>();
  }
  if (auto it = j.find("version"); it != j.end() && !it->is_null()) {
    if (auto err = read_int(*it, "version", 0, std::numeric_limits<std::int64_t>::max(), v))
      return err;
    a.version = v;
  }
  if (auto it = j.find("protocol"); it != j.end() && !it->is_null()) {
    if (auto err = read_int(*it, "protocol", int_min, int_max, v)) return err;
    a.protocol = static_cast<int>(v);
  }
  if (auto it = j.find("placeholder1"); it != j.end() && !it->is_null()) {
    if (auto err = read_int(*it, "placeholder1", int_min, int_max, v)) return err;
    a.placeholder1 = static_cast<int>(v);
  }
  if (auto it = j.find("placeholder2"); it != j.end() && !it->is_null()) {
    if (auto err = read_int(*it, "placeholder2", int_min, int_max, v)) return err;
    a.placeholder2 = static_cast<int>(v);
  }
  out = std::move(a);
  return {};
}

}  // namespace bt
