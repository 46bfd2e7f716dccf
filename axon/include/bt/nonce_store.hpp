// bt::nonce_store: the axon's memory of accepted nonces, behind an interface so that another
// store (shared between processes, persistent across restarts) can be plugged in later.
//
// The axon checks freshness itself, statelessly, on every request (PROTOCOL D2/D3):
//   now - 4 s - min(timeout, cap) < nonce <= now + skew
// and asks the store only for what needs memory: has this caller endpoint (hotkey, uuid) already
// used this nonce (or, depending on the rule, a newer one)? Records are kept until
// `expires_at_ns`, after which the freshness check alone rejects every nonce the record protected,
// so a store may forget them. That bound is what keeps the memory finite, unlike Python's
// never-pruned dict.
//
// The hotkey and uuid come from the request's headers. The verifier checks their form, but the
// store defends itself: memory_nonce_store keeps neither string, only a keyed hash of fixed size
// (SipHash with a random key per store), so a record costs the same whatever the caller sends and
// nobody can choose which shard or bucket a record lands in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace boost::asio {
class io_context;
}

namespace bt {

/// What a store decides for one verified request.
enum class nonce_verdict {
  accepted,  ///< recorded; the request may proceed
  stale,     ///< older than what the endpoint's rule still admits (strictly_increasing: not newer
             ///< than the last nonce; window: at or below the window's floor) -> 401
  replayed,  ///< this exact nonce was already accepted for the endpoint (unique, window) -> 401
  full,      ///< no room for a new record: the store's global cap or the hotkey's quota is
             ///< reached with unexpired records -> 503, retry later
  unavailable,  ///< the store could not answer (a networked store unreachable or past its
                ///< timeout): nothing was recorded, so the request is refused -> 503 with
                ///< Retry-After (fail closed, never accepted unrecorded)
};

/// How nonce_store::async_record reports its verdict: a plain function and its argument, called
/// exactly once (on any thread, possibly before async_record returns). Two pointers rather than
/// a std::function, so that the in-memory path allocates nothing. On the thread of the waiting
/// connection's event loop the call may resume that connection before it returns, and the
/// connection may then call async_record again: a store must not complete a request while it
/// is iterating state that a new request changes.
struct nonce_completion {
  void (*fn)(void* arg, nonce_verdict v) noexcept = nullptr;
  void* arg = nullptr;
  void operator()(nonce_verdict v) const noexcept { fn(arg, v); }
};

class nonce_store {
 public:
  virtual ~nonce_store() = default;

  /// True when record() answers at once without I/O (the in-memory store): the axon then calls
  /// record() inline on its I/O thread, with no suspension and no allocation. A store that needs
  /// I/O (redis_nonce_store) returns false: the axon calls async_record() and suspends the
  /// connection's coroutine until the completion, so no I/O thread ever blocks on the store.
  virtual bool answers_inline() const noexcept { return true; }

  /// Asynchronous record(): the same decision, reported through `done` (exactly once). The
  /// strings need to live only during this call. A store that cannot answer (unreachable, past
  /// its timeout, shutting down) completes with `unavailable` and has recorded nothing that the
  /// caller could rely on: the request is refused. Default: record(), completed inline.
  virtual void async_record(std::string_view hotkey, std::string_view uuid, std::int64_t nonce,
                            std::int64_t now_ns, std::int64_t expires_at_ns,
                            nonce_completion done) noexcept {
    done(record(hotkey, uuid, nonce, now_ns, expires_at_ns));
  }

  /// Records `nonce` for the endpoint (hotkey, uuid) if the store's rule admits it.
  /// `now_ns` is the current wall-clock time (ns since the Unix epoch) and `expires_at_ns` the time
  /// after which no request carrying this nonce (or an older one) can pass the freshness check.
  /// Thread safety: called concurrently from every I/O thread; implementations synchronise.
  /// Never throws. A store whose answers_inline() is false may block here until it has the
  /// answer (at most its timeout): the axon never calls record() on such a store.
  virtual nonce_verdict record(std::string_view hotkey, std::string_view uuid, std::int64_t nonce,
                               std::int64_t now_ns, std::int64_t expires_at_ns) noexcept = 0;

  /// The event loops a store that does I/O runs on (it has no thread of its own). bt::axon calls
  /// attach() with its I/O threads' io_contexts in start(), before they run, and detach() with
  /// the same loops in stop(), while they still run (after the last request, before the threads
  /// return). A program using a store without an axon attaches it to loops it runs itself. A
  /// store may be attached to several sets of loops at once (two axons sharing it); detach()
  /// ends the store's use of exactly the loops given, without blocking: what it still had
  /// pending there completes on those loops. Default: nothing (the in-memory store needs none).
  virtual void attach(std::span<boost::asio::io_context* const> loops) { (void)loops; }
  virtual void detach(std::span<boost::asio::io_context* const> loops) noexcept { (void)loops; }

  /// Readiness: empty while the store answers, else a short human-readable reason (e.g. "redis
  /// unreachable: connection refused"), for a readiness probe. Never contains secrets. Callable
  /// from any thread; cheap (no I/O). The in-memory store is always ready.
  virtual std::string unavailable_reason() const { return {}; }
};

/// How the in-memory store compares nonces of one endpoint.
enum class nonce_rule {
  /// Python >= 7.2 (PROTOCOL 5.5): each nonce must be greater than the endpoint's last accepted
  /// one. Byte-compatible, but rejects a validator's concurrent requests that arrive out of order
  /// ("Nonce is too old, a newer one was last processed"). An exact replay is `stale` too.
  strictly_increasing,
  /// PROTOCOL D3's alternative: each (hotkey, uuid, nonce) is accepted once within the freshness
  /// window, in any order. Costs one record per request (each counts against the caps).
  unique,
  /// The default (PROTOCOL "Anti-replay window"): per endpoint, the most recent `window` accepted
  /// nonces are kept, sorted. A nonce is accepted if it is above the floor (the largest nonce ever
  /// evicted from the set, or none) and not in the set; when the set overflows its smallest nonce
  /// is evicted and becomes the floor. Every nonce ever accepted is thus either in the set
  /// (`replayed`) or at or below the floor (`stale`), so no replay passes, while up to `window`
  /// concurrent requests of one dendrite are accepted in whatever order the I/O threads see them.
  /// One record per endpoint, with at most about `window` * 1.25 * 8 bytes of nonces, taken from
  /// the store's nonce-slot budgets; past a budget the endpoint's window stops growing (its floor
  /// rises sooner: reordered requests may be refused, replays never pass).
  window,
};

/// Bounded, sharded in-memory store. Expired records are swept lazily (on insert, amortised).
///
/// Memory bound (documented in docs/axon.md): at most `max_entries` records of a fixed size
/// (about 130 bytes, whatever the hotkey and uuid strings are) plus at most `max_kept_nonces`
/// nonce slots of 8 bytes for the windows: about 13 MB + 8 MB with the defaults. One hotkey holds
/// at most `max_entries_per_hotkey` records and `max_kept_nonces_per_hotkey` slots, so a flood
/// from one key is refused (503) for that key only; many keys together can still reach the
/// global caps, after which new endpoints get 503 until records expire (known endpoints keep
/// working) and windows stop growing.
class memory_nonce_store final : public nonce_store {
 public:
  struct options {
    /// Maximum records kept, all shards together. When full of unexpired records, new endpoints
    /// get `full` (503) rather than evicting someone's replay protection. Honest traffic needs one
    /// record per validator process (strictly_increasing, window) or per request in the last
    /// minute (unique).
    std::size_t max_entries = 100'000;
    nonce_rule rule = nonce_rule::window;
    /// Independent locks, so that I/O threads rarely contend. Rounded up to a power of two.
    /// A hotkey's records all live in one shard, chosen by a keyed hash of the hotkey.
    std::size_t shards = 16;
    /// Records one hotkey may hold (0: no quota). An honest validator holds one per dendrite
    /// instance (uuid) seen in the last minute under strictly_increasing and window, so 1,024 is
    /// generous; under `unique` it is one per request, i.e. about 16 requests/s per hotkey.
    std::size_t max_entries_per_hotkey = 1'024;
    /// `window` rule: nonces kept per endpoint (at least 1), i.e. how many concurrent requests of
    /// one dendrite may be reordered between its send and our record(). 200 concurrent calls of
    /// one bt::dendrite on loopback were seen reordered by more than 64; Python's aiohttp client
    /// keeps at most 100 connections.
    std::size_t window = 256;
    /// Nonce slots (8 bytes each) all windows together may hold: bounds the windows' memory
    /// (8 MiB by default; an honest endpoint uses 2 to 320).
    std::size_t max_kept_nonces = 1 << 20;
    /// Nonce slots one hotkey's windows may hold (0: no limit): a few full windows.
    std::size_t max_kept_nonces_per_hotkey = 4 * 320;
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

  const options& config() const noexcept { return opts_; }

 private:
  struct shard;
  /// Sweeps every shard's expired records (each shard locked in turn, none held on entry); at
  /// most once per sweep interval, so a flood at the cap cannot make every insert a full scan.
  void sweep_all(std::int64_t now_ns) noexcept;

  options opts_;
  std::size_t shard_mask_ = 0;
  std::unique_ptr<shard[]> shards_;
  struct global_state;
  std::unique_ptr<global_state> g_;
};

}  // namespace bt
