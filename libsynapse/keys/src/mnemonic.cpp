#include <bt/mnemonic.hpp>

#include "bip39_english.hpp"
#include "throw_error.hpp"

#include <sodium.h>

#include <algorithm>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace bt {
namespace {

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Splits on runs of ASCII whitespace; returns views into `phrase`.
std::vector<std::string_view> split_words(std::string_view phrase) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < phrase.size()) {
    while (i < phrase.size() && is_space(phrase[i])) ++i;
    const std::size_t start = i;
    while (i < phrase.size() && !is_space(phrase[i])) ++i;
    if (i > start) words.push_back(phrase.substr(start, i - start));
  }
  return words;
}

bool valid_word_count(std::size_t n) noexcept {
  return n >= 12 && n <= 24 && n % 3 == 0;
}

// Printable form of an untrusted word for an error message: at most 32 bytes, control bytes
// replaced, so a pasted secret or a terminal escape cannot flow into logs unbounded.
std::string printable(std::string_view word) {
  std::string out;
  for (char c : word.substr(0, 32))
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (word.size() > 32) out += "...";
  return out;
}

}  // namespace

entropy_bytes::entropy_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() > data_.size()) throw std::invalid_argument("entropy longer than 32 bytes");
  std::copy(bytes.begin(), bytes.end(), data_.begin());
  size_ = bytes.size();
}

entropy_bytes::entropy_bytes(const entropy_bytes& other) = default;

entropy_bytes& entropy_bytes::operator=(const entropy_bytes& other) {
  if (this != &other) {
    data_ = other.data_;
    size_ = other.size_;
  }
  return *this;
}

entropy_bytes::~entropy_bytes() {
  sodium_memzero(data_.data(), data_.size());
}

std::string_view bip39_word(std::uint16_t index) {
  return detail::bip39_english.at(index);
}

std::optional<std::uint16_t> bip39_word_index(std::string_view word) noexcept {
  const auto& list = detail::bip39_english;
  const auto it = std::lower_bound(list.begin(), list.end(), word);
  if (it == list.end() || *it != word) return std::nullopt;
  return static_cast<std::uint16_t>(it - list.begin());
}

std::optional<entropy_bytes> mnemonic_to_entropy(std::string_view phrase, error& err) {
  err = {};
  const auto words = split_words(phrase);
  if (!valid_word_count(words.size())) {
    err = {make_error_code(key_errc::mnemonic_word_count), "mnemonic",
           std::to_string(words.size()) + " words; expected 12, 15, 18, 21 or 24"};
    return std::nullopt;
  }
  // 11 bits per word: ENT = 32 * words / 3 bits of entropy followed by ENT / 32 checksum bits.
  std::array<std::uint8_t, 33> bits{};  // 24 words = 264 bits = 33 bytes
  std::size_t bit = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const auto index = bip39_word_index(words[w]);
    if (!index) {
      sodium_memzero(bits.data(), bits.size());
      err = {make_error_code(key_errc::mnemonic_unknown_word), "mnemonic",
             "word " + std::to_string(w + 1) + " \"" + printable(words[w]) +
                 "\" is not in the BIP39 English list (lower-case words only)"};
      return std::nullopt;
    }
    for (int b = 10; b >= 0; --b, ++bit) {
      if ((*index >> b) & 1) bits[bit / 8] |= static_cast<std::uint8_t>(0x80u >> (bit % 8));
    }
  }
  const std::size_t entropy_len = words.size() * 4 / 3;  // bytes
  const std::size_t checksum_bits = words.size() / 3;
  std::array<std::uint8_t, crypto_hash_sha256_BYTES> hash{};
  crypto_hash_sha256(hash.data(), bits.data(), entropy_len);
  // The checksum bits start right after the entropy, at byte entropy_len, most significant first.
  const unsigned mask = (0xffu << (8 - checksum_bits)) & 0xffu;
  const bool ok = (hash[0] & mask) == (bits[entropy_len] & mask);
  entropy_bytes out(std::span<const std::uint8_t>(bits.data(), entropy_len));
  sodium_memzero(bits.data(), bits.size());
  sodium_memzero(hash.data(), hash.size());
  if (!ok) {
    err = {make_error_code(key_errc::mnemonic_checksum), "mnemonic",
           "the last word does not match the BIP39 checksum"};
    return std::nullopt;
  }
  return out;
}

entropy_bytes mnemonic_to_entropy(std::string_view phrase) {
  error err;
  auto e = mnemonic_to_entropy(phrase, err);
  if (!e) detail::throw_error(err);
  return *e;
}

bool validate_mnemonic(std::string_view phrase, error& err) {
  return mnemonic_to_entropy(phrase, err).has_value();
}

std::string entropy_to_mnemonic(std::span<const std::uint8_t> entropy) {
  const std::size_t n = entropy.size();
  if (n < 16 || n > 32 || n % 4 != 0)
    throw std::invalid_argument("BIP39 entropy must be 16, 20, 24, 28 or 32 bytes");
  std::array<std::uint8_t, 33> bits{};
  std::copy(entropy.begin(), entropy.end(), bits.begin());
  std::array<std::uint8_t, crypto_hash_sha256_BYTES> hash{};
  crypto_hash_sha256(hash.data(), entropy.data(), n);
  bits[n] = hash[0];  // only the first n*8/32 bits of it are used
  const std::size_t words = n * 3 / 4;
  std::string out;
  out.reserve(words * 9);
  for (std::size_t w = 0; w < words; ++w) {
    unsigned index = 0;
    for (std::size_t b = w * 11; b < w * 11 + 11; ++b)
      index = index << 1 | ((bits[b / 8] >> (7 - b % 8)) & 1u);
    if (w) out += ' ';
    out += detail::bip39_english[index];
  }
  sodium_memzero(bits.data(), bits.size());
  sodium_memzero(hash.data(), hash.size());
  return out;
}

std::string generate_mnemonic(int words) {
  if (words < 12 || words > 24 || words % 3 != 0)
    throw std::invalid_argument("mnemonic word count must be 12, 15, 18, 21 or 24");
  init_crypto();
  std::array<std::uint8_t, 32> entropy{};
  const std::size_t n = static_cast<std::size_t>(words) * 4 / 3;
  randombytes_buf(entropy.data(), n);
  std::string phrase = entropy_to_mnemonic(std::span<const std::uint8_t>(entropy.data(), n));
  sodium_memzero(entropy.data(), entropy.size());
  return phrase;
}

void pbkdf2_hmac_sha512(std::span<const std::uint8_t> password, std::span<const std::uint8_t> salt,
                        std::uint32_t iterations, std::span<std::uint8_t> out) {
  if (iterations == 0) throw std::invalid_argument("PBKDF2 needs at least one iteration");
  init_crypto();
  constexpr std::size_t hlen = crypto_auth_hmacsha512_BYTES;
  // The keyed state (inner and outer hash after absorbing the padded key) is computed once and
  // copied for every HMAC, which halves the work of 2048 iterations.
  crypto_auth_hmacsha512_state keyed;
  if (crypto_auth_hmacsha512_init(&keyed, password.data(), password.size()) != 0)
    throw std::runtime_error("crypto_auth_hmacsha512_init failed");
  std::array<std::uint8_t, hlen> u{}, t{};
  crypto_auth_hmacsha512_state st;
  for (std::uint32_t block = 1, done = 0; done < out.size(); ++block) {
    const std::uint8_t be[4] = {
        static_cast<std::uint8_t>(block >> 24), static_cast<std::uint8_t>(block >> 16),
        static_cast<std::uint8_t>(block >> 8), static_cast<std::uint8_t>(block)};
    st = keyed;
    crypto_auth_hmacsha512_update(&st, salt.data(), salt.size());
    crypto_auth_hmacsha512_update(&st, be, sizeof be);
    crypto_auth_hmacsha512_final(&st, u.data());
    t = u;
    for (std::uint32_t i = 1; i < iterations; ++i) {
      st = keyed;
      crypto_auth_hmacsha512_update(&st, u.data(), u.size());
      crypto_auth_hmacsha512_final(&st, u.data());
      for (std::size_t k = 0; k < hlen; ++k) t[k] ^= u[k];
    }
    const std::size_t take = std::min<std::size_t>(hlen, out.size() - done);
    std::copy_n(t.begin(), take, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += static_cast<std::uint32_t>(take);
  }
  sodium_memzero(&keyed, sizeof keyed);
  sodium_memzero(&st, sizeof st);
  sodium_memzero(u.data(), u.size());
  sodium_memzero(t.data(), t.size());
}

seed_bytes mini_secret_from_entropy(std::span<const std::uint8_t> entropy,
                                    std::string_view passphrase) {
  std::string salt = "mnemonic";
  salt.append(passphrase);
  std::array<std::uint8_t, 64> seed64{};
  pbkdf2_hmac_sha512(entropy, {reinterpret_cast<const std::uint8_t*>(salt.data()), salt.size()},
                     2048, seed64);
  seed_bytes mini{};
  std::copy_n(seed64.begin(), mini.size(), mini.begin());
  sodium_memzero(seed64.data(), seed64.size());
  sodium_memzero(salt.data(), salt.size());
  return mini;
}

std::optional<seed_bytes> mnemonic_to_mini_secret(std::string_view phrase,
                                                  std::string_view passphrase, error& err) {
  auto entropy = mnemonic_to_entropy(phrase, err);
  if (!entropy) return std::nullopt;
  return mini_secret_from_entropy(entropy->bytes(), passphrase);
}

seed_bytes mnemonic_to_mini_secret(std::string_view phrase, std::string_view passphrase) {
  error err;
  auto s = mnemonic_to_mini_secret(phrase, passphrase, err);
  if (!s) detail::throw_error(err);
  return *s;
}

}  // namespace bt
