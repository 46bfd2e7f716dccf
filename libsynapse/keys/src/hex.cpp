// Hex for keys, signatures and digests. Decoding is libsodium's sodium_hex2bin: slower than a
// hand-written loop, but negligible next to the sr25519 verification a decoded signature goes to.
// Encoding stays a table lookup, faster than sodium_bin2hex, because the body hash encodes one
// digest per hashed field and there libsodium's encoder would be a visible share of the hash.
// The measurements: docs/performance.md, "Crypto".
#include <bt/hex.hpp>

#include <bt/detail/text.hpp>

#include <sodium.h>

namespace bt {

void write_hex(std::span<const std::uint8_t> bytes, char* out) noexcept {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = detail::hex_digit(bytes[i] >> 4);
    out[2 * i + 1] = detail::hex_digit(bytes[i]);
  }
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  std::string out(bytes.size() * 2, '\0');
  write_hex(bytes, out.data());
  return out;
}

bool decode_hex(std::string_view hex, std::span<std::uint8_t> out) noexcept {
  if (hex.size() != 2 * out.size()) return false;
  if (out.empty()) return true;  // libsodium's pointers must not be null (an empty span's may be)
  // No ignore set and no end pointer: any non-hex character (or an odd count) fails.
  std::size_t written = 0;
  return sodium_hex2bin(out.data(), out.size(), hex.data(), hex.size(), nullptr, &written,
                        nullptr) == 0 &&
         written == out.size();
}

std::optional<std::vector<std::uint8_t>> from_hex(std::string_view text) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  if (text.size() % 2 != 0) return std::nullopt;
  std::vector<std::uint8_t> out(text.size() / 2);
  if (!decode_hex(text, out)) return std::nullopt;
  return out;
}

}  // namespace bt
