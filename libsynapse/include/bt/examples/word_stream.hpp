// bt::examples::word_stream: the streaming example synapse served by bt-axon and queried by
// `bt-dendrite query --stream` (issue 7). In Python it would be
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

#include <string>
#include <string_view>
#include <vector>

namespace bt::examples {

struct word_stream : bt::synapse {
  std::string text;                 ///< required and hashed: the words to stream back
  std::vector<std::string> words;   ///< the words received so far (validator side)

  static bt::synapse_schema<word_stream> schema() {
    return {.name = "WordStream",
            .fields = {bt::field<&word_stream::text>("text", bt::required),
                       bt::field<&word_stream::words>("words")},
            .hash_fields = {"text"}};
  }

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

  /// The words of `text` as the miner streams them.
  static std::vector<std::string_view> split_words(std::string_view text) {
    std::vector<std::string_view> out;
    constexpr std::string_view space = " \t\n\v\f\r";
    for (std::size_t pos = text.find_first_not_of(space); pos != std::string_view::npos;) {
      const std::size_t end = text.find_first_of(space, pos);
      out.push_back(text.substr(pos, end == std::string_view::npos ? end : end - pos));
      pos = end == std::string_view::npos ? end : text.find_first_not_of(space, end);
    }
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
