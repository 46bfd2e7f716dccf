// bt::nonce_store: the axon's memory of accepted nonces, behind an interface so that another
// store (shared between processes, persistent across restarts) can be plugged in later.
//
// The axon checks freshness itself, statelessly, on every request (PROTOCOL D2/D3):
//   now - 4 s - min(timeout, cap) < nonce <= now + skew
// and asks the store only for what needs memory: has this caller endpoint (hotkey, uuid) already
// used this nonce (or a newer one)? Records are kept until `expires_at_ns`, after which the
// freshness check alone rejects every nonce the record protected, so a store may forget them.
// That bound is what keeps the memory finite, unlike Python's never-pruned dict.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace bt {

/// What a store decides for one verified request.
enum class nonce_verdict {
  accepted,  ///< recorded; the request may proceed
  stale,     ///< strictly_increasing: not newer than the endpoint's last nonce -> 401
  replayed,  ///< unique: this exact nonce was already used by the endpoint -> 401
  full,      ///< the store is at capacity with unexpired records -> 503, retry later
};

class nonce_store {
 public:
  virtual ~nonce_store() = default;

  /// Records `nonce` for the endpoint key "{hotkey}:{uuid}" if the store's rule admits it.
  /// `now_ns` is the current wall-clock time (ns since the Unix epoch) and `expires_at_ns` the time
  /// after which no request carrying this nonce (or an older one) can pass the freshness check.
  /// Thread safety: called concurrently from every I/O thread; implementations synchronise.
  /// Never throws.
  virtual nonce_verdict record(std::string_view hotkey, std::string_view uuid, std::int64_t nonce,
                               std::int64_t now_ns, std::int64_t expires_at_ns) noexcept = 0;
};

/// How the in-memory store compares nonces of one endpoint.
enum class nonce_rule {
  /// Python >= 7.2 (PROTOCOL 5.5): each nonce must be greater than the endpoint's last accepted
  /// one. Byte-compatible, but rejects a validator's concurrent requests that arrive out of order
  /// ("Nonce is too old, a newer one was last processed").
  strictly_increasing,
  /// PROTOCOL D3's alternative: each (hotkey, uuid, nonce) is accepted once within the window,
  /// in any order. Prevents replays and tolerates reordering; costs one record per request.
  unique,
};

/// Bounded, sharded in-memory store. Expired records are swept lazily (on insert, amortised).
class memory_nonce_store final : public nonce_store {
 public:
  struct options {
    /// Maximum records kept. When full of unexpired records, new endpoints get `full` (503)
    /// rather than evicting someone's replay protection. Honest traffic needs one record per
    /// validator process (strictly_increasing) or per request in the window (unique); a record
    /// costs about 150 bytes, so the default bounds the store near 15 MB.
    std::size_t max_entries = 100'000;
    nonce_rule rule = nonce_rule::strictly_increasing;
    /// Independent locks, so that I/O threads rarely contend. Rounded up to a power of two.
    std::size_t shards = 16;
  };

  explicit memory_nonce_store(options opts);
  memory_nonce_store();
  ~memory_nonce_store() override;
  memory_nonce_store(const memory_nonce_store&) = delete;
  memory_nonce_store& operator=(const memory_nonce_store&) = delete;

  nonce_verdict record(std::string_view hotkey, std::string_view uuid, std::int64_t nonce,
                       std::int64_t now_ns, std::int64_t expires_at_ns) noexcept override;

  /// Records currently held (expired ones included until swept). Takes every shard's lock.
  std::size_t size() const;

 private:
  struct shard;
  options opts_;
  std::size_t shard_mask_ = 0;
  std::size_t per_shard_capacity_ = 0;
  std::unique_ptr<shard[]> shards_;
};

}  // namespace bt
