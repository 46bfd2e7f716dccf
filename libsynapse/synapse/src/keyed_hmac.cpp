// HMAC-SHA-256 keyed once (see keyed_hmac.hpp).
#include "keyed_hmac.hpp"

#include <sodium.h>

namespace bt::session_auth::detail {
namespace {
constexpr std::size_t block_size = 64;  // SHA-256's
}  // namespace

keyed_hmac::keyed_hmac(const key_bytes& key, std::string_view prefix) noexcept {
  // RFC 2104: a key no longer than the block is zero-padded to it, then xored with the pads.
  std::array<std::uint8_t, block_size> ipad{}, opad{};
  for (std::size_t i = 0; i < block_size; ++i) {
    const std::uint8_t k = i < key.size() ? key[i] : 0;
    ipad[i] = static_cast<std::uint8_t>(k ^ 0x36);
    opad[i] = static_cast<std::uint8_t>(k ^ 0x5c);
  }
  inner_.update(ipad);
  inner_.update(prefix);
  outer_.update(opad);
  sodium_memzero(ipad.data(), ipad.size());
  sodium_memzero(opad.data(), opad.size());
}

keyed_hmac::mac_bytes keyed_hmac::operator()(std::string_view message) const noexcept {
  sha256_hasher inner = inner_;  // copies wipe themselves when they go out of scope
  inner.update(message);
  mac_bytes inner_digest = inner.finish();
  sha256_hasher outer = outer_;
  outer.update(inner_digest);
  sodium_memzero(inner_digest.data(), inner_digest.size());
  return outer.finish();
}

bool keyed_hmac::ok(std::string_view message, const mac_bytes& mac) const noexcept {
  const mac_bytes expected = (*this)(message);
  return sodium_memcmp(expected.data(), mac.data(), mac.size()) == 0;
}

}  // namespace bt::session_auth::detail
