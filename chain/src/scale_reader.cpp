// bt::scale_reader: the out-of-line reads and every error path (kept cold, out of the header).
#include <bt/chain/scale_reader.hpp>

#include <limits>
#include <string>

namespace bt {

void scale_reader::fail_at(chain_errc code, std::string_view field, std::string problem,
                           std::size_t offset) const {
  throw chain_decode_error(code, std::string(field), std::move(problem), offset);
}

void scale_reader::fail(chain_errc code, std::string_view field, std::string problem) const {
  fail_at(code, field, std::move(problem), pos_);
}

void scale_reader::fail_truncated(std::size_t n, std::string_view field) const {
  fail_at(chain_errc::truncated, field,
          "needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left,", pos_);
}

bool scale_reader::boolean(std::string_view field) {
  const std::size_t at = pos_;
  const std::uint8_t b = u8(field);
  if (b > 1) fail_at(chain_errc::invalid_bool, field, "byte " + std::to_string(b), at);
  return b == 1;
}

bool scale_reader::option(std::string_view field) {
  const std::size_t at = pos_;
  const std::uint8_t b = u8(field);
  if (b > 1) fail_at(chain_errc::invalid_option, field, "tag " + std::to_string(b), at);
  return b == 1;
}

// The four modes, with the minimal-encoding rules of parity-scale-codec's Compact<u128> decoder:
// two-byte mode carries 64..2^14-1, four-byte mode 2^14..2^30-1, big-integer mode (prefix
// (n-4)<<2 | 3, then n little-endian bytes, 4 <= n <= 67) at least 2^30 and a non-zero top
// byte. Anything wider than 16 bytes cannot be a u128 and is refused here.
uint128_t scale_reader::compact_u128(std::string_view field) {
  const std::size_t at = pos_;
  const std::uint8_t prefix = u8(field);
  switch (prefix & 3U) {
    case 0:
      return prefix >> 2;
    case 1: {
      need(1, field);
      const unsigned v = (prefix | (static_cast<unsigned>(bytes_[pos_]) << 8)) >> 2;
      ++pos_;
      if (v < 64) {
        fail_at(chain_errc::invalid_compact, field,
                "non-canonical (two-byte mode for " + std::to_string(v) + ")", at);
      }
      return v;
    }
    case 2: {
      need(3, field);
      const std::uint32_t raw = prefix | (static_cast<std::uint32_t>(bytes_[pos_]) << 8) |
                                (static_cast<std::uint32_t>(bytes_[pos_ + 1]) << 16) |
                                (static_cast<std::uint32_t>(bytes_[pos_ + 2]) << 24);
      pos_ += 3;
      const std::uint32_t v = raw >> 2;
      if (v < (1U << 14)) {
        fail_at(chain_errc::invalid_compact, field,
                "non-canonical (four-byte mode for " + std::to_string(v) + ")", at);
      }
      return v;
    }
    default: {
      const std::size_t n = static_cast<std::size_t>(prefix >> 2) + 4;
      if (n > 16) {
        fail_at(chain_errc::invalid_compact, field,
                "big-integer mode of " + std::to_string(n) + " bytes exceeds 128 bits", at);
      }
      need(n, field);
      uint128_t v = 0;
      for (std::size_t i = 0; i < n; ++i) {
        v |= static_cast<uint128_t>(bytes_[pos_ + i]) << (8 * i);
      }
      const std::uint8_t top = bytes_[pos_ + n - 1];
      pos_ += n;
      if (n == 4 ? v < (1U << 30) : top == 0) {
        fail_at(chain_errc::invalid_compact, field,
                "non-canonical (big-integer mode of " + std::to_string(n) + " bytes)", at);
      }
      return v;
    }
  }
}

std::uint64_t scale_reader::compact_wide(std::string_view field) {
  const std::size_t at = pos_;
  const uint128_t v = compact_u128(field);
  if (v > std::numeric_limits<std::uint64_t>::max()) {
    fail_at(chain_errc::invalid_compact, field, "value exceeds u64", at);
  }
  return static_cast<std::uint64_t>(v);
}

std::uint16_t scale_reader::compact_u16(std::string_view field) {
  const std::size_t at = pos_;
  const std::uint64_t v = compact(field);
  if (v > std::numeric_limits<std::uint16_t>::max()) {
    fail_at(chain_errc::invalid_compact, field, "value " + std::to_string(v) + " exceeds u16", at);
  }
  return static_cast<std::uint16_t>(v);
}

std::uint32_t scale_reader::compact_u32(std::string_view field) {
  const std::size_t at = pos_;
  const std::uint64_t v = compact(field);
  if (v > std::numeric_limits<std::uint32_t>::max()) {
    fail_at(chain_errc::invalid_compact, field, "value " + std::to_string(v) + " exceeds u32", at);
  }
  return static_cast<std::uint32_t>(v);
}

std::size_t scale_reader::length(std::string_view field, std::size_t max_count) {
  const std::size_t at = pos_;
  const std::uint64_t n = compact(field);
  if (n > max_count) {
    fail_at(chain_errc::too_long, field,
            "length " + std::to_string(n) + " exceeds the limit of " + std::to_string(max_count),
            at);
  }
  if (n > remaining()) {
    fail_at(chain_errc::too_long, field,
            "length " + std::to_string(n) + " exceeds the " + std::to_string(remaining()) +
                " bytes left",
            at);
  }
  return static_cast<std::size_t>(n);
}

std::array<std::uint8_t, 32> scale_reader::account_id(std::string_view field) {
  need(32, field);
  std::array<std::uint8_t, 32> out{};
  for (std::size_t i = 0; i < 32; ++i) out[i] = bytes_[pos_ + i];
  pos_ += 32;
  return out;
}

std::string scale_reader::text(std::string_view field) {
  const std::size_t n = length(field);
  const auto b = bytes(n, field);
  return std::string(b.begin(), b.end());
}

void scale_reader::expect_end(std::string_view what) {
  if (!at_end()) {
    fail_at(chain_errc::trailing_bytes, what, std::to_string(remaining()) + " bytes left over",
            pos_);
  }
}

}  // namespace bt
