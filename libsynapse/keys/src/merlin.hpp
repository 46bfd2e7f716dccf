// Merlin transcripts (merlin 3.0, "Merlin v1.0" protocol label) over STROBE-128: the
// Fiat-Shamir transcripts and witness RNG that schnorrkel (sr25519.hpp) signs and derives with.
//
// Labels are byte strings (std::string_view, not NUL-terminated); messages are length-prefixed
// with a 32-bit little-endian length, so a message must be shorter than 4 GiB (asserted).
//
// Thread safety: none; a transcript is a value, copy it to fork it.
#pragma once

#include "strobe.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace bt::detail {

class transcript_rng;
class transcript_rng_builder;

class transcript {
 public:
  /// Transcript::new(label): STROBE-128("Merlin v1.0") then append_message("dom-sep", label).
  explicit transcript(std::string_view label) noexcept;

  /// meta-AD(label || LE32(len)); AD(message).
  void append_message(std::string_view label, std::span<const std::uint8_t> message) noexcept;
  void append_message(std::string_view label, std::string_view message) noexcept;
  /// meta-AD(label || LE32(len)); PRF into `out`.
  void challenge_bytes(std::string_view label, std::span<std::uint8_t> out) noexcept;
  /// Forks the transcript into a witness RNG builder (the transcript itself is unchanged).
  transcript_rng_builder build_rng() const noexcept;

 private:
  friend class transcript_rng_builder;
  strobe128 strobe_;
};

/// Rekeys a fork of a transcript with prover secrets, then with external randomness.
class transcript_rng_builder {
 public:
  /// meta-AD(label || LE32(len)); KEY(witness).
  transcript_rng_builder& rekey_with_witness_bytes(std::string_view label,
                                                   std::span<const std::uint8_t> witness) noexcept;
  /// meta-AD("rng"); KEY(random); randomness is 32 bytes from libsodium's randombytes_buf,
  /// drawn 1 KiB at a time per thread and discarded on fork() (libsodium must be initialised:
  /// bt::init_crypto()).
  transcript_rng finalize() noexcept;
  /// The same with caller-supplied randomness (deterministic tests only).
  transcript_rng finalize(std::span<const std::uint8_t, 32> random) noexcept;

 private:
  friend class transcript;
  explicit transcript_rng_builder(const strobe128& s) noexcept : strobe_(s) {}
  strobe128 strobe_;
};

class transcript_rng {
 public:
  /// meta-AD(LE32(len)); PRF into `out`.
  void fill_bytes(std::span<std::uint8_t> out) noexcept;

 private:
  friend class transcript_rng_builder;
  explicit transcript_rng(const strobe128& s) noexcept : strobe_(s) {}
  strobe128 strobe_;
};

}  // namespace bt::detail
