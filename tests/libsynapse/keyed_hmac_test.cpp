// The session MACs' keyed HMAC against libsodium's one-shot HMAC-SHA-256 of prefix || message.
#include "keyed_hmac.hpp"

#include <bt/keypair.hpp>

#include <catch2/catch.hpp>

#include <sodium.h>

#include <string>

namespace {

using bt::session_auth::detail::keyed_hmac;

keyed_hmac::mac_bytes one_shot(const keyed_hmac::key_bytes& key, const std::string& text) {
  keyed_hmac::mac_bytes mac{};
  crypto_auth_hmacsha256(mac.data(), reinterpret_cast<const unsigned char*>(text.data()),
                         text.size(), key.data());
  return mac;
}

std::string random_text(std::size_t n) {
  std::string s(n, '\0');
  randombytes_buf(s.data(), s.size());
  return s;
}

}  // namespace

TEST_CASE("keyed_hmac is HMAC-SHA-256 of prefix || message, whatever the lengths", "[keyed_hmac]") {
  bt::init_crypto();
  keyed_hmac::key_bytes key{};
  randombytes_buf(key.data(), key.size());
  // Prefixes and messages around SHA-256's 64-byte block and its 55-byte padding limit.
  for (const std::size_t prefix_size : {0, 1, 55, 56, 63, 64, 65, 200}) {
    const std::string prefix = random_text(prefix_size);
    const keyed_hmac h(key, prefix);
    for (std::size_t n = 0; n <= 300; n += (n < 70 ? 1 : 23)) {
      INFO("prefix " << prefix_size << ", message " << n);
      const std::string message = random_text(n);
      const auto expected = one_shot(key, prefix + message);
      CHECK(h(message) == expected);
      CHECK(h(message) == expected);  // the keyed state is not consumed by a MAC
      CHECK(h.ok(message, expected));
      auto wrong = expected;
      wrong[n % wrong.size()] ^= 1;
      CHECK_FALSE(h.ok(message, wrong));
      if (n > 0) {
        std::string altered = message;
        altered[n / 2] = static_cast<char>(altered[n / 2] ^ 0x80);
        CHECK_FALSE(h.ok(altered, expected));
      }
    }
  }
  // Another key gives another MAC.
  keyed_hmac::key_bytes other = key;
  other[0] ^= 1;
  CHECK(keyed_hmac(other, "p")("m") != keyed_hmac(key, "p")("m"));
}
