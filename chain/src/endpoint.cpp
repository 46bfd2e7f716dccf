// Endpoint URLs and the subtensor endpoint flags (endpoint.hpp).
#include <bt/chain/chain_error.hpp>
#include <bt/chain/endpoint.hpp>

#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace bt {
namespace {

std::optional<endpoint> fail(bt::error* err, std::string what, std::string detail) {
  if (err) *err = bt::error{chain_errc::bad_endpoint, std::move(what), std::move(detail)};
  return std::nullopt;
}

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

bool valid_host_char(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '.' || c == '_';
}

}  // namespace

std::string endpoint::host_header() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) h += ":" + std::to_string(port);
  return h;
}

std::string endpoint::url() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return std::string(tls ? "wss://" : "ws://") + h + ":" + std::to_string(port) + target;
}

std::optional<endpoint> parse_endpoint(std::string_view url, bt::error* err) {
  const std::string quoted = "\"" + std::string(url.substr(0, 200)) + "\"";
  const std::string what = "chain endpoint";
  for (unsigned char c : url) {
    if (c <= 0x20 || c == 0x7f) return fail(err, what, "space or control character in " + quoted);
  }
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) {
    return fail(err, what, "not a URL (expected ws://host[:port] or wss://host[:port]): " + quoted);
  }
  const std::string scheme = lower(url.substr(0, sep));
  if (scheme != "ws" && scheme != "wss") {
    return fail(err, what, "unsupported scheme \"" + scheme + "\" (ws or wss) in " + quoted);
  }
  // RFC 3986 syntax (Boost.URL): a malformed authority, IPv6 literal, port or path is refused
  // here; what the syntax allows but a subtensor endpoint does not is refused below.
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed)
    return fail(err, what, "malformed URL (" + parsed.error().message() + "): " + quoted);
  const boost::urls::url_view& u = *parsed;
  // Boost.URL 1.81 ends a port at its first non-digit and reads the rest as a path ("h:99x" is
  // port 99, path "x"), where RFC 3986 wants a path after an authority to start with '/'.
  if (!u.encoded_path().empty() && u.encoded_path().front() != '/') {
    return fail(err, what, "malformed host or port in " + quoted);
  }
  endpoint ep;
  ep.tls = scheme == "wss";
  if (u.has_fragment()) return fail(err, what, "fragment in " + quoted);
  if (u.has_userinfo()) return fail(err, what, "user info is not supported in " + quoted);
  switch (u.host_type()) {
    case boost::urls::host_type::ipv6:
      ep.host = std::string(u.encoded_host_address());  // as written, without brackets
      break;
    case boost::urls::host_type::ipv4:
    case boost::urls::host_type::name:
      ep.host = std::string(u.encoded_host());
      for (unsigned char c : ep.host) {
        if (!valid_host_char(c)) return fail(err, what, "bad character in host of " + quoted);
      }
      break;
    default:
      return fail(err, what, "bad IPv6 address in " + quoted);
  }
  if (ep.host.empty()) return fail(err, what, "no host in " + quoted);
  if (!u.has_port()) {
    ep.port = ep.tls ? 443 : 80;
  } else {
    const std::string_view port_text = u.port();
    if (port_text.empty()) return fail(err, what, "empty port in " + quoted);
    if (port_text.size() > 5) return fail(err, what, "port is not a number in " + quoted);
    const unsigned long p = std::stoul(std::string(port_text));
    if (p == 0 || p > 65535) return fail(err, what, "port out of range (1-65535) in " + quoted);
    ep.port = static_cast<std::uint16_t>(p);
  }
  // The handshake's target: the path and query as written, "/" when the path is empty.
  const std::string_view target = u.encoded_target();
  if (!target.empty())
    ep.target = target.front() == '/' ? std::string(target) : "/" + std::string(target);
  return ep;
}

std::optional<std::string> network_url(std::string_view network) {
  if (network == "finney") return "wss://entrypoint-finney.opentensor.ai:443";
  if (network == "test") return "wss://test.finney.opentensor.ai:443";
  if (network == "local") return "ws://127.0.0.1:9944";
  return std::nullopt;
}

std::optional<endpoint> resolve_endpoint(std::string_view chain_endpoint, std::string_view network,
                                         const char* env, bt::error* err) {
  auto from = [&](std::string_view url, const char* source) -> std::optional<endpoint> {
    auto ep = parse_endpoint(url, err);
    if (!ep && err) err->what = std::string(source);
    return ep;
  };
  if (!chain_endpoint.empty()) return from(chain_endpoint, "--subtensor.chain_endpoint");
  if (!network.empty()) {
    if (network.find("://") != std::string_view::npos) return from(network, "--subtensor.network");
    if (auto url = network_url(network)) return from(*url, "--subtensor.network");
    return fail(err, "--subtensor.network",
                "unknown network \"" + std::string(network.substr(0, 100)) +
                    "\" (finney, test, local, or a ws:// or wss:// URL)");
  }
  if (env != nullptr && *env != '\0') return from(env, "BT_SUBTENSOR_CHAIN_ENDPOINT");
  return from(*network_url("finney"), "default network finney");
}

std::optional<endpoint> resolve_endpoint_from_env(std::string_view chain_endpoint,
                                                  std::string_view network, bt::error* err) {
  return resolve_endpoint(chain_endpoint, network, std::getenv("BT_SUBTENSOR_CHAIN_ENDPOINT"), err);
}

}  // namespace bt
