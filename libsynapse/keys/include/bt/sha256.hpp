// SHA-256 (FIPS 180-4) from libsodium (crypto_hash_sha256): the body hash of Epistula requests.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bt {

using sha256_digest = std::array<std::uint8_t, 32>;

sha256_digest sha256(std::string_view data) noexcept;
/// Lower-case hex of SHA-256 over the exact bytes (Python's hashlib.sha256(b).hexdigest()).
std::string sha256_hex(std::string_view data);

}  // namespace bt
