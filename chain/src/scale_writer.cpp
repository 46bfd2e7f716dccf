// SCALE compact integers (the only part of the writer that is not a one-liner).
#include <bt/chain/scale_writer.hpp>

namespace bt {

void scale_writer::compact_u128(uint128_t v) {
  if (v < (1u << 6)) {
    out_.push_back(static_cast<std::uint8_t>(v << 2));
  } else if (v < (1u << 14)) {
    fixed(static_cast<std::uint16_t>((v << 2) | 0b01), 2);
  } else if (v < (1u << 30)) {
    fixed(static_cast<std::uint32_t>((v << 2) | 0b10), 4);
  } else {
    // Big-integer mode: the fewest bytes that hold v (at least 4, as the three small modes
    // cover everything below 2^30), announced by ((bytes - 4) << 2) | 0b11.
    int n = 4;
    while (n < 16 && (v >> (8 * n)) != 0) ++n;
    out_.push_back(static_cast<std::uint8_t>(((n - 4) << 2) | 0b11));
    fixed(v, n);
  }
}

}  // namespace bt
