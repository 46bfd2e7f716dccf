#include "axon_flags.hpp"

#include <bt/proxy_protocol.hpp>

#include <option_flags.hpp>

#include <boost/asio/ip/address.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace bt::miner {
namespace {

/// `text` without the brackets of "[::1]".
std::string unbracketed(const std::string& text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
    return text.substr(1, text.size() - 2);
  return text;
}

}  // namespace

std::map<std::string, CLI::Option*, std::less<>> add_axon_flags(CLI::App& app,
                                                                bt::axon_options& o) {
  std::map<std::string, CLI::Option*, std::less<>> flags;
  bt::cli::add_flags_of(app, o, [&](const auto& m, CLI::Option* opt) {
    if (m.cli.unit != bt::option_unit::flag) opt->envname(bt::cli::flag_env_name(m.cli.flag));
    flags.emplace(std::string(m.name), opt);
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
