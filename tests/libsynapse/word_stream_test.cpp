// bt::examples::word_stream's miner-side walk: next_word finds the words of `text` one at a time
// (what bt-axon streams), split_words collects the same words at once. Words are separated by
// runs of ASCII whitespace; leading and trailing whitespace yield nothing.
#include <bt/examples/word_stream.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

using bt::examples::word_stream;

namespace {

/// The words as next_word yields them, checking that `pos` only moves forward and stays in range.
std::vector<std::string> walk(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t before = pos;
    const auto word = word_stream::next_word(text, pos);
    CHECK(pos >= before);
    CHECK(pos <= text.size());
    if (!word) break;
    CHECK_FALSE(word->empty());
    CHECK(word->data() >= text.data());  // a view into `text`, not a copy
    CHECK(word->data() + word->size() <= text.data() + text.size());
    out.emplace_back(*word);
  }
  CHECK(pos == text.size());
  CHECK_FALSE(word_stream::next_word(text, pos));  // the end stays the end
  return out;
}

std::vector<std::string> strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

}  // namespace

TEST_CASE("word_stream::next_word walks the words of a text lazily", "[word_stream]") {
  using v = std::vector<std::string>;
  CHECK(walk("").empty());
  CHECK(walk(" \t\n\v\f\r").empty());
  CHECK(walk("one") == v{"one"});
  CHECK(walk("  hello streaming  world\n") == v{"hello", "streaming", "world"});
  CHECK(walk("a\tb\nc\vd\fe\rf g") == v{"a", "b", "c", "d", "e", "f", "g"});
  CHECK(walk(std::string_view("x\0y z", 5)) == v{std::string("x\0y", 3), "z"});   // NUL is no space
  CHECK(walk("caf\xc3\xa9 \xe2\x80\x83x") == v{"caf\xc3\xa9", "\xe2\x80\x83x"});  // ASCII only

  SECTION("split_words returns the same words") {
    for (const std::string_view text :
         {"", "   ", "one", "  hello streaming  world\n", "a\tb\nc\vd\fe\rf g", "a a a a "})
      CHECK(strings(word_stream::split_words(text)) == walk(text));
  }
  SECTION("a position past the end, or inside trailing space, finds nothing") {
    std::size_t pos = 100;
    CHECK_FALSE(word_stream::next_word("abc", pos));
    CHECK(pos == 3);
    pos = 3;
    CHECK_FALSE(word_stream::next_word("abc   ", pos));
    CHECK(pos == 6);
  }
  SECTION("a position inside a word starts at that byte") {
    std::size_t pos = 1;
    CHECK(word_stream::next_word("hello world", pos) == std::string_view("ello"));
    CHECK(pos == 5);
  }
}
