// SHA-256 on OpenSSL (see sha256.hpp); libsodium's portable SHA-256 is the fallback of one-shot
// hashes, which need no context.
#include <bt/sha256.hpp>

#include <bt/hex.hpp>

#include <openssl/evp.h>
#include <sodium.h>

#include <utility>

namespace bt {
namespace {

/// OpenSSL's SHA-256, fetched once (a fetch per hash costs more than a small hash); null when no
/// provider has it.
const EVP_MD* openssl_sha256() noexcept {
  static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

}  // namespace

sha256_hasher::sha256_hasher(sha256_hasher&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)), failed_(std::exchange(other.failed_, false)) {}

sha256_hasher& sha256_hasher::operator=(sha256_hasher&& other) noexcept {
  if (this != &other) {
    EVP_MD_CTX_free(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
    failed_ = std::exchange(other.failed_, false);
  }
  return *this;
}

sha256_hasher::~sha256_hasher() {
  EVP_MD_CTX_free(ctx_);
}

void sha256_hasher::update(std::span<const std::uint8_t> data) noexcept {
  if (failed_) return;
  if (ctx_ == nullptr) {
    const EVP_MD* md = openssl_sha256();
    ctx_ = EVP_MD_CTX_new();
    failed_ = md == nullptr || ctx_ == nullptr || EVP_DigestInit_ex2(ctx_, md, nullptr) != 1;
  }
  if (!failed_) failed_ = EVP_DigestUpdate(ctx_, data.data(), data.size()) != 1;
}

void sha256_hasher::update(std::string_view data) noexcept {
  update(std::span(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}

sha256_digest sha256_hasher::finish() noexcept {
  if (ctx_ == nullptr && !failed_) return sha256(std::string_view());
  sha256_digest out{};
  unsigned int size = 0;
  if (failed_ || EVP_DigestFinal_ex(ctx_, out.data(), &size) != 1 || size != out.size())
    out.fill(0);
  return out;
}

sha256_digest sha256(std::span<const std::uint8_t> data) noexcept {
  sha256_digest out{};
  unsigned int size = 0;
  if (const EVP_MD* md = openssl_sha256();
      md != nullptr && EVP_Digest(data.data(), data.size(), out.data(), &size, md, nullptr) == 1 &&
      size == out.size())
    return out;
  // OpenSSL failed (out of memory): the same function through libsodium, which wants a non-null
  // pointer even for zero bytes (an empty span's data() may be null).
  static constexpr unsigned char empty = 0;
  crypto_hash_sha256(out.data(), data.empty() ? &empty : data.data(), data.size());
  return out;
}

sha256_digest sha256(std::string_view data) noexcept {
  return sha256(std::span(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}

std::string sha256_hex(std::string_view data) {
  return to_hex(sha256(data));
}

}  // namespace bt
