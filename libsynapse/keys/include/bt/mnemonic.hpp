// BIP39 English mnemonics as Substrate uses them (substrate-bip39): validation with precise
// errors, entropy extraction, generation, and the sr25519/ed25519 mini secret
//   PBKDF2-HMAC-SHA512(password = entropy, salt = "mnemonic" + passphrase, 2048)[0..32]
// which differs from standard BIP39 (that one hashes the sentence, not the entropy).
// PROTOCOL 9.4; vectors: tests/vectors/mnemonic.json.
//
// Thread safety: every function is reentrant. Secret outputs are wiped on destruction
// (entropy_bytes, mnemonic_seed) or are the caller's to wipe (the pbkdf2 output buffer).
#pragma once

#include <bt/key_error.hpp>
#include <bt/keypair.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bt {

/// 16 to 32 bytes of BIP39 entropy; wiped on destruction.
class entropy_bytes {
 public:
  entropy_bytes() = default;
  explicit entropy_bytes(std::span<const std::uint8_t> bytes);  ///< at most 32 bytes
  entropy_bytes(const entropy_bytes& other);
  entropy_bytes& operator=(const entropy_bytes& other);
  ~entropy_bytes();

  std::span<const std::uint8_t> bytes() const noexcept { return {data_.data(), size_}; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::array<std::uint8_t, 32> data_{};
  std::size_t size_ = 0;
};

/// The BIP39 English word at `index` (0..2047).
std::string_view bip39_word(std::uint16_t index);
/// Index of `word` in the BIP39 English list (exact, case-sensitive match), or nullopt.
std::optional<std::uint16_t> bip39_word_index(std::string_view word) noexcept;

/// Validates a mnemonic and returns its entropy. Words are separated by runs of ASCII
/// whitespace (as the Rust bip39 crate splits them). Checks, in this order: word count (12, 15,
/// 18, 21 or 24 → key_errc::mnemonic_word_count), each word in the English list (lower-case only →
/// key_errc::mnemonic_unknown_word, `detail` names the word and its position), and the checksum
/// (key_errc::mnemonic_checksum). The phrase itself is never copied into `err`, except the one
/// unknown word.
std::optional<entropy_bytes> mnemonic_to_entropy(std::string_view phrase, error& err);
/// Throwing form: std::system_error carrying the bt::key_errc.
entropy_bytes mnemonic_to_entropy(std::string_view phrase);

/// True when `phrase` is a valid mnemonic; `err` says why not.
bool validate_mnemonic(std::string_view phrase, error& err);

/// The mnemonic of 16, 20, 24, 28 or 32 bytes of entropy (words joined by single spaces).
/// Throws std::invalid_argument for any other length.
std::string entropy_to_mnemonic(std::span<const std::uint8_t> entropy);

/// A fresh mnemonic of `words` words (12, 15, 18, 21 or 24) from libsodium's randombytes_buf.
/// Throws std::invalid_argument for another count. The caller wipes the returned string.
std::string generate_mnemonic(int words = 12);

/// PBKDF2-HMAC-SHA512 (RFC 8018) into `out` (any length), on libsodium's HMAC-SHA512, which
/// accepts a key of any length. Throws std::invalid_argument when iterations == 0.
void pbkdf2_hmac_sha512(std::span<const std::uint8_t> password, std::span<const std::uint8_t> salt,
                        std::uint32_t iterations, std::span<std::uint8_t> out);

/// Substrate's mini secret: PBKDF2-HMAC-SHA512(entropy, "mnemonic" + passphrase, 2048)[0..32].
/// The passphrase is taken as raw UTF-8 bytes, without NFKD normalisation (as substrate-bip39).
/// The caller wipes the result.
seed_bytes mini_secret_from_entropy(std::span<const std::uint8_t> entropy,
                                    std::string_view passphrase = {});

/// Validates `phrase` and returns mini_secret_from_entropy(entropy, passphrase).
std::optional<seed_bytes> mnemonic_to_mini_secret(std::string_view phrase,
                                                  std::string_view passphrase, error& err);
seed_bytes mnemonic_to_mini_secret(std::string_view phrase, std::string_view passphrase = {});

}  // namespace bt
