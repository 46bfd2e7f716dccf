// redis_nonce_store::parse_url: redis://[[user]:password@]host[:port][/db], parsed by Boost.URL
// (RFC 3986 syntax, percent-decoding of the credentials) and then held to what a Redis endpoint
// may be. No error message contains the URL's credentials.
#include <bt/redis_nonce_store.hpp>

#include <boost/url/parse.hpp>

#include <charconv>
#include <stdexcept>
#include <string>

namespace bt {

redis_nonce_store::endpoint redis_nonce_store::parse_url(std::string_view url) {
  const auto bad = [](const std::string& why) {
    return std::invalid_argument("redis URL: " + why +
                                 " (expected redis://[:password@]host[:port][/db])");
  };
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) throw bad("must start with redis://");
  // Boost.URL's error messages name the kind of error, never the text, so the password stays out.
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) throw bad("malformed (" + parsed.error().message() + ")");
  const boost::urls::url_view& u = *parsed;
  // Boost.URL 1.81 ends a port at its first non-digit and reads the rest as a path ("h:12x" is
  // port 12, path "x"), where RFC 3986 wants a path after an authority to start with '/'.
  if (!u.encoded_path().empty() && u.encoded_path().front() != '/') throw bad("bad host or port");
  endpoint ep;
  if (u.has_userinfo()) {
    if (!u.has_password()) throw bad("the credentials must be [user]:password");
    ep.user = u.user();
    ep.password = u.password();
  }
  switch (u.host_type()) {
    case boost::urls::host_type::ipv4:
    case boost::urls::host_type::ipv6:
      ep.host = std::string(u.encoded_host_address());  // an IPv6 address without its brackets
      break;
    case boost::urls::host_type::name:
      ep.host = std::string(u.encoded_host());
      if (ep.host.find('%') != std::string::npos) throw bad("bad host");
      break;
    default:
      throw bad("bad host");
  }
  if (ep.host.empty()) throw bad("no host");
  if (u.has_port()) {
    const std::string_view port = u.port();
    if (port.empty()) throw bad("empty port");
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535)
      throw bad("bad port '" + std::string(port) + "'");
    ep.port = static_cast<std::uint16_t>(v);
  }
  if (u.has_query() || u.has_fragment()) throw bad("a query or fragment");
  std::string_view db = u.encoded_path();
  if (!db.empty()) db.remove_prefix(1);  // the path of a URL with an authority starts with '/'
  if (!db.empty()) {
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), v);
    if (ec != std::errc() || p != db.data() + db.size() || v > 1'000'000)
      throw bad("bad database number '" + std::string(db) + "'");
    ep.db = v;
  }
  return ep;
}

}  // namespace bt
