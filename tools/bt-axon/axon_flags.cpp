#include "axon_flags.hpp"

#include <bt/proxy_protocol.hpp>

#include <bt_cli.hpp>

#include <boost/asio/ip/address.hpp>

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace bt::miner {
namespace {

/// The flag of one table field; null when the field has none.
template <class Field>
CLI::Option* add_flag_of(CLI::App& app, bt::axon_options& o, const Field& m) {
  using V = typename Field::value_type;
  using unit = bt::option_unit;
  const bt::option_cli& c = m.cli;
  if (c.flag.empty()) return nullptr;
  const std::string name = "--" + std::string(c.flag);
  std::string help(m.help);
  V& field = o.*m.ptr;
  CLI::Option* opt = nullptr;
  if constexpr (std::is_same_v<V, bool>) {
    if (c.unit == unit::flag) return app.add_flag(name, field, help);
    opt = app.add_option_function<std::string>(
                 name, [&field](const std::string& v) { field = v == "on"; }, help)
              ->check(CLI::IsMember({"on", "off"}))
              ->default_str(field ? "on" : "off");
  } else if constexpr (std::is_same_v<V, std::chrono::milliseconds>) {
    if (c.unit == unit::milliseconds) {
      using ms = std::uint32_t;
      opt = app.add_option_function<ms>(
                   name, [&field](const ms& v) { field = std::chrono::milliseconds(v); },
                   help + " (milliseconds)")
                ->check(bt::cli::in_range(static_cast<ms>(c.min), static_cast<ms>(c.max)))
                ->default_str(std::to_string(field.count()));
    } else {
      opt = app.add_option_function<double>(
                   name,
                   [&field](const double& s) {
                     field = std::chrono::milliseconds(std::llround(s * 1000));
                   },
                   help + " (seconds)")
                ->check(bt::cli::in_range(c.min, c.max))
                ->default_str(fmt::format("{}", std::chrono::duration<double>(field).count()));
    }
  } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
    // Kept as given ("a,b,c"): check_axon_flags splits it and names an empty or malformed item.
    opt = app.add_option_function<std::string>(
        name, [&field](const std::string& text) { field = {text}; }, help);
  } else if constexpr (std::is_same_v<V, std::string>) {
    opt = app.add_option(name, field, help);
    if (!field.empty()) opt->capture_default_str();
  } else if constexpr (std::is_integral_v<V>) {
    // A type narrower than int (a port) is checked as an int, so "-1" reads "expected an integer
    // from 0 to 65535", not a message about signs.
    using checked = std::conditional_t<(sizeof(V) < sizeof(int)), int, V>;
    opt = app.add_option(name, field, help)
              ->check(bt::cli::in_range(static_cast<checked>(c.min), static_cast<checked>(c.max)))
              ->capture_default_str();
  } else {
    static_assert(!sizeof(V), "an option of this type cannot have a flag");
  }
  return opt->envname(flag_env_name(c.flag));
}

/// `text` without the brackets of "[::1]".
std::string unbracketed(const std::string& text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
    return text.substr(1, text.size() - 2);
  return text;
}

}  // namespace

std::string flag_env_name(std::string_view flag) {
  std::string env = "BT_";
  for (const char ch : flag)
    env += std::isalnum(static_cast<unsigned char>(ch))
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch)))
               : '_';
  return env;
}

std::map<std::string, CLI::Option*, std::less<>> add_axon_flags(CLI::App& app,
                                                                bt::axon_options& o) {
  std::map<std::string, CLI::Option*, std::less<>> flags;
  bt::detail::for_each_member(bt::axon_options::option_table(), [&](const auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, bool> ||
                  std::is_arithmetic_v<V> || std::is_same_v<V, std::chrono::milliseconds> ||
                  std::is_same_v<V, std::vector<std::string>>) {
      if (CLI::Option* opt = add_flag_of(app, o, m)) flags.emplace(std::string(m.name), opt);
    }
  });
  return flags;
}

void check_axon_flags(bt::axon_options& o) {
  std::vector<std::string> blocks;
  try {
    for (const auto& text : o.trusted_proxies)
      for (const auto& block : bt::proxy_protocol::parse_cidr_list(text))
        blocks.push_back(block.to_string());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--axon.trusted_proxies: ") + e.what());
  }
  o.trusted_proxies = std::move(blocks);
  if (o.proxy_protocol != !o.trusted_proxies.empty())
    throw std::invalid_argument(
        "--axon.proxy_protocol and --axon.trusted_proxies CIDR[,CIDR...] go together (without "
        "trusted proxies every connection would be refused)");
  if (!o.external_ip.empty()) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(unbracketed(o.external_ip), ec);
    if (ec)
      throw std::invalid_argument(
          "--axon.external_ip '" + o.external_ip +
          "': not an IP address; the address published in AxonInfo must be an IP literal such "
          "as 203.0.113.7 or [2001:db8::1] (validators connect to it without DNS)");
  }
}

}  // namespace bt::miner
