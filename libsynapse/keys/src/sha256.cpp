// SHA-256 on OpenSSL's low-level SHA256_CTX (see sha256.hpp).
//
// Why the low-level functions, which OpenSSL 3 marks deprecated in favour of EVP: an EVP digest
// context allocates on every init and every copy (the provider duplicates its state), so an HMAC
// keyed once cost three heap allocations per MAC and a one-shot hash two; the low-level state is
// a plain struct that copies like one. They run the same code (the default provider's SHA-256 is
// built on them, SHA extensions included) and are still part of OpenSSL 3's API, declared
// without the deprecation warning at API level 1.1.1, which this file asks for.
#define OPENSSL_API_COMPAT 10101
#include <bt/sha256.hpp>

#include <bt/hex.hpp>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstring>
#include <new>

namespace bt {
namespace {

static_assert(sizeof(SHA256_CTX) == 112 && alignof(SHA256_CTX) <= 8,
              "sha256_hasher::state_ must hold exactly one SHA256_CTX");

SHA256_CTX* ctx(unsigned char* state) noexcept {
  return std::launder(reinterpret_cast<SHA256_CTX*>(state));
}

}  // namespace

sha256_hasher::sha256_hasher() noexcept {
  SHA256_Init(new (state_) SHA256_CTX);
}

sha256_hasher::~sha256_hasher() {
  OPENSSL_cleanse(state_, sizeof state_);
}

void sha256_hasher::update(std::span<const std::uint8_t> data) noexcept {
  SHA256_Update(ctx(state_), data.data(), data.size());
}

void sha256_hasher::update(std::string_view data) noexcept {
  SHA256_Update(ctx(state_), data.data(), data.size());
}

sha256_digest sha256_hasher::finish() noexcept {
  sha256_digest out;
  SHA256_Final(out.data(), ctx(state_));
  return out;
}

sha256_digest sha256(std::span<const std::uint8_t> data) noexcept {
  sha256_hasher h;
  h.update(data);
  return h.finish();
}

sha256_digest sha256(std::string_view data) noexcept {
  sha256_hasher h;
  h.update(data);
  return h.finish();
}

std::string sha256_hex(std::string_view data) {
  return to_hex(sha256(data));
}

}  // namespace bt
