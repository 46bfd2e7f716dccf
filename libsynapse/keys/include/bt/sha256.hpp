// SHA-256 (FIPS 180-4): the body hash of Epistula requests (PROTOCOL 12) and of authenticated
// answers (PROTOCOL 5.15, 13). It runs on OpenSSL's SHA-256, which uses the CPU's SHA extensions
// where it has them (64 KiB in about 36 us on a 2.6 GHz EPYC, against 185 us for libsodium's
// portable code and 131 us for SHA3-256).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace bt {

using sha256_digest = std::array<std::uint8_t, 32>;

/// Incremental SHA-256 (a body hashed as its chunks go out or come in). Move-only. Constructing
/// one costs nothing: OpenSSL's context is made by the first update.
///
/// Should OpenSSL fail (no memory for its context; it has no other failure for SHA-256),
/// finish() returns the all-zero digest: no input hashes to it in practice, so a signature or MAC
/// made or checked over it does not verify, and the failure surfaces as a refused answer.
class sha256_hasher {
 public:
  sha256_hasher() noexcept = default;
  sha256_hasher(sha256_hasher&& other) noexcept;
  sha256_hasher& operator=(sha256_hasher&& other) noexcept;
  sha256_hasher(const sha256_hasher&) = delete;
  sha256_hasher& operator=(const sha256_hasher&) = delete;
  ~sha256_hasher();

  void update(std::span<const std::uint8_t> data) noexcept;
  void update(std::string_view data) noexcept;
  sha256_digest finish() noexcept;  ///< the hasher must not be used afterwards

 private:
  evp_md_ctx_st* ctx_ = nullptr;  ///< made by the first update
  bool failed_ = false;           ///< OpenSSL failed: finish() gives the all-zero digest
};

sha256_digest sha256(std::span<const std::uint8_t> data) noexcept;
sha256_digest sha256(std::string_view data) noexcept;
/// Lower-case hex of SHA-256 over the exact bytes (Python's hashlib.sha256(b).hexdigest()).
std::string sha256_hex(std::string_view data);

}  // namespace bt
