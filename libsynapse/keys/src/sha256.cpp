// SHA-256 through libsodium (its portable implementation; no state kept between calls).
#include <bt/sha256.hpp>

#include <bt/hex.hpp>

#include <sodium.h>

namespace bt {

sha256_digest sha256(std::string_view data) noexcept {
  sha256_digest out{};
  // libsodium wants a non-null pointer even for zero bytes; an empty view's data() may be null.
  static constexpr unsigned char empty = 0;
  const auto* p = data.empty() ? &empty : reinterpret_cast<const unsigned char*>(data.data());
  crypto_hash_sha256(out.data(), p, data.size());
  return out;
}

std::string sha256_hex(std::string_view data) {
  return to_hex(sha256(data));
}

}  // namespace bt
