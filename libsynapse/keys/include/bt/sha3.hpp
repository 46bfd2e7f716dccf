// SHA3-256 (FIPS 202) on our own Keccak-f[1600] (a private Keccak in the library), as bittensor's
// get_hash; one-shot hashes of 1 KiB and more go to OpenSSL's SHA3-256 (the same function, faster).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace bt {

using sha3_256_digest = std::array<std::uint8_t, 32>;

/// Incremental SHA3-256.
class sha3_256_hasher {
 public:
  sha3_256_hasher() noexcept;
  void update(std::span<const std::uint8_t> data) noexcept;
  void update(std::string_view data) noexcept;
  sha3_256_digest finish() noexcept;  ///< the hasher must not be used afterwards

 private:
  std::uint64_t state_[25];
  std::size_t pos_ = 0;  ///< bytes absorbed into the current block
};

sha3_256_digest sha3_256(std::span<const std::uint8_t> data) noexcept;
sha3_256_digest sha3_256(std::string_view data) noexcept;
/// Lowercase hex of SHA3-256 of the UTF-8 text (bittensor.utils.get_hash).
std::string sha3_256_hex(std::string_view data);

}  // namespace bt
