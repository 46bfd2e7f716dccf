#include <bt/detail/merlin.hpp>

#include <sodium.h>

#include <array>
#include <cassert>
#include <cstddef>
#include <limits>

namespace bt::detail {
namespace {

std::span<const std::uint8_t> as_bytes(std::string_view s) noexcept {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::array<std::uint8_t, 4> le32(std::size_t n) noexcept {
  assert(n <= std::numeric_limits<std::uint32_t>::max());
  return {static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8),
          static_cast<std::uint8_t>(n >> 16), static_cast<std::uint8_t>(n >> 24)};
}

constexpr std::string_view merlin_protocol_label = "Merlin v1.0";

}  // namespace

transcript::transcript(std::string_view label) noexcept : strobe_(as_bytes(merlin_protocol_label)) {
  append_message("dom-sep", as_bytes(label));
}

void transcript::append_message(std::string_view label, std::span<const std::uint8_t> message) noexcept {
  strobe_.meta_ad(as_bytes(label), false);
  strobe_.meta_ad(le32(message.size()), true);
  strobe_.ad(message, false);
}

void transcript::append_message(std::string_view label, std::string_view message) noexcept {
  append_message(label, as_bytes(message));
}

void transcript::challenge_bytes(std::string_view label, std::span<std::uint8_t> out) noexcept {
  strobe_.meta_ad(as_bytes(label), false);
  strobe_.meta_ad(le32(out.size()), true);
  strobe_.prf(out, false);
}

transcript_rng_builder transcript::build_rng() const noexcept { return transcript_rng_builder(strobe_); }

transcript_rng_builder& transcript_rng_builder::rekey_with_witness_bytes(
    std::string_view label, std::span<const std::uint8_t> witness) noexcept {
  strobe_.meta_ad(as_bytes(label), false);
  strobe_.meta_ad(le32(witness.size()), true);
  strobe_.key(witness, false);
  return *this;
}

transcript_rng transcript_rng_builder::finalize() noexcept {
  std::array<std::uint8_t, 32> random;
  randombytes_buf(random.data(), random.size());
  transcript_rng rng = finalize(random);
  sodium_memzero(random.data(), random.size());
  return rng;
}

transcript_rng transcript_rng_builder::finalize(std::span<const std::uint8_t, 32> random) noexcept {
  strobe_.meta_ad(as_bytes("rng"), false);
  strobe_.key(random, false);
  return transcript_rng(strobe_);
}

void transcript_rng::fill_bytes(std::span<std::uint8_t> out) noexcept {
  strobe_.meta_ad(le32(out.size()), false);
  strobe_.prf(out, false);
}

}  // namespace bt::detail
