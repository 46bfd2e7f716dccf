// The requests most dendrite tests send: the example synapses (bt/examples/) with their required
// inputs set.
#pragma once

#include <bt/examples/dummy.hpp>
#include <bt/examples/word_stream.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace bt::test {

/// The subnet template's Dummy synapse asking for `input` (doubled by the example miners).
inline bt::examples::dummy dummy_query(std::int64_t input = 7) {
  bt::examples::dummy q;
  q.dummy_input = input;
  return q;
}

/// The streaming example synapse asking for the words of `text`.
inline bt::examples::word_stream words_query(std::string text) {
  bt::examples::word_stream q;
  q.text = std::move(text);
  return q;
}

}  // namespace bt::test
