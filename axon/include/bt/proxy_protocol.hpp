// bt::proxy_protocol: the PROXY protocol header a load balancer (HAProxy `send-proxy` /
// `send-proxy-v2`) puts at the start of a TCP connection to say who the real caller is, and the
// CIDR lists that decide which peers may send one.
//
// The parser is pure: bytes in, a verdict out, no I/O, no allocation, no locale. It accepts
//  - version 1 (text): "PROXY TCP4|TCP6 <src> <dst> <sport> <dport>\r\n" or "PROXY UNKNOWN...\r\n",
//    at most 107 bytes including CRLF (the specification's bound);
//  - version 2 (binary): the 12-byte signature, version 2, command LOCAL or PROXY, family
//    TCP over IPv4 or IPv6 (UNSPEC with LOCAL), the addresses, then TLVs, which are skipped after
//    a bounds check of each one. The whole header is capped (`max_v2_bytes`, default 4 KiB).
// Anything else is refused with a reason: a connection from a trusted proxy that does not start
// with a valid header is closed, never served with the proxy's address.
//
// Strictness: one space between v1 fields, ports in decimal without sign or leading zeros
// (0..65535), addresses as plain literals (dotted quad without leading zeros for IPv4, RFC 4291
// text without a zone for IPv6; TCP4 must carry IPv4 and TCP6 IPv6). UDP and UNIX families are
// refused with the PROXY command (the axon serves TCP only); with LOCAL they are ignored, as the
// specification asks (LOCAL means "keep the connection's own addresses", e.g. a health check).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bt::proxy_protocol {

/// An IPv4 or IPv6 address as its network-order bytes (IPv4 in the first four).
struct ip_address {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};

  /// A plain literal ("192.0.2.1", "2001:db8::1"); no zone, no brackets, no host names.
  static std::optional<ip_address> parse(std::string_view text);
  /// Conventional text (inet_ntop): "192.0.2.1", "2001:db8::1", "::ffff:192.0.2.1".
  std::string to_string() const;
  /// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as IPv4; any other address unchanged.
  ip_address unmapped() const noexcept;
  friend bool operator==(const ip_address&, const ip_address&) = default;
};

struct endpoint {
  ip_address ip;
  std::uint16_t port = 0;
};

enum class parse_status {
  need_more,  ///< a valid prefix of a header: read more bytes (within the size cap)
  complete,   ///< `header` is set
  invalid,    ///< not a header, or a malformed one: `error` says why
};

struct header {
  int version = 0;       ///< 1 or 2
  bool local = false;    ///< v1 UNKNOWN or v2 LOCAL: no addresses; use the connection's own
  endpoint source;       ///< the real caller (unset when `local`)
  endpoint destination;  ///< the address the caller dialled (unset when `local`)
  std::size_t size = 0;  ///< bytes the header occupies at the start of the input
};

struct parse_result {
  parse_status status = parse_status::need_more;
  header hdr;                 ///< valid when status == complete
  std::string_view error{};   ///< static text when status == invalid
  bool not_a_header = false;  ///< invalid because the input starts with neither signature
};

/// Version 1's bound, CRLF included (the specification's 107 bytes).
inline constexpr std::size_t v1_max_bytes = 107;
/// Version 2's fixed part: signature (12), version/command, family, length (2).
inline constexpr std::size_t v2_fixed_bytes = 16;
/// Default cap on a whole version 2 header (fixed part + addresses + TLVs). HAProxy's own TLVs
/// (ALPN, authority, unique id, SSL details) fit in a few hundred bytes.
inline constexpr std::size_t default_max_v2_bytes = 4096;

/// Parses the header at the start of `input` (which may hold more: the request that follows).
/// Never reads past `input`; a v2 header longer than `max_v2_bytes` is invalid as soon as its
/// length field is known.
parse_result parse(std::string_view input,
                   std::size_t max_v2_bytes = default_max_v2_bytes) noexcept;

/// An address block: "10.0.0.0/8", "2001:db8::/32"; a bare address means a single host (/32 or
/// /128). Host bits below the prefix must be zero ("10.0.0.1/8" is refused: it is usually a typo).
struct cidr {
  ip_address network;
  unsigned prefix = 0;

  /// Throws std::invalid_argument with a message naming the text and what is wrong.
  static cidr parse(std::string_view text);
  /// Whether `a` is in the block. An IPv4-mapped IPv6 address matches IPv4 blocks.
  bool contains(const ip_address& a) const noexcept;
  std::string to_string() const;
};

/// Parses "CIDR[,CIDR...]" (spaces around items allowed; empty items refused).
/// Throws std::invalid_argument naming the bad item.
std::vector<cidr> parse_cidr_list(std::string_view text);

/// Why the axon closed a connection before reading any request (counted per reason).
enum class reject_reason : std::uint8_t {
  untrusted_source,  ///< the peer is not in trusted_proxies
  missing,           ///< the connection does not start with a PROXY signature
  malformed,         ///< a PROXY header that breaks the format or the size cap
  incomplete,        ///< EOF, error or the deadline before the header was complete
};
inline constexpr std::size_t reject_reason_count = 4;
std::string_view to_string(reject_reason r) noexcept;

}  // namespace bt::proxy_protocol
