// STROBE-128 (STROBE v1.0.2 at the 128-bit security level) over Keccak-f[1600], restricted to the
// four operations Merlin transcripts use: meta-AD, AD, PRF and KEY. It is not a general STROBE:
// no transport (T) flag, no streaming ciphers, no MACs.
//
// Byte-exact with merlin 3.0's `strobe.rs`, which the sr25519 transcripts (merlin.hpp) sit on.
#pragma once

#include <cstdint>
#include <span>

namespace bt::detail {

class strobe128 {
 public:
  /// Initialises the sponge (STROBE-v1.0.2 domain, R = 166) and absorbs `protocol_label` as
  /// meta-AD.
  explicit strobe128(std::span<const std::uint8_t> protocol_label) noexcept;
  strobe128(const strobe128&) = default;
  strobe128& operator=(const strobe128&) = default;
  /// The state is key material once KEY has run (witness RNGs), so it is wiped.
  ~strobe128();

  /// `more` continues the previous operation, which must have the same flags (checked by
  /// assert; Merlin only ever continues a meta-AD with its length prefix).
  void meta_ad(std::span<const std::uint8_t> data, bool more) noexcept;
  void ad(std::span<const std::uint8_t> data, bool more) noexcept;
  void prf(std::span<std::uint8_t> out, bool more) noexcept;
  void key(std::span<const std::uint8_t> data, bool more) noexcept;

 private:
  void begin_op(std::uint8_t flags, bool more) noexcept;
  void absorb(std::span<const std::uint8_t> data) noexcept;
  void overwrite(std::span<const std::uint8_t> data) noexcept;
  void squeeze(std::span<std::uint8_t> out) noexcept;
  void run_f() noexcept;
  std::uint8_t* bytes() noexcept { return reinterpret_cast<std::uint8_t*>(state_); }

  std::uint64_t state_[25]{};  // 200 bytes; byte i is byte i%8 (little-endian) of lane i/8
  std::uint8_t pos_ = 0;
  std::uint8_t pos_begin_ = 0;
  std::uint8_t cur_flags_ = 0;
};

}  // namespace bt::detail
