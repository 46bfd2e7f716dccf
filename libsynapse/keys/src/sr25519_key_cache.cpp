#include <bt/sr25519_key_cache.hpp>

#include <bt/key_error.hpp>
#include "ristretto_niels.hpp"
#include "sr25519_parse.hpp"
#include "sr25519_point_verify.hpp"

#include <decaf/point_255.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

namespace bt::sr25519 {

namespace {

// libdecaf's precomputed table: its size and alignment are only known at run time.
struct comb_table_deleter {
  void operator()(decaf_255_precomputed_s* t) const noexcept {
    ::operator delete (static_cast<void*>(t), std::align_val_t{decaf_255_alignof_precomputed_s});
  }
};
using comb_table_ptr = std::unique_ptr<decaf_255_precomputed_s, comb_table_deleter>;

comb_table_ptr make_comb_table(const decaf_255_point_t a) {
  void* raw = ::operator new (decaf_255_sizeof_precomputed_s,
                              std::align_val_t{decaf_255_alignof_precomputed_s});
  comb_table_ptr table(static_cast<decaf_255_precomputed_s*>(raw));
  decaf_255_precompute(table.get(), a);
  return table;
}

}  // namespace

struct key_cache::prepared_key {
  decaf_255_point_t point;
  std::shared_ptr<const decaf_255_precomputed_s> table;  // null until verified again while cached
  // A hot key's entry only: its multiples, and the entry it had before (restored on demotion).
  std::unique_ptr<const internal::niels_table> hot;
  std::shared_ptr<const prepared_key> cold;
};

namespace {

// verify()'s verdict for a hot key: R' = s·B − k·A from the base point's table and the key's,
// both without doublings, in one sum (ristretto_niels.hpp); then schnorrkel's byte comparison,
// as internal::verify_decoded does.
std::error_code verify_hot(std::span<const std::uint8_t, 32> pub,
                           const internal::niels_table& a_table,
                           std::span<const std::uint8_t> message, std::span<const std::uint8_t> sig,
                           std::string_view context) noexcept {
  decaf_255_scalar_t ds;
  decaf_255_scalar_t dk;  // −k
  if (const std::error_code ec = internal::signature_scalars(pub, message, sig, context, ds, dk))
    return ec;
  internal::edwards_point r_prime = internal::edwards_identity();
  internal::base_add_product_fast(r_prime, ds);
  a_table.add_product_public(r_prime, dk);
  return internal::compare_encoding_with_r(internal::ristretto_encode(r_prime), sig);
}

}  // namespace

std::size_t key_cache::key_hash::operator()(const key_bytes& k) const noexcept {
  // Keys are points' encodings, as uniform as their hashes; the bound on the cache's size bounds
  // the cost of a bucket an adversary fills on purpose.
  std::size_t h = 0;
  std::memcpy(&h, k.data(), sizeof h);
  return h;
}

key_cache::key_cache(std::size_t capacity) : capacity_(capacity) {}

key_cache::~key_cache() = default;

std::shared_ptr<const key_cache::prepared_key> key_cache::find(
    std::span<const std::uint8_t, 32> pub, bool* promote) {
  key_bytes k;
  std::copy(pub.begin(), pub.end(), k.begin());
  std::lock_guard lk(m_);
  const auto it = index_.find(k);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  node& n = *it->second;
  ++n.hits;
  if (++lookups_ % hit_decay_period == 0)
    for (node& e : lru_) e.hits /= 2;
  if (promote != nullptr && !n.promoting && n.prepared->table && !n.prepared->hot &&
      deserves_hot(n)) {
    n.promoting = true;
    *promote = true;
  }
  return n.prepared;
}

bool key_cache::deserves_hot(const node& n) const {
  if (hot_count_ < hot_keys) return true;
  if (n.hits % 16 != 0) return false;  // the scan below, once every 16 lookups of a key at most
  std::uint64_t coldest = UINT64_MAX;
  for (const node& e : lru_)
    if (e.prepared->hot) coldest = std::min(coldest, e.hits);
  return n.hits > 2 * coldest;
}

void key_cache::promote(std::span<const std::uint8_t, 32> pub,
                        std::shared_ptr<const prepared_key> hot) {
  key_bytes k;
  std::copy(pub.begin(), pub.end(), k.begin());
  std::lock_guard lk(m_);
  const auto it = index_.find(k);
  if (it == index_.end()) return;  // evicted meanwhile: its table is dropped
  node& n = *it->second;
  n.promoting = false;
  if (!hot || n.prepared->hot) return;
  n.prepared = std::move(hot);
  ++hot_count_;
  while (hot_count_ > hot_keys) {
    node* coldest = nullptr;
    for (node& e : lru_)
      if (&e != &n && e.prepared->hot && (coldest == nullptr || e.hits < coldest->hits))
        coldest = &e;
    if (coldest == nullptr) break;  // unreachable: hot_keys ≥ 1
    coldest->prepared = coldest->prepared->cold;
    --hot_count_;
  }
}

void key_cache::remember(std::span<const std::uint8_t, 32> pub,
                         std::shared_ptr<const prepared_key> prepared) noexcept {
  if (capacity_ == 0) return;
  key_bytes k;
  std::copy(pub.begin(), pub.end(), k.begin());
  try {
    std::lock_guard lk(m_);
    if (const auto it = index_.find(k); it != index_.end()) {
      // Another thread may have built the table first: a table is never replaced by none, and
      // a hot entry changes only through promote().
      if (!it->second->prepared->hot && (prepared->table || !it->second->prepared->table))
        it->second->prepared = std::move(prepared);
      lru_.splice(lru_.begin(), lru_, it->second);
      return;
    }
    lru_.push_front(node{k, std::move(prepared)});
    try {
      index_.emplace(k, lru_.begin());
    } catch (...) {
      lru_.pop_front();
      throw;
    }
    if (lru_.size() > capacity_) {
      if (lru_.back().prepared->hot) --hot_count_;
      index_.erase(lru_.back().key);
      lru_.pop_back();
    }
  } catch (const std::bad_alloc&) {
    // Not remembered: the next signature under this key decodes it again.
  }
}

std::error_code key_cache::verify(std::span<const std::uint8_t, 32> pub,
                                  std::span<const std::uint8_t> message,
                                  std::span<const std::uint8_t> signature,
                                  std::string_view context) noexcept {
  if (capacity_ == 0) return sr25519::verify(pub, message, signature, context);
  try {
    bool promote_it = false;
    if (std::shared_ptr<const prepared_key> known = find(pub, &promote_it)) {
      const std::error_code ec =
          known->hot ? verify_hot(pub, *known->hot, message, signature, context)
                     : internal::verify_decoded(pub, known->point, known->table.get(), message,
                                                signature, context);
      if (!ec && !known->table) {  // verified again while cached: now worth its table
        auto with_table = std::make_shared<prepared_key>();
        decaf_255_point_copy(with_table->point, known->point);
        with_table->table = make_comb_table(with_table->point);
        remember(pub, std::move(with_table));
      }
      if (promote_it) {
        std::shared_ptr<prepared_key> hot;
        if (!ec) {
          try {
            // The key decoded again, into ristretto_niels.hpp's coordinates: it is the canonical
            // encoding of a point libdecaf decoded, so it decodes (else it is not promoted).
            if (const auto a = internal::ristretto_decode(pub)) {
              hot = std::make_shared<prepared_key>();
              decaf_255_point_copy(hot->point, known->point);
              hot->table = known->table;
              hot->hot = std::make_unique<const internal::niels_table>(*a);
              hot->cold = known;
            }
          } catch (const std::bad_alloc&) {
            hot.reset();  // stays as it is; a later lookup may try again
          }
        }
        promote(pub, std::move(hot));  // without a table: clears the promotion under way
      }
      return ec;
    }
    auto fresh = std::make_shared<prepared_key>();
    if (decaf_255_point_decode(fresh->point, pub.data(), DECAF_TRUE) != DECAF_SUCCESS)
      return sr25519::verify(pub, message, signature, context);  // its error; never cached
    const std::error_code ec =
        internal::verify_decoded(pub, fresh->point, nullptr, message, signature, context);
    if (!ec) remember(pub, std::move(fresh));
    return ec;
  } catch (const std::bad_alloc&) {
    return sr25519::verify(pub, message, signature, context);
  }
}

void key_cache::verify_each_with_batch(std::span<const batch_item> items,
                                       std::span<std::error_code> results,
                                       std::string_view context) noexcept {
  if (capacity_ == 0 || results.size() != items.size()) {
    sr25519::verify_each_with_batch(items, results, context);
    return;
  }
  if (items.size() == 1) {  // no equation to share: the cached lone verify is cheaper
    results[0] = verify(items[0].public_key, items[0].message, items[0].signature, context);
    return;
  }
  // The entries found stay alive until the batch returns, whatever other threads evict.
  struct pinned_points final : internal::known_points {
    key_cache* cache;
    std::vector<std::shared_ptr<const prepared_key>> held;
    explicit pinned_points(key_cache* c) : cache(c) {}
    const decaf_255_point_s* find(std::span<const std::uint8_t, 32> pub) noexcept override {
      try {
        std::shared_ptr<const prepared_key> p = cache->find(pub);
        if (!p) return nullptr;
        held.push_back(p);
        return p->point;
      } catch (const std::bad_alloc&) {
        return nullptr;  // decoded by the batch instead
      }
    }
  } known(this);
  internal::verify_each_with_batch(items, results, context, &known);

  // Keys new to the cache whose items verified enter it (decoded once more here: once per key
  // until it is evicted).
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (results[i]) continue;
    const auto pub = items[i].public_key;
    if (contains(pub)) continue;
    try {
      auto fresh = std::make_shared<prepared_key>();
      if (decaf_255_point_decode(fresh->point, pub.data(), DECAF_TRUE) == DECAF_SUCCESS)
        remember(pub, std::move(fresh));
    } catch (const std::bad_alloc&) {
      return;
    }
  }
}

bool key_cache::is_hot(std::span<const std::uint8_t, 32> pub) const {
  key_bytes k;
  std::copy(pub.begin(), pub.end(), k.begin());
  std::lock_guard lk(m_);
  const auto it = index_.find(k);
  return it != index_.end() && it->second->prepared->hot != nullptr;
}

std::size_t key_cache::hot_count() const {
  std::lock_guard lk(m_);
  return hot_count_;
}

std::size_t key_cache::size() const {
  std::lock_guard lk(m_);
  return lru_.size();
}

bool key_cache::contains(std::span<const std::uint8_t, 32> pub) const {
  key_bytes k;
  std::copy(pub.begin(), pub.end(), k.begin());
  std::lock_guard lk(m_);
  return index_.contains(k);
}

bool key_cache::has_table(std::span<const std::uint8_t, 32> pub) const {
  key_bytes k;
  std::copy(pub.begin(), pub.end(), k.begin());
  std::lock_guard lk(m_);
  const auto it = index_.find(k);
  return it != index_.end() && it->second->prepared->table != nullptr;
}

}  // namespace bt::sr25519
