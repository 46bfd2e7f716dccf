// Bytes of PROXY protocol version 2 headers, for the parser's tests and the axon's.
#pragma once

#include <cstddef>
#include <string>

namespace bt::test {

/// The 12-byte signature that opens every version 2 header.
inline const std::string proxy_v2_signature("\r\n\r\n\0\r\nQUIT\n", 12);

/// `v` as two bytes, most significant first (the header's length and port fields).
inline std::string be16(std::size_t v) {
  return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)};
}

}  // namespace bt::test
