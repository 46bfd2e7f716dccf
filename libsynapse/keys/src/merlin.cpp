#include "merlin.hpp"

#include <sodium.h>

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
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

// External randomness for finalize(). libsodium's default generator costs one getrandom() system
// call per randombytes_buf call, a visible share of an sr25519 signature on its own; so each
// thread draws 1 KiB at a time and hands out 32 bytes per finalize(), wiping what it hands out.
// A fork() discards every buffer (the child must not replay the parent's bytes). Replayed bytes
// would not leak a key anyway: the witness RNG also binds the secret nonce and the transcript,
// which is why Merlin can use the external randomness as defence in depth.
std::atomic<unsigned> fork_generation{0};

void on_fork_child() noexcept {
  fork_generation.fetch_add(1, std::memory_order_relaxed);
}

struct random_pool {
  static constexpr std::size_t draw = 32;
  std::array<std::uint8_t, 1024> bytes{};
  std::size_t next = bytes.size();
  unsigned generation = 0;

  ~random_pool() { sodium_memzero(bytes.data(), bytes.size()); }

  void take(std::array<std::uint8_t, draw>& out) noexcept {
    static const bool registered = pthread_atfork(nullptr, nullptr, on_fork_child) == 0;
    const unsigned g = fork_generation.load(std::memory_order_relaxed);
    if (!registered || next == bytes.size() || g != generation) {
      randombytes_buf(bytes.data(), bytes.size());
      next = 0;
      generation = g;
    }
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(next), draw, out.begin());
    sodium_memzero(bytes.data() + next, draw);
    next += draw;
  }
};

}  // namespace

transcript::transcript(std::string_view label) noexcept : strobe_(as_bytes(merlin_protocol_label)) {
  append_message("dom-sep", as_bytes(label));
}

void transcript::append_message(std::string_view label,
                                std::span<const std::uint8_t> message) noexcept {
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

transcript_rng_builder transcript::build_rng() const noexcept {
  return transcript_rng_builder(strobe_);
}

transcript_rng_builder& transcript_rng_builder::rekey_with_witness_bytes(
    std::string_view label, std::span<const std::uint8_t> witness) noexcept {
  strobe_.meta_ad(as_bytes(label), false);
  strobe_.meta_ad(le32(witness.size()), true);
  strobe_.key(witness, false);
  return *this;
}

transcript_rng transcript_rng_builder::finalize() noexcept {
  thread_local random_pool pool;
  std::array<std::uint8_t, 32> random;
  pool.take(random);
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
