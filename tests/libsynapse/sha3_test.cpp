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
