// SHA-256 (FIPS 180-4): the body hash of Epistula requests (PROTOCOL 12) and of authenticated
// answers (PROTOCOL 5.15, 13), and the hash under the session MACs. It runs on OpenSSL's SHA-256,
// which uses the CPU's SHA extensions where it has them, several times as fast as libsodium's
// portable code and than SHA3-256 on large inputs (docs/performance.md, "Crypto").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace bt {

using sha256_digest = std::array<std::uint8_t, 32>;

/// Incremental SHA-256 as a plain value: it never allocates and cannot fail, and copying it
/// forks the hash (an HMAC keyed once copies its keyed states per message). The state is wiped
/// on destruction, since an HMAC's holds key material.
class sha256_hasher {
 public:
  sha256_hasher() noexcept;
  sha256_hasher(const sha256_hasher&) noexcept = default;
  sha256_hasher& operator=(const sha256_hasher&) noexcept = default;
  ~sha256_hasher();

  void update(std::span<const std::uint8_t> data) noexcept;
  void update(std::string_view data) noexcept;
  /// The digest of everything absorbed; the hasher must not be updated afterwards.
  sha256_digest finish() noexcept;

 private:
  // OpenSSL's SHA256_CTX (112 bytes), kept out of this header; sha256.cpp checks the size.
  alignas(8) unsigned char state_[112];
};

sha256_digest sha256(std::span<const std::uint8_t> data) noexcept;
sha256_digest sha256(std::string_view data) noexcept;
/// Lower-case hex of SHA-256 over the exact bytes (Python's hashlib.sha256(b).hexdigest()).
std::string sha256_hex(std::string_view data);

}  // namespace bt
