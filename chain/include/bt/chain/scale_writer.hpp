// bt::scale_writer: SCALE encoding (Parity's Simple Concatenated Aggregate Little-Endian codec)
// into a growing byte buffer, the counterpart of bt::scale_reader.
//
// Contract: every call appends exactly the encoding of its value; nothing is validated beyond
// the value's own type (a compact of any u64/u128 is valid, a length is a compact of the count).
// Structs and tuples are the concatenation of their fields in declaration order, enums a u8
// variant index followed by that variant's fields: callers compose them from these calls.
#pragma once

#include <bt/chain/uint128.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace bt {

class scale_writer {
 public:
  scale_writer() = default;

  // Fixed-width little-endian integers.
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { fixed(v, 2); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void u128(uint128_t v) { fixed(v, 16); }
  /// 0x00 or 0x01.
  void boolean(bool v) { out_.push_back(v ? 1 : 0); }
  /// Compact<u64>: single-byte (< 2^6), two-byte (< 2^14), four-byte (< 2^30) or big-integer
  /// mode (the fewest little-endian bytes, 4 to 8, after a header byte of (n - 4) << 2 | 3).
  void compact(std::uint64_t v) { compact_u128(v); }
  /// Compact<u128>: as compact(), up to 16 bytes in big-integer mode.
  void compact_u128(uint128_t v);
  /// A Vec/String/BTreeMap length prefix: compact(n).
  void length(std::size_t n) { compact(static_cast<std::uint64_t>(n)); }
  /// An Option's tag: 0x00 for None, 0x01 for Some (the payload follows, written by the caller).
  void option(bool present) { out_.push_back(present ? 1 : 0); }
  /// Raw bytes with no prefix (fixed arrays such as [u8; 32], or already-encoded values).
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  /// Vec<u8>: compact length, then the bytes.
  void byte_vec(std::span<const std::uint8_t> b) {
    length(b.size());
    bytes(b);
  }
  /// String / Vec<u8> of UTF-8 text: compact length, then the bytes.
  void text(std::string_view s) {
    length(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

  std::size_t size() const noexcept { return out_.size(); }
  const std::vector<std::uint8_t>& data() const noexcept { return out_; }
  std::span<const std::uint8_t> view() const noexcept { return out_; }
  /// Moves the buffer out; the writer is empty afterwards.
  std::vector<std::uint8_t> take() noexcept {
    std::vector<std::uint8_t> r;
    r.swap(out_);
    return r;
  }

 private:
  template <typename T>
  void fixed(T v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> out_;
};

}  // namespace bt
