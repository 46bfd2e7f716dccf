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
  for (std::size_t split : {0u, 1u, 135u, 136u, 137u, 299u}) {
    bt::sha3_256_hasher h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    CHECK(h.finish() == bt::sha3_256(text));
  }
}
