// bt::examples::word_stream: the streaming example synapse served by bt-axon and queried by
// `bt-dendrite query --stream`. In Python it would be
//
//   class WordStream(bt.StreamingSynapse):
//       text: str                                  # required
//       words: typing.List[str] = []               # filled by the validator while reading
//       required_hash_fields = ["text"]
//
// Chunk contract: the miner sends each word of `text` (split on ASCII whitespace) as one chunk,
// the word's bytes followed by "\n". The newline, not the HTTP chunk boundary, ends an item, so
// a reader that sees the bytes split differently (TCP reads, proxies, aiohttp's iter_any) still
// recovers the same words.
#pragma once

#include <bt/streaming_synapse.hpp>
#include <bt/synapse.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bt::examples {

struct word_stream : bt::synapse {
  std::string text;                ///< required and hashed: the words to stream back
  std::vector<std::string> words;  ///< the words received so far (validator side)

  BT_SYNAPSE(word_stream, "WordStream", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(words))

  /// Splits on '\n'; a word split across reads is kept in `partial_` until its newline arrives.
  void process_stream_bytes(std::string_view bytes, const bt::stream_emit& emit) {
    for (std::size_t nl; (nl = bytes.find('\n')) != std::string_view::npos;) {
      partial_.append(bytes.substr(0, nl));
      words.push_back(std::move(partial_));
      partial_.clear();
      emit(words.back());
      bytes.remove_prefix(nl + 1);
    }
    partial_.append(bytes);
  }

  /// A last word without its newline (a truncated stream) still counts.
  void finish_stream(const bt::stream_emit& emit) {
    if (partial_.empty()) return;
    words.push_back(std::move(partial_));
    partial_.clear();
    emit(words.back());
  }

  /// The ASCII whitespace that separates words.
  static constexpr std::string_view word_separators = " \t\n\v\f\r";

  /// The next word of `text` at or after byte `pos` (a view into `text`), and `pos` moved just
  /// past it; nullopt (and `pos` == text.size()) when no word is left. Walks the text lazily,
  /// O(1) memory: a miner streams with it without an index of every word, whose 16 bytes per
  /// view would cost up to 8x the body for one-letter words. Start with pos = 0.
  static std::optional<std::string_view> next_word(std::string_view text, std::size_t& pos) {
    const std::size_t begin =
        pos < text.size() ? text.find_first_not_of(word_separators, pos) : std::string_view::npos;
    if (begin == std::string_view::npos) {
      pos = text.size();
      return std::nullopt;
    }
    const std::size_t end = std::min(text.find_first_of(word_separators, begin), text.size());
    pos = end;
    return text.substr(begin, end - begin);
  }

  /// The words of `text` as the miner streams them, all at once (tests and small texts; a
  /// miner walks them with next_word instead).
  static std::vector<std::string_view> split_words(std::string_view text) {
    std::vector<std::string_view> out;
    for (std::size_t pos = 0; const auto word = next_word(text, pos);) out.push_back(*word);
    return out;
  }

  friend bool operator==(const word_stream& a, const word_stream& b) {
    return static_cast<const bt::synapse&>(a) == static_cast<const bt::synapse&>(b) &&
           a.text == b.text && a.words == b.words;
  }

 private:
  std::string partial_;  ///< parser state, not a field
};

static_assert(bt::streaming_synapse<word_stream>);

}  // namespace bt::examples
