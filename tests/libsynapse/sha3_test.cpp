#include <bt/hex.hpp>
#include <bt/sha3.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

TEST_CASE("sha3_256 matches every vector of sha3_256.json", "[sha3]") {
  const auto v = bt::test::load_vectors("sha3_256.json");
  REQUIRE(v.at("cases").size() > 5);
  for (const auto& c : v.at("cases")) {
    const auto input = c.at("input_utf8").get<std::string>();
    INFO(c.at("description").get<std::string>());
    REQUIRE(input.size() == c.at("input_length_bytes").get<std::size_t>());
    CHECK(bt::sha3_256_hex(input) == c.at("sha3_256_hex").get<std::string>());
  }
}

TEST_CASE("sha3_256 incremental updates equal one-shot hashing", "[sha3]") {
  std::string text(300, 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
  // Every split point, and every second split after it: pieces that start mid-block, end
  // mid-block, span whole blocks or are empty (the byte-wise and the lane-wise absorption meet).
  const std::string_view all(text);
  for (std::size_t a = 0; a <= all.size(); ++a) {
    for (std::size_t b = a; b <= all.size(); b += 17) {
      bt::sha3_256_hasher h;
      h.update(all.substr(0, a));
      h.update(all.substr(a, b - a));
      h.update(all.substr(b));
      REQUIRE(h.finish() == bt::sha3_256(text));
    }
  }
}

TEST_CASE("sha3_256 of a million 'a' is FIPS 202's long-message value, one-shot and in pieces",
          "[sha3]") {
  const std::string text(1'000'000, 'a');
  const std::string expected = "5c8875ae474a3634ba4fd55ec85bffd661f32aca75c6d699d0cdcb6c115891c1";
  CHECK(bt::sha3_256_hex(text) == expected);
  bt::sha3_256_hasher h;
  for (std::size_t at = 0; at < text.size(); at += 4099)
    h.update(std::string_view(text).substr(at, 4099));
  CHECK(bt::to_hex(h.finish()) == expected);
}

TEST_CASE("sha3_256 one-shot (OpenSSL from 1 KiB) equals the incremental Keccak at every size",
          "[sha3]") {
  // Pseudo-random bytes (a fixed xorshift), sizes on both sides of the one-shot's switch to
  // OpenSSL and of block boundaries, each absorbed by the hasher in several chunkings.
  std::string data(std::size_t{1} << 20, '\0');
  std::uint64_t x = 0x9e3779b97f4a7c15u;
  for (char& c : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  for (const std::size_t size :
       {std::size_t{1023}, std::size_t{1024}, std::size_t{1025}, std::size_t{1088},
        std::size_t{1089}, std::size_t{4096}, std::size_t{65535}, std::size_t{65536},
        std::size_t{65537}, std::size_t{1} << 20}) {
    const std::string_view text = std::string_view(data).substr(0, size);
    const bt::sha3_256_digest one_shot = bt::sha3_256(text);
    for (const std::size_t chunk :
         {std::size_t{7}, std::size_t{136}, std::size_t{1000}, std::size_t{65536}}) {
      INFO("size " << size << ", chunk " << chunk);
      bt::sha3_256_hasher h;
      for (std::size_t at = 0; at < size; at += chunk) h.update(text.substr(at, chunk));
      CHECK(h.finish() == one_shot);
    }
  }
}
