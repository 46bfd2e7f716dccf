#include <bt/hex.hpp>
#include <bt/sha256.hpp>

#include <sodium.h>
#include <catch2/catch.hpp>

#include <string>

TEST_CASE("sha256_hex matches FIPS 180-4 examples", "[sha256]") {
  CHECK(bt::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(bt::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(bt::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // FIPS 180-4's long message: a million 'a'.
  CHECK(bt::sha256_hex(std::string(1'000'000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Bytes, not text: a NUL inside the body counts.
  CHECK(bt::sha256_hex(std::string("a\0b", 3)) != bt::sha256_hex("ab"));
}

TEST_CASE("sha256 equals libsodium's SHA-256 at every size around the block boundaries",
          "[sha256]") {
  std::string text(4200, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 131 + 7);
  for (std::size_t n = 0; n <= text.size(); n += (n < 200 ? 1 : 61)) {
    INFO(n);
    bt::sha256_digest expected{};
    crypto_hash_sha256(expected.data(), reinterpret_cast<const unsigned char*>(text.data()), n);
    REQUIRE(bt::sha256(std::string_view(text).substr(0, n)) == expected);
  }
}

TEST_CASE("sha256 incremental updates equal one-shot hashing", "[sha256]") {
  std::string text(300, 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
  const std::string_view all(text);
  const bt::sha256_digest whole = bt::sha256(all);
  for (std::size_t a = 0; a <= all.size(); a += 3) {
    for (std::size_t b = a; b <= all.size(); b += 17) {
      bt::sha256_hasher h;
      h.update(all.substr(0, a));
      h.update(all.substr(a, b - a));
      h.update(all.substr(b));
      REQUIRE(h.finish() == whole);
    }
  }
  SECTION("a hasher that saw nothing gives the empty input's hash") {
    CHECK(bt::sha256_hasher().finish() == bt::sha256(std::string_view()));
  }
  SECTION("a copy forks the hash: both continue from the state copied") {
    bt::sha256_hasher h;
    h.update(all.substr(0, 100));
    bt::sha256_hasher fork = h;
    fork.update(all.substr(100));
    h.update("another ending");
    CHECK(fork.finish() == whole);
    CHECK(h.finish() == bt::sha256(std::string(all.substr(0, 100)) + "another ending"));
    bt::sha256_hasher assigned;
    assigned.update("something else");
    bt::sha256_hasher source;
    source.update(all.substr(0, 7));
    assigned = source;
    assigned.update(all.substr(7));
    CHECK(assigned.finish() == whole);
  }
}
