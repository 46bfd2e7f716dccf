// Streaming synapses (Python's bittensor.StreamingSynapse, PROTOCOL 7).
//
// A streaming type is an ordinary synapse (same fields, route, request, signature and headers)
// whose answer is a byte stream instead of a JSON body: HTTP 200, `content-type:
// text/event-stream`, chunked, the bt headers fixed before the first chunk. What the bytes mean
// is a per-subnet contract, so the type itself says how the validator's side turns them into
// items and into the final synapse (Python's process_streaming_response / extract_response_json):
//
//   struct token_stream : bt::synapse {
//     std::string prompt;                       // required, hashed
//     std::vector<std::string> tokens;          // filled by the validator's side while reading
//
//     static bt::synapse_schema<token_stream> schema() { ... as any synapse ... }
//
//     // Body bytes in arrival order, split anywhere (TCP reads, HTTP chunks and proxies do not
//     // preserve the miner's writes). Emits each complete item; may keep a partial one.
//     void process_stream_bytes(std::string_view bytes, const bt::stream_emit& emit);
//     // End of the body: emit what is left. The fields set so far form the final synapse,
//     // which the dendrite then merges with the response headers (PROTOCOL 6.4).
//     void finish_stream(const bt::stream_emit& emit);
//   };
//
// The miner's side writes bytes with the axon's stream writer (axon/include/bt/stream_writer.hpp);
// the validator's side reads them with dendrite::call_stream.
#pragma once

#include <bt/synapse.hpp>

#include <concepts>
#include <functional>
#include <string_view>

namespace bt {

/// Receives one parsed item of a stream. The view is valid only during the call.
using stream_emit = std::function<void(std::string_view item)>;

/// A synapse type whose responses are streamed (see the top of this file).
template <class T>
concept streaming_synapse = std::derived_from<T, synapse> &&
    requires(T& s, std::string_view bytes, const stream_emit& emit) {
  { s.process_stream_bytes(bytes, emit) } -> std::same_as<void>;
  { s.finish_stream(emit) } -> std::same_as<void>;
};

}  // namespace bt
