// memory_nonce_store: see the contract in bt/nonce_store.hpp.
//
// Layout. Each record is keyed by a 128-bit keyed hash of the endpoint (hotkey, uuid; plus the
// nonce under the unique rule), never by the strings themselves, so its size is fixed whatever
// the caller sends. The hash keys are random per store, so callers can neither aim at a shard or
// a bucket nor predict collisions. A hotkey's records all live in the shard picked by the keyed
// hash of the hotkey, so the per-hotkey counts are kept under that shard's lock. The global cap
// is one atomic counter over all shards.
#include <bt/keypair.hpp>
#include <bt/nonce_store.hpp>

#include <sodium.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace bt {

namespace {

constexpr std::int64_t no_floor = std::numeric_limits<std::int64_t>::min();

// Sweeping is O(records); when sweeping cannot free room (a shard at a hotkey's quota, or the
// store at its global cap, all live) it is retried at most this often, so a flood cannot turn
// every refused insert into a full scan.
constexpr std::int64_t full_sweep_interval_ns = 100'000'000;
constexpr std::size_t min_sweep_threshold = 256;

// Uuids and hotkeys up to this many bytes are hashed as they are, longer ones are hashed first
// (so the endpoint hash reads a bounded buffer on the stack). Honest ones are 36 and 48 bytes.
constexpr std::size_t max_inline_uuid = 128;

struct key128 {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  bool operator==(const key128&) const = default;
};

struct key128_hash {
  // The key is already a keyed hash: its bits are uniformly distributed and secret.
  std::size_t operator()(const key128& k) const noexcept { return static_cast<std::size_t>(k.lo); }
};

key128 siphash128(const unsigned char* key, const void* data, std::size_t n) noexcept {
  static_assert(crypto_shorthash_siphashx24_BYTES == 16);
  unsigned char out[16];
  crypto_shorthash_siphashx24(out, static_cast<const unsigned char*>(data), n, key);
  key128 k;
  std::memcpy(&k.lo, out, 8);
  std::memcpy(&k.hi, out + 8, 8);
  return k;
}

// What one hotkey holds: records, and billed nonce slots (see billed_slots).
struct hotkey_use {
  std::size_t records = 0;
  std::size_t slots = 0;
};

// Every window's first `free_slots` nonces are part of the record's fixed cost (bounded by
// max_entries), so a new endpoint never needs the slot budget; growth beyond is billed.
constexpr std::size_t free_slots = 2;
std::size_t billed_slots(std::size_t capacity) noexcept {
  return capacity > free_slots ? capacity - free_slots : 0;
}

struct record_entry {
  std::int64_t expires_at;
  /// strictly_increasing: the last accepted nonce. window: the largest nonce evicted from `kept`
  /// (every accepted nonce not in `kept` is at or below it); no_floor when none was evicted.
  std::int64_t floor;
  std::uint64_t hotkey_id;  // the key of `use` in its shard's per_hotkey
  /// The hotkey's counts (a node of the shard's per_hotkey map: stable while any record of the
  /// hotkey exists).
  hotkey_use* use;
  /// window: the most recent accepted nonces, ascending, are kept[head..]. Evicting the smallest
  /// advances `head`; the evicted prefix is compacted away once it reaches window / 4, so the
  /// usual case (a new highest nonce) costs an append and an amortised O(1) eviction instead of
  /// moving the whole window.
  std::vector<std::int64_t> kept{};
  std::uint32_t head = 0;
};

}  // namespace

struct memory_nonce_store::global_state {
  std::atomic<std::size_t> total{0};
  std::atomic<std::size_t> slots{0};  // nonce slots allocated by every window, all shards
  std::atomic<std::int64_t> last_sweep_all{no_floor};
  unsigned char hotkey_key[crypto_shorthash_siphashx24_KEYBYTES];
  unsigned char endpoint_key[crypto_shorthash_siphashx24_KEYBYTES];
};

struct memory_nonce_store::shard {
  mutable std::mutex m;
  std::unordered_map<key128, record_entry, key128_hash> map;
  std::unordered_map<std::uint64_t, hotkey_use> per_hotkey;  // what each hotkey id holds
  std::size_t sweep_at = min_sweep_threshold;  // sweep when an insert finds this many records
  std::int64_t last_quota_sweep = no_floor;

  /// Drops `it` and gives back what it held (its record and its nonce slots).
  void erase(std::unordered_map<key128, record_entry, key128_hash>::iterator it,
             global_state& g) noexcept {
    const std::size_t billed = billed_slots(it->second.kept.capacity());
    hotkey_use& u = *it->second.use;
    u.slots -= std::min(u.slots, billed);
    if (--u.records == 0) per_hotkey.erase(it->second.hotkey_id);
    g.slots.fetch_sub(billed, std::memory_order_relaxed);
    g.total.fetch_sub(1, std::memory_order_relaxed);
    map.erase(it);
  }

  void sweep(std::int64_t now_ns, global_state& g) noexcept {
    for (auto it = map.begin(); it != map.end();) {
      auto next = std::next(it);
      if (it->second.expires_at < now_ns) erase(it, g);
      it = next;
    }
    sweep_at = std::max(min_sweep_threshold, 2 * map.size());
  }
};

memory_nonce_store::memory_nonce_store() : memory_nonce_store(options{}) {}

memory_nonce_store::memory_nonce_store(options opts) : opts_(opts) {
  opts_.window = std::max<std::size_t>(opts_.window, 1);
  opts_.max_entries = std::max<std::size_t>(opts_.max_entries, 1);
  std::size_t n = 1;
  while (n < std::max<std::size_t>(opts_.shards, 1)) n <<= 1;
  shard_mask_ = n - 1;
  shards_ = std::make_unique<shard[]>(n);
  g_ = std::make_unique<global_state>();
  init_crypto();  // randombytes_buf wants sodium_init() first
  randombytes_buf(g_->hotkey_key, sizeof g_->hotkey_key);
  randombytes_buf(g_->endpoint_key, sizeof g_->endpoint_key);
}

memory_nonce_store::~memory_nonce_store() = default;

namespace {

// Where a window may take nonce slots from: the store's budget and its hotkey's.
struct slot_budget {
  std::atomic<std::size_t>& global;
  std::size_t global_max;
  std::size_t& hotkey;
  std::size_t hotkey_max;  // 0: no per-hotkey limit

  /// Takes `n` slots if both budgets allow it.
  bool take(std::size_t n) noexcept {
    if (hotkey_max != 0 && hotkey + n > hotkey_max) return false;
    if (global.fetch_add(n, std::memory_order_relaxed) + n > global_max) {
      global.fetch_sub(n, std::memory_order_relaxed);
      return false;
    }
    hotkey += n;
    return true;
  }
  void give_back(std::size_t n) noexcept {
    global.fetch_sub(n, std::memory_order_relaxed);
    hotkey -= std::min(hotkey, n);
  }
};

// Applies the rule to an existing record, or to a new one (`is_new`: empty, just created).
// Throws only std::bad_alloc (with the accounting left consistent).
nonce_verdict judge(record_entry& e, bool is_new, nonce_rule rule, std::size_t window,
                    slot_budget budget, std::int64_t nonce, std::int64_t now_ns,
                    std::int64_t expires_at_ns) {
  if (!is_new && e.expires_at < now_ns) {  // forgotten: freshness now protects what it guarded
    e.floor = no_floor;
    e.kept.clear();
    e.head = 0;
    e.expires_at = expires_at_ns;
  } else if (!is_new && rule == nonce_rule::unique) {
    return nonce_verdict::replayed;
  }
  if (rule == nonce_rule::unique) return nonce_verdict::accepted;
  if (rule == nonce_rule::strictly_increasing) {
    if (e.floor != no_floor && nonce <= e.floor) return nonce_verdict::stale;
    e.floor = nonce;
  } else {  // window
    if (e.floor != no_floor && nonce <= e.floor) return nonce_verdict::stale;
    const auto first = e.kept.begin() + e.head;
    const auto pos = std::lower_bound(first, e.kept.end(), nonce);
    if (pos != e.kept.end() && *pos == nonce) return nonce_verdict::replayed;
    // Grow to at most window + slack elements, never by the vector's doubling beyond that, so
    // the worst case per endpoint is exactly (window + slack) * 8 bytes; and only as far as the
    // slot budgets allow. Past them the window stops growing: the smallest kept nonce is evicted
    // to make room (raising the floor), which may refuse this endpoint's reordered requests but
    // never admits a replay.
    const std::size_t slack = std::max<std::size_t>(window / 4, 1);
    std::size_t at = static_cast<std::size_t>(pos - e.kept.begin());
    if (e.kept.size() == e.kept.capacity() && e.head > 0) {  // compact first: no growth needed
      e.kept.erase(e.kept.begin(), e.kept.begin() + e.head);
      at -= e.head;
      e.head = 0;
    }
    if (e.kept.size() == e.kept.capacity()) {
      const std::size_t cap = e.kept.capacity();
      const std::size_t want = std::min(std::max<std::size_t>(2 * cap, free_slots), window + slack);
      const std::size_t bill = billed_slots(want) - billed_slots(cap);
      if (want > cap && (bill == 0 || budget.take(bill))) {
        try {
          e.kept.reserve(want);
        } catch (...) {
          if (bill != 0) budget.give_back(bill);
          throw;
        }
      } else if (e.kept.empty()) {  // no slot at all: nothing to evict, refuse
        return nonce_verdict::full;
      } else if (at == 0) {  // below every kept nonce: accepted, and at once the new floor
        e.floor = nonce;
        e.expires_at = std::max(e.expires_at, expires_at_ns);
        return nonce_verdict::accepted;
      } else {  // evict the smallest to make room
        e.floor = e.kept.front();
        e.kept.erase(e.kept.begin());
        --at;
      }
    }
    e.kept.insert(e.kept.begin() + static_cast<std::ptrdiff_t>(at), nonce);
    if (e.kept.size() - e.head > window) {  // evict the smallest: it becomes the floor
      e.floor = e.kept[e.head++];
      if (e.head >= slack) {
        e.kept.erase(e.kept.begin(), e.kept.begin() + e.head);
        e.head = 0;
      }
    }
  }
  e.expires_at = std::max(e.expires_at, expires_at_ns);
  return nonce_verdict::accepted;
}

}  // namespace

nonce_verdict memory_nonce_store::record(std::string_view hotkey, std::string_view uuid,
                                         std::int64_t nonce, std::int64_t now_ns,
                                         std::int64_t expires_at_ns) noexcept {
  // ---- keys: fixed size, whatever the strings ----
  const key128 hk = siphash128(g_->hotkey_key, hotkey.data(), hotkey.size());
  // Endpoint hash input: tag, hotkey hash, uuid (or its hash if long), nonce under unique. The
  // tag says which form the uuid takes, so the two forms never share an input.
  std::array<unsigned char, 1 + 16 + max_inline_uuid + 8> buf;
  std::size_t n = 0;
  const bool long_uuid = uuid.size() > max_inline_uuid;
  buf[n++] = long_uuid ? 1 : 0;
  std::memcpy(buf.data() + n, &hk, 16);
  n += 16;
  if (long_uuid) {
    const key128 uh = siphash128(g_->endpoint_key, uuid.data(), uuid.size());
    std::memcpy(buf.data() + n, &uh, 16);
    n += 16;
  } else {
    std::memcpy(buf.data() + n, uuid.data(), uuid.size());
    n += uuid.size();
  }
  if (opts_.rule == nonce_rule::unique) {
    std::memcpy(buf.data() + n, &nonce, 8);
    n += 8;
  }
  const key128 ep = siphash128(g_->endpoint_key, buf.data(), n);
  const std::uint64_t hotkey_id = hk.lo;
  shard& s = shards_[static_cast<std::size_t>(hk.hi) & shard_mask_];

  const auto budget_of = [this](std::size_t& hotkey_slots) {
    return slot_budget{g_->slots, opts_.max_kept_nonces, hotkey_slots,
                       opts_.max_kept_nonces_per_hotkey};
  };
  try {
    for (int attempt = 0; attempt < 2; ++attempt) {
      {
        std::lock_guard lk(s.m);
        if (auto it = s.map.find(ep); it != s.map.end())
          return judge(it->second, false, opts_.rule, opts_.window,
                       budget_of(it->second.use->slots), nonce, now_ns, expires_at_ns);

        // A new record. Amortised sweep: when the shard has doubled since the last one.
        if (s.map.size() >= s.sweep_at) s.sweep(now_ns, *g_);
        if (opts_.max_entries_per_hotkey != 0) {
          auto c = s.per_hotkey.find(hotkey_id);
          if (c != s.per_hotkey.end() && c->second.records >= opts_.max_entries_per_hotkey) {
            if (s.last_quota_sweep != no_floor &&
                now_ns - s.last_quota_sweep < full_sweep_interval_ns)
              return nonce_verdict::full;
            s.last_quota_sweep = now_ns;
            s.sweep(now_ns, *g_);
            c = s.per_hotkey.find(hotkey_id);
            if (c != s.per_hotkey.end() && c->second.records >= opts_.max_entries_per_hotkey)
              return nonce_verdict::full;
          }
        }
        // Reserve a place under the global cap. From here the record and its hotkey's count
        // exist together or neither does; erase() gives everything back.
        if (g_->total.fetch_add(1, std::memory_order_relaxed) < opts_.max_entries) {
          hotkey_use* use = nullptr;
          try {
            use = &s.per_hotkey[hotkey_id];
          } catch (...) {
            g_->total.fetch_sub(1, std::memory_order_relaxed);
            throw;
          }
          ++use->records;
          decltype(s.map)::iterator it;
          try {
            it = s.map.emplace(ep, record_entry{expires_at_ns, no_floor, hotkey_id, use}).first;
          } catch (...) {
            if (--use->records == 0) s.per_hotkey.erase(hotkey_id);
            g_->total.fetch_sub(1, std::memory_order_relaxed);
            throw;
          }
          nonce_verdict v = nonce_verdict::full;
          try {
            v = judge(it->second, true, opts_.rule, opts_.window, budget_of(use->slots), nonce,
                      now_ns, expires_at_ns);
          } catch (...) {
            v = nonce_verdict::full;
          }
          // A new record whose nonce found no room is dropped again.
          if (v != nonce_verdict::accepted) s.erase(it, *g_);
          return v;
        }
        g_->total.fetch_sub(1, std::memory_order_relaxed);
      }
      // At the global cap: sweep every shard (none locked here), then try once more.
      if (attempt == 0) sweep_all(now_ns);
    }
  } catch (...) {  // allocation failure: refuse rather than forget
    return nonce_verdict::full;
  }
  return nonce_verdict::full;
}

void memory_nonce_store::sweep_all(std::int64_t now_ns) noexcept {
  std::int64_t last = g_->last_sweep_all.load(std::memory_order_relaxed);
  if (last != no_floor && now_ns - last < full_sweep_interval_ns) return;
  if (!g_->last_sweep_all.compare_exchange_strong(last, now_ns, std::memory_order_relaxed))
    return;  // another thread sweeps
  for (std::size_t i = 0; i <= shard_mask_; ++i) {
    std::lock_guard lk(shards_[i].m);
    shards_[i].sweep(now_ns, *g_);
  }
}

std::size_t memory_nonce_store::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i <= shard_mask_; ++i) {
    std::lock_guard lk(shards_[i].m);
    n += shards_[i].map.size();
  }
  return n;
}

}  // namespace bt
