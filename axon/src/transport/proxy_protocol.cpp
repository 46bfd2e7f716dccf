// The PROXY protocol parser and CIDR matching (contracts in bt/proxy_protocol.hpp).
#include <bt/proxy_protocol.hpp>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace bt::proxy_protocol {

namespace {

constexpr std::string_view v1_signature = "PROXY ";
constexpr std::array<std::uint8_t, 12> v2_signature = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                       0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

parse_result invalid(std::string_view why, bool not_header = false) noexcept {
  parse_result r;
  r.status = parse_status::invalid;
  r.error = why;
  r.not_a_header = not_header;
  return r;
}

bool prefix_of(std::string_view input, const std::uint8_t* sig, std::size_t n) noexcept {
  const std::size_t k = std::min(input.size(), n);
  return std::memcmp(input.data(), sig, k) == 0;
}

/// Decimal port: 1-5 digits, no leading zero unless "0", at most 65535.
std::optional<std::uint16_t> parse_port(std::string_view s) noexcept {
  if (s.empty() || s.size() > 5 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  unsigned v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

std::optional<ip_address> parse_family(std::string_view text, bool v6) {
  auto a = ip_address::parse(text);
  if (!a || a->v6 != v6) return std::nullopt;
  return a;
}

parse_result parse_v1(std::string_view input) noexcept {
  // Find CRLF within the bound; every byte before it must be printable ASCII.
  const std::size_t limit = std::min(input.size(), v1_max_bytes);
  std::size_t eol = std::string_view::npos;
  for (std::size_t i = v1_signature.size(); i < limit; ++i) {
    const unsigned char c = static_cast<unsigned char>(input[i]);
    if (c == '\r') {
      if (i + 1 == input.size()) break;  // the LF may be next
      if (i + 1 >= v1_max_bytes || input[i + 1] != '\n')
        return invalid("PROXY v1: CR not followed by LF within 107 bytes");
      eol = i;
      break;
    }
    if (c < 0x20 || c > 0x7e) return invalid("PROXY v1: a control or non-ASCII byte in the line");
  }
  if (eol == std::string_view::npos) {
    if (input.size() >= v1_max_bytes) return invalid("PROXY v1: no CRLF within 107 bytes");
    parse_result r;
    r.status = parse_status::need_more;
    return r;
  }
  const std::string_view line = input.substr(v1_signature.size(), eol - v1_signature.size());
  parse_result r;
  r.status = parse_status::complete;
  r.hdr.version = 1;
  r.hdr.size = eol + 2;
  // "UNKNOWN": the proxy does not know the caller (or is checking us); the rest of the line is
  // ignored, as the specification says.
  if (line == "UNKNOWN" || line.starts_with("UNKNOWN ")) {
    r.hdr.local = true;
    return r;
  }
  std::array<std::string_view, 5> f;
  std::size_t n = 0, start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ' ') {
      if (n == f.size()) return invalid("PROXY v1: more than 5 fields");
      f[n++] = line.substr(start, i - start);
      if (f[n - 1].empty()) return invalid("PROXY v1: empty field (fields take one space)");
      start = i + 1;
    }
  }
  bool v6;
  if (f[0] == "TCP4") {
    v6 = false;
  } else if (f[0] == "TCP6") {
    v6 = true;
  } else {
    return invalid("PROXY v1: protocol is not TCP4, TCP6 or UNKNOWN");
  }
  if (n != 5) return invalid("PROXY v1: fewer than 5 fields");
  try {
    const auto src = parse_family(f[1], v6);
    if (!src) return invalid("PROXY v1: bad source address for the protocol");
    const auto dst = parse_family(f[2], v6);
    if (!dst) return invalid("PROXY v1: bad destination address for the protocol");
    const auto sport = parse_port(f[3]);
    if (!sport) return invalid("PROXY v1: bad source port");
    const auto dport = parse_port(f[4]);
    if (!dport) return invalid("PROXY v1: bad destination port");
    r.hdr.source = {*src, *sport};
    r.hdr.destination = {*dst, *dport};
  } catch (...) {  // ip_address::parse allocates nothing, but stay noexcept whatever happens
    return invalid("PROXY v1: bad address");
  }
  return r;
}

std::uint16_t be16(const unsigned char* p) noexcept {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

parse_result parse_v2(std::string_view input, std::size_t max_v2_bytes) noexcept {
  parse_result r;
  if (input.size() < v2_fixed_bytes) return r;  // need_more
  const auto* b = reinterpret_cast<const unsigned char*>(input.data());
  if ((b[12] >> 4) != 2) return invalid("PROXY v2: version is not 2");
  const unsigned command = b[12] & 0x0f;
  if (command > 1) return invalid("PROXY v2: command is neither LOCAL nor PROXY");
  const std::size_t length = be16(b + 14);
  const std::size_t total = v2_fixed_bytes + length;
  if (total > max_v2_bytes) return invalid("PROXY v2: header longer than the configured cap");
  if (input.size() < total) return r;  // need_more
  r.hdr.version = 2;
  r.hdr.size = total;
  std::size_t addr_len = 0;
  if (command == 0) {
    // LOCAL: the proxy's own connection (health checks); whatever follows is skipped.
    r.hdr.local = true;
    r.status = parse_status::complete;
    return r;
  }
  const unsigned family = b[13];
  const unsigned char* a = b + v2_fixed_bytes;
  // The address block: source address, destination address, source port, destination port.
  const bool v6 = family == 0x21;  // TCP over IPv6; 0x11 is TCP over IPv4
  if (family != 0x11 && !v6) return invalid("PROXY v2: family is not TCP over IPv4 or IPv6");
  const std::size_t ip_len = v6 ? 16 : 4;
  addr_len = 2 * ip_len + 4;
  if (length < addr_len)
    return invalid(v6 ? "PROXY v2: IPv6 address block shorter than 36 bytes"
                      : "PROXY v2: IPv4 address block shorter than 12 bytes");
  r.hdr.source.ip.v6 = r.hdr.destination.ip.v6 = v6;
  std::memcpy(r.hdr.source.ip.bytes.data(), a, ip_len);
  std::memcpy(r.hdr.destination.ip.bytes.data(), a + ip_len, ip_len);
  r.hdr.source.port = be16(a + 2 * ip_len);
  r.hdr.destination.port = be16(a + 2 * ip_len + 2);
  // TLVs: type (1), length (2), value; each must end within the header.
  std::size_t off = v2_fixed_bytes + addr_len;
  while (off < total) {
    if (total - off < 3) return invalid("PROXY v2: truncated TLV");
    const std::size_t vlen = be16(b + off + 1);
    if (total - off - 3 < vlen) return invalid("PROXY v2: TLV runs past the header");
    off += 3 + vlen;
  }
  r.status = parse_status::complete;
  return r;
}

}  // namespace

std::optional<ip_address> ip_address::parse(std::string_view text) {
  // inet_pton needs a NUL-terminated string; the longest IPv6 text is 45 characters.
  char buf[64];
  if (text.empty() || text.size() >= sizeof buf) return std::nullopt;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  ip_address a;
  if (text.find(':') == std::string_view::npos) {
    if (::inet_pton(AF_INET, buf, a.bytes.data()) != 1) return std::nullopt;
  } else {
    a.v6 = true;
    if (::inet_pton(AF_INET6, buf, a.bytes.data()) != 1) return std::nullopt;
  }
  return a;
}

std::string ip_address::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (!::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof buf)) return {};
  return buf;
}

ip_address ip_address::unmapped() const noexcept {
  static constexpr std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (!v6 || std::memcmp(bytes.data(), mapped, 12) != 0) return *this;
  ip_address v4;
  std::memcpy(v4.bytes.data(), bytes.data() + 12, 4);
  return v4;
}

parse_result parse(std::string_view input, std::size_t max_v2_bytes) noexcept {
  if (input.empty()) return {};
  if (prefix_of(input, reinterpret_cast<const std::uint8_t*>(v1_signature.data()),
                v1_signature.size())) {
    if (input.size() < v1_signature.size()) return {};
    return parse_v1(input);
  }
  if (prefix_of(input, v2_signature.data(), v2_signature.size()))
    return parse_v2(input, max_v2_bytes);
  return invalid("no PROXY protocol signature at the start of the connection", true);
}

cidr cidr::parse(std::string_view text) {
  const auto fail = [&](const std::string& why) -> std::invalid_argument {
    return std::invalid_argument("'" + std::string(text) + "' is not a CIDR block: " + why);
  };
  const std::size_t slash = text.find('/');
  const std::string_view addr = text.substr(0, slash);
  const auto a = ip_address::parse(addr);
  if (!a) throw fail("'" + std::string(addr) + "' is not an IPv4 or IPv6 address");
  const unsigned max = a->v6 ? 128 : 32;
  unsigned prefix = max;
  if (slash != std::string_view::npos) {
    const std::string_view p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3 || (p.size() > 1 && p[0] == '0') ||
        !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw fail("the prefix length must be a decimal number");
    prefix = 0;
    for (const char c : p) prefix = prefix * 10 + static_cast<unsigned>(c - '0');
    if (prefix > max)
      throw fail("prefix length " + std::to_string(prefix) + " is above " + std::to_string(max));
  }
  cidr c{*a, prefix};
  ip_address masked = *a;
  for (unsigned bit = prefix; bit < max; ++bit)
    masked.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80u >> (bit % 8)));
  if (!(masked == *a))
    throw fail("host bits are set below /" + std::to_string(prefix) + " (did you mean " +
               masked.to_string() + "/" + std::to_string(prefix) + "?)");
  return c;
}

bool cidr::contains(const ip_address& addr) const noexcept {
  ip_address a = addr.unmapped();
  if (network.v6 && !a.v6) {  // an IPv4 caller against an IPv6 block: compare as ::ffff:a.b.c.d
    ip_address m;
    m.v6 = true;
    m.bytes[10] = m.bytes[11] = 0xff;
    std::memcpy(m.bytes.data() + 12, a.bytes.data(), 4);
    a = m;
  }
  if (a.v6 != network.v6) return false;
  const unsigned full = prefix / 8, rest = prefix % 8;
  if (std::memcmp(a.bytes.data(), network.bytes.data(), full) != 0) return false;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff00u >> rest);
  return (a.bytes[full] & mask) == (network.bytes[full] & mask);
}

std::string cidr::to_string() const {
  return network.to_string() + "/" + std::to_string(prefix);
}

std::vector<cidr> parse_cidr_list(std::string_view text) {
  std::vector<cidr> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty())
      throw std::invalid_argument("empty item in the CIDR list '" + std::string(text) + "'");
    out.push_back(cidr::parse(item));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string_view to_string(reject_reason r) noexcept {
  switch (r) {
    case reject_reason::untrusted_source:
      return "untrusted_source";
    case reject_reason::missing:
      return "missing";
    case reject_reason::malformed:
      return "malformed";
    case reject_reason::incomplete:
      return "incomplete";
  }
  return "unknown";
}

}  // namespace bt::proxy_protocol
