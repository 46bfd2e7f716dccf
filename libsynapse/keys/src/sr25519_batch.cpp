#include <bt/sr25519_batch.hpp>

#include <bt/key_error.hpp>
#include "ristretto_msm.hpp"
#include "sr25519_parse.hpp"
#include "sr25519_point_verify.hpp"

#include <decaf/point_255.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <numeric>
#include <vector>

namespace bt::sr25519 {
namespace {

using internal::scalar32;

// A public key shared by one or more well-formed items: decoded once, its term's scalar the sum
// of z_i·k_i over those items.
struct distinct_key {
  decaf_255_point_s point;
  decaf_255_scalar_s weight;
};

// A well-formed item: R decoded, s and k as scalars, and its key's index in batch::keys.
struct parsed_item {
  std::size_t index = 0;  // in the caller's items
  std::size_t key = 0;
  decaf_255_point_s r;
  decaf_255_scalar_s s;
  decaf_255_scalar_s k;
};

struct batch {
  std::vector<parsed_item> parsed;
  std::vector<distinct_key> keys;
};

std::error_code verify_item(const batch_item& item, std::string_view context) noexcept {
  return verify(item.public_key, item.message, item.signature, context);
}

void decode_scalar(decaf_255_scalar_t out, const scalar32& canonical) noexcept {
  // parse_and_challenge returns both scalars canonical (< l), so the decode never reduces.
  if (decaf_255_scalar_decode(out, canonical.data()) != DECAF_SUCCESS)
    decaf_255_scalar_copy(out, decaf_255_scalar_zero);  // unreachable
}

// Decides each item's form exactly as verify() does, in verify()'s order: the signature's shape
// (invalid_signature), then A (invalid_public_key), then R (invalid_signature; verify() decodes R
// only on a mismatch, but an R that is no canonical encoding can never match, so the verdict is
// the same). Malformed items get their error in `results`; the rest are returned, with their keys
// deduplicated (items are visited grouped by key bytes: canonical encodings are unique, so equal
// points have equal bytes). May throw std::bad_alloc.
batch parse_items(std::span<const batch_item> items, std::string_view context,
                  std::span<std::error_code> results, internal::known_points* known) {
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::memcmp(items[a].public_key.data(), items[b].public_key.data(), 32) < 0;
  });
  batch out;
  out.parsed.reserve(items.size());
  bool key_valid = false;
  for (std::size_t n = 0; n < order.size(); ++n) {
    const std::size_t i = order[n];
    const batch_item& item = items[i];
    const bool new_key = n == 0 || std::memcmp(item.public_key.data(),
                                               items[order[n - 1]].public_key.data(), 32) != 0;
    if (new_key) {
      decaf_255_point_t a;
      const decaf_255_point_s* cached = known ? known->find(item.public_key) : nullptr;
      key_valid = cached != nullptr ||
                  decaf_255_point_decode(a, item.public_key.data(), DECAF_TRUE) == DECAF_SUCCESS;
      if (key_valid) {
        distinct_key& key = out.keys.emplace_back();
        decaf_255_point_copy(&key.point, cached ? cached : a);
        decaf_255_scalar_copy(&key.weight, decaf_255_scalar_zero);
      }
    }
    scalar32 s;
    scalar32 k;
    if (const std::error_code ec = internal::parse_and_challenge(item.public_key, item.message,
                                                                 item.signature, context, s, k)) {
      results[i] = ec;
      continue;
    }
    if (!key_valid) {
      results[i] = key_errc::invalid_public_key;
      continue;
    }
    parsed_item& p = out.parsed.emplace_back();
    if (decaf_255_point_decode(&p.r, item.signature.data(), DECAF_TRUE) != DECAF_SUCCESS) {
      out.parsed.pop_back();
      results[i] = key_errc::invalid_signature;
      continue;
    }
    p.index = i;
    p.key = out.keys.size() - 1;
    decode_scalar(&p.s, s);
    decode_scalar(&p.k, k);
  }
  return out;
}

// The batch equation over the parsed items, with fresh weights. May throw std::bad_alloc.
bool equation_holds(batch& b) {
  // 128-bit weights: 16 random bytes each, the upper half of the scalar left zero.
  std::vector<std::array<std::uint8_t, 16>> weights(b.parsed.size());
  randombytes_buf(weights.data(), weights.size() * sizeof(weights[0]));

  internal::multiscalar msm;
  msm.reserve(b.parsed.size() + b.keys.size());
  decaf_255_scalar_t base;  // Σ z_i·s_i, negated below
  decaf_255_scalar_copy(base, decaf_255_scalar_zero);
  for (std::size_t n = 0; n < b.parsed.size(); ++n) {
    const parsed_item& p = b.parsed[n];
    scalar32 bytes{};
    std::copy(weights[n].begin(), weights[n].end(), bytes.begin());
    decaf_255_scalar_t z;
    decode_scalar(z, bytes);
    msm.add_term(&p.r, z);  // + z_i·R_i
    decaf_255_scalar_t product;
    decaf_255_scalar_mul(product, z, &p.k);
    decaf_255_scalar_add(&b.keys[p.key].weight, &b.keys[p.key].weight, product);  // + z_i·k_i·A_i
    decaf_255_scalar_mul(product, z, &p.s);
    decaf_255_scalar_add(base, base, product);
  }
  for (const distinct_key& key : b.keys) msm.add_term(&key.point, &key.weight);
  decaf_255_scalar_sub(base, decaf_255_scalar_zero, base);  // − (Σ z_i·s_i)·B

  decaf_255_point_t sum;
  msm.evaluate(sum, base);
  return decaf_255_point_eq(sum, decaf_255_point_identity) == DECAF_TRUE;
}

bool is_parsing_error(std::error_code ec) noexcept {
  return ec && ec != key_errc::signature_mismatch;
}

// verify_batch's contract one item at a time: without memory for the batch, the first parsing
// error by index, else the first mismatch.
std::error_code verify_batch_one_by_one(std::span<const batch_item> items,
                                        std::string_view context) noexcept {
  std::error_code first_mismatch;
  for (const batch_item& item : items) {
    const std::error_code ec = verify_item(item, context);
    if (is_parsing_error(ec)) return ec;
    if (ec && !first_mismatch) first_mismatch = ec;
  }
  return first_mismatch;
}

}  // namespace

std::error_code verify_batch(std::span<const batch_item> items, std::string_view context) noexcept {
  if (items.size() == 1) return verify_item(items[0], context);
  try {
    std::vector<std::error_code> results(items.size());
    batch b = parse_items(items, context, results, nullptr);
    for (const std::error_code& ec : results)
      if (ec) return ec;
    if (b.parsed.size() < 2) return {};  // empty (one item was handled above)
    return equation_holds(b) ? std::error_code{} : make_error_code(key_errc::signature_mismatch);
  } catch (const std::bad_alloc&) {
    return verify_batch_one_by_one(items, context);
  }
}

void verify_each_with_batch(std::span<const batch_item> items, std::span<std::error_code> results,
                            std::string_view context) noexcept {
  internal::verify_each_with_batch(items, results, context, nullptr);
}

void internal::verify_each_with_batch(std::span<const batch_item> items,
                                      std::span<std::error_code> results, std::string_view context,
                                      known_points* known) noexcept {
  if (results.size() != items.size()) {
    std::fill(results.begin(), results.end(), make_error_code(std::errc::invalid_argument));
    return;
  }
  std::fill(results.begin(), results.end(), std::error_code{});
  try {
    batch b = parse_items(items, context, results, known);
    if (b.parsed.size() >= 2 && equation_holds(b)) return;  // the well-formed items stay {}
    for (const parsed_item& p : b.parsed) results[p.index] = verify_item(items[p.index], context);
  } catch (const std::bad_alloc&) {
    for (std::size_t i = 0; i < items.size(); ++i) results[i] = verify_item(items[i], context);
  }
}

}  // namespace bt::sr25519
