#include <bt/nonce_store.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace bt {

namespace {

struct key_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

struct record_entry {
  std::int64_t nonce;
  std::int64_t expires_at;
};

// Sweeping is O(shard size); when a shard is full of live records it is retried at most this
// often, so a flood of new endpoints cannot turn every insert into a full scan.
constexpr std::int64_t full_sweep_interval_ns = 100'000'000;
constexpr std::size_t min_sweep_threshold = 256;

}  // namespace

struct memory_nonce_store::shard {
  mutable std::mutex m;
  std::unordered_map<std::string, record_entry, key_hash, std::equal_to<>> map;
  std::size_t sweep_at = min_sweep_threshold;  // sweep when an insert finds this many records
  std::int64_t last_full_sweep = 0;

  void sweep(std::int64_t now_ns) {
    std::erase_if(map, [now_ns](const auto& kv) { return kv.second.expires_at < now_ns; });
  }
};

memory_nonce_store::memory_nonce_store() : memory_nonce_store(options{}) {}

memory_nonce_store::memory_nonce_store(options opts) : opts_(opts) {
  std::size_t n = 1;
  while (n < std::max<std::size_t>(opts_.shards, 1)) n <<= 1;
  shard_mask_ = n - 1;
  per_shard_capacity_ = std::max<std::size_t>(opts_.max_entries / n, 1);
  shards_ = std::make_unique<shard[]>(n);
  for (std::size_t i = 0; i < n; ++i)
    shards_[i].sweep_at = std::min(min_sweep_threshold, per_shard_capacity_);
}

memory_nonce_store::~memory_nonce_store() = default;

nonce_verdict memory_nonce_store::record(std::string_view hotkey, std::string_view uuid,
                                         std::int64_t nonce, std::int64_t now_ns,
                                         std::int64_t expires_at_ns) noexcept {
  // Key "{hotkey}:{uuid}" (strictly_increasing) or "{hotkey}:{uuid}:{nonce}" (unique), built on
  // the stack: honest keys are 48 + 1 + 36 (+ 1 + 19) bytes.
  std::array<char, 256> stack_key;
  std::string heap_key;
  std::string_view key;
  const std::size_t need = hotkey.size() + 1 + uuid.size() + 1 + 20;
  char* p;
  if (need <= stack_key.size()) {
    p = stack_key.data();
  } else {
    try {
      heap_key.resize(need);
    } catch (...) {
      return nonce_verdict::full;
    }
    p = heap_key.data();
  }
  char* const begin = p;
  p = std::copy(hotkey.begin(), hotkey.end(), p);
  *p++ = ':';
  p = std::copy(uuid.begin(), uuid.end(), p);
  if (opts_.rule == nonce_rule::unique) {
    *p++ = ':';
    p = std::to_chars(p, begin + need, nonce).ptr;
  }
  key = std::string_view(begin, static_cast<std::size_t>(p - begin));

  const std::size_t h = key_hash{}(key);
  shard& s = shards_[(h ^ (h >> 29)) & shard_mask_];
  std::lock_guard lk(s.m);
  auto it = s.map.find(key);
  if (it != s.map.end()) {
    record_entry& e = it->second;
    if (e.expires_at < now_ns) {  // forgotten: the freshness check now protects what it guarded
      e = {nonce, expires_at_ns};
      return nonce_verdict::accepted;
    }
    if (opts_.rule == nonce_rule::unique) return nonce_verdict::replayed;
    if (nonce <= e.nonce) return nonce_verdict::stale;
    e = {nonce, std::max(expires_at_ns, e.expires_at)};
    return nonce_verdict::accepted;
  }
  try {
    if (s.map.size() >= s.sweep_at) {
      const bool full = s.map.size() >= per_shard_capacity_;
      if (!full || now_ns - s.last_full_sweep >= full_sweep_interval_ns) {
        s.sweep(now_ns);
        if (full) s.last_full_sweep = now_ns;
        s.sweep_at = std::min(per_shard_capacity_, std::max(min_sweep_threshold, 2 * s.map.size()));
      }
    }
    if (s.map.size() >= per_shard_capacity_) return nonce_verdict::full;
    s.map.emplace(std::string(key), record_entry{nonce, expires_at_ns});
  } catch (...) {  // allocation failure: refuse rather than forget
    return nonce_verdict::full;
  }
  return nonce_verdict::accepted;
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
