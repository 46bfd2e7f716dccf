// bt::scale_reader: a strict reader of SCALE (the Substrate codec) over a byte span.
//
// Contract: every read either returns a value and advances, or throws bt::chain_decode_error
// naming the field (the `field` argument), the problem and the byte offset; the reader never
// reads past its span and never allocates more than the bytes that are actually present (a
// length prefix larger than the bytes left is refused before anything is reserved). Strict like
// parity-scale-codec's decoders: a bool or Option tag other than 0/1 is an error, and a compact
// integer must use the shortest mode for its value (a non-canonical encoding is refused, as the
// Rust decoder refuses it; see docs/chain.md, "Layouts"). Decoding is all-or-nothing, so errors
// are exceptions; `field` is only used to build the error, so passing a literal costs nothing.
#pragma once

#include <bt/chain/chain_error.hpp>
#include <bt/chain/uint128.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace bt {

class scale_reader {
 public:
  explicit scale_reader(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

  std::size_t offset() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == bytes_.size(); }

  // Fixed-width little-endian integers.
  std::uint8_t u8(std::string_view field) {
    need(1, field);
    return bytes_[pos_++];
  }
  std::uint16_t u16(std::string_view field) { return static_cast<std::uint16_t>(fixed(2, field)); }
  std::uint32_t u32(std::string_view field) { return static_cast<std::uint32_t>(fixed(4, field)); }
  std::uint64_t u64(std::string_view field) { return static_cast<std::uint64_t>(fixed(8, field)); }
  uint128_t u128(std::string_view field) { return fixed(16, field); }

  /// 0 → false, 1 → true, anything else is invalid_bool.
  bool boolean(std::string_view field);

  /// Compact<u64> (all four modes). Non-canonical encodings and values above u64 are
  /// invalid_compact. The single-byte mode (0..63, most values in a metagraph) is inline.
  std::uint64_t compact(std::string_view field) {
    if (pos_ < bytes_.size() && (bytes_[pos_] & 3U) == 0) return bytes_[pos_++] >> 2;
    return compact_wide(field);
  }
  /// Compact<u128>, for balances that may exceed u64; same strictness.
  uint128_t compact_u128(std::string_view field);
  /// Compact<u16> / Compact<u32>: compact() plus a range check (invalid_compact above the type).
  std::uint16_t compact_u16(std::string_view field);
  std::uint32_t compact_u32(std::string_view field);

  /// A compact Vec/byte-string length. Refused (too_long) when larger than remaining(): every
  /// element of every SCALE type this library reads takes at least one byte, so such a length
  /// can never be satisfied. Also refused (too_long) above `max_count`, a bound the caller knows
  /// from the domain (e.g. 65,536 neurons in a subnet). A length that passes may still claim
  /// more elements than the bytes left can hold at the element's real size: decoders reserve
  /// for at most reservable(n, min_element_bytes) of them (docs/chain.md, "Hostile nodes").
  std::size_t length(std::string_view field, std::size_t max_count = static_cast<std::size_t>(-1));

  /// How many of `n` claimed elements, each taking at least `min_element_bytes` (>= 1) encoded
  /// bytes, the bytes left can hold: what a decoder may reserve before reading them, so that a
  /// hostile count costs at most sizeof(T) / min_element_bytes times the input. The elements
  /// themselves are then read one by one (a short input fails as truncated, naming the element).
  std::size_t reservable(std::size_t n, std::size_t min_element_bytes) const noexcept {
    const std::size_t fit = remaining() / (min_element_bytes == 0 ? 1 : min_element_bytes);
    return n < fit ? n : fit;
  }

  /// An Option tag: 0 → false (None), 1 → true (Some), anything else invalid_option.
  bool option(std::string_view field);

  /// The next n bytes, as a view into the input.
  std::span<const std::uint8_t> bytes(std::size_t n, std::string_view field) {
    need(n, field);
    auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  /// A 32-byte AccountId32 ([u8; 32], no length prefix).
  std::array<std::uint8_t, 32> account_id(std::string_view field);

  /// A Vec<u8> (compact length + bytes) as a string. The bytes are not validated as UTF-8
  /// (metadata names are ASCII; callers that print other text must not trust it).
  std::string text(std::string_view field);

  /// trailing_bytes unless the whole input has been read; `what` names the value that should
  /// have filled it.
  void expect_end(std::string_view what);

  /// Throws a chain_decode_error for `field` at the current offset (for decoders' own checks).
  [[noreturn]] void fail(chain_errc code, std::string_view field, std::string problem) const;

 private:
  void need(std::size_t n, std::string_view field) {
    if (n > remaining()) fail_truncated(n, field);
  }
  uint128_t fixed(std::size_t n, std::string_view field) {
    need(n, field);
    uint128_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      v |= static_cast<uint128_t>(bytes_[pos_ + i]) << (8 * i);
    }
    pos_ += n;
    return v;
  }
  std::uint64_t compact_wide(std::string_view field);
  [[noreturn]] void fail_truncated(std::size_t n, std::string_view field) const;
  [[noreturn]] void fail_at(chain_errc code, std::string_view field, std::string problem,
                            std::size_t offset) const;

  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

}  // namespace bt
