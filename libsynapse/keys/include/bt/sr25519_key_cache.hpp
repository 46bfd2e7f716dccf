// sr25519 verification that remembers the public keys it has seen: a bounded, thread-safe cache
// of decoded keys (and, for keys seen again, a precomputed table of each), so that verifying a
// known key's next signature skips the key's decompression, and with the table the 253 doublings
// of the double-scalar multiplication too. For a verifier that sees the same few keys over and
// over: an axon and its validators (docs/performance.md "Batch verification in the axon").
//
// Verdicts are exactly those of sr25519::verify and sr25519::verify_each_with_batch: the cache
// only holds what a key's bytes determine (its decoded point and multiples of it), never a
// verdict, so a known key's next signature is checked in full like any other.
//
// Admission: a key enters only after a signature under it verified (a key that does not decode,
// or that has signed nothing valid, is never cached); its table is built when the key verifies
// again while cached. So a flood of fresh keys costs one decode each, as without the cache, and a
// table is built only for a key that has signed twice. Eviction: least recently used, beyond
// `capacity` keys. Memory: about 9.5 KiB per key with a table (libdecaf's precomputed table is
// 9 KiB), 0.4 KiB without.
//
// Hot keys: the `hot_keys` cached keys verified most (a count of lookups, halved every
// `hit_decay_period` lookups so that a key no longer used cools down) also get a 480 KiB table of
// their multiples (radix 256, affine points), which replaces the comb's constant-time product by
// 32 mixed additions.
// A key with a table becomes hot while fewer than `hot_keys` are; beyond that it displaces the
// coldest hot key only once it has been looked up more than twice as often (so keys of equal use
// do not trade places, each trade costing a table). A demoted key keeps its comb table. Memory
// of hot tables: at most hot_keys × 480 KiB = 3.75 MiB, plus those a verification in progress
// still holds.
//
// Thread safety: every member function may be called from many threads at once (one mutex,
// held for lookups and insertions only, never during group arithmetic). Expects libsodium to be
// initialised (bt::init_crypto(), keypair.hpp). None throws: without memory for an entry the
// cache verifies as sr25519::verify does and remembers nothing.
#pragma once

#include <bt/sr25519.hpp>
#include <bt/sr25519_batch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <system_error>
#include <unordered_map>

namespace bt::sr25519 {

class key_cache {
 public:
  /// Validators are few: a miner's axon sees a few dozen hotkeys, a subnet has at most 256.
  static constexpr std::size_t default_capacity = 256;
  /// Keys with the 480 KiB table at most (3.75 MiB): the few validators that sign most requests.
  static constexpr std::size_t hot_keys = 8;
  /// Lookups between two halvings of every key's count.
  static constexpr std::uint64_t hit_decay_period = 4096;

  /// `capacity` keys at most (0: remember nothing; verify() is then sr25519::verify).
  explicit key_cache(std::size_t capacity = default_capacity);
  ~key_cache();
  key_cache(const key_cache&) = delete;
  key_cache& operator=(const key_cache&) = delete;

  /// sr25519::verify(pub, message, signature, context), cheaper for a cached key.
  std::error_code verify(std::span<const std::uint8_t, 32> pub,
                         std::span<const std::uint8_t> message,
                         std::span<const std::uint8_t> signature,
                         std::string_view context = substrate_context) noexcept;

  /// sr25519::verify_each_with_batch(items, results, context) with the cached keys' points; the
  /// keys of items found valid are cached.
  void verify_each_with_batch(std::span<const batch_item> items, std::span<std::error_code> results,
                              std::string_view context = substrate_context) noexcept;

  /// Keys held now, and whether `pub` is one of them / has its table (for tests and metrics).
  std::size_t size() const;
  bool contains(std::span<const std::uint8_t, 32> pub) const;
  bool has_table(std::span<const std::uint8_t, 32> pub) const;
  bool is_hot(std::span<const std::uint8_t, 32> pub) const;
  std::size_t hot_count() const;
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  struct prepared_key;  // the decoded point and, once built, its table (sr25519_key_cache.cpp)
  using key_bytes = std::array<std::uint8_t, 32>;
  struct key_hash {
    std::size_t operator()(const key_bytes& k) const noexcept;
  };
  struct node {
    key_bytes key;
    std::shared_ptr<const prepared_key> prepared;
    std::uint64_t hits = 0;  // lookups, halved every hit_decay_period lookups of the cache
    bool promoting = false;  // a thread is building its hot table
  };
  using lru_list = std::list<node>;  // most recently used first

  /// The entry of `pub` (null if none), marked most recently used and counted. `promote` (if
  /// given) is set when the caller should build the key's hot table and offer it to promote().
  std::shared_ptr<const prepared_key> find(std::span<const std::uint8_t, 32> pub,
                                           bool* promote = nullptr);
  /// Whether the key of `n` (which has its comb table and is not hot) should become hot now.
  bool deserves_hot(const node& n) const;
  /// Installs `hot` (`pub`'s entry with its hot table), demoting the coldest hot key if needed.
  void promote(std::span<const std::uint8_t, 32> pub, std::shared_ptr<const prepared_key> hot);
  /// Enters (or replaces) `pub`'s entry after a signature under it verified.
  void remember(std::span<const std::uint8_t, 32> pub,
                std::shared_ptr<const prepared_key> prepared) noexcept;

  const std::size_t capacity_;
  mutable std::mutex m_;
  lru_list lru_;
  std::unordered_map<key_bytes, lru_list::iterator, key_hash> index_;
  std::size_t hot_count_ = 0;
  std::uint64_t lookups_ = 0;
};

}  // namespace bt::sr25519
