// Internals of dendrite::call_stream (PROTOCOL 7): the type-erased stream parser a streaming call
// carries (the merge that forms the final synapse of a streamed 200, apply_stream_headers, is in
// the dendrite's private codec header). Not a stable interface.
#pragma once

#include <bt/dynamic_synapse.hpp>
#include <bt/streaming_synapse.hpp>
#include <bt/synapse.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace bt::detail {

/// How one streaming call turns response body bytes into items: the synapse type's parser
/// (bt::streaming_synapse) bound to the caller's on_item. Owned by the call; used only on the
/// call's executor.
struct stream_sink {
  stream_emit emit;  ///< the caller's on_item
  /// Body bytes in arrival order (any split). Null: the bytes are the items (dynamic synapses).
  void (*feed)(synapse& s, std::string_view bytes, const stream_emit& emit) = nullptr;
  /// End of a complete body. Null: nothing is kept between reads.
  void (*finish)(synapse& s, const stream_emit& emit) = nullptr;
  std::size_t bytes = 0;  ///< body bytes received so far
  std::size_t items = 0;  ///< items delivered so far

  void push(synapse& s, std::string_view b) {
    bytes += b.size();
    if (feed)
      feed(s, b, counted_emit());
    else if (!b.empty())
      counted_emit()(b);
  }
  void end(synapse& s) {
    if (finish) finish(s, counted_emit());
  }

 private:
  stream_emit counted_emit() {
    return [this](std::string_view item) {
      ++items;
      if (emit) emit(item);
    };
  }
};

/// A sink for T: its process_stream_bytes/finish_stream when T is a bt::streaming_synapse, the
/// raw body bytes as items otherwise (bt::dynamic_synapse has no parser). `on_item` may be
/// move-only; it is kept in a shared_ptr so stream_emit (a std::function) can copy it.
template <class T, class OnItem>
stream_sink make_stream_sink(OnItem on_item) {
  stream_sink s;
  auto f = std::make_shared<std::decay_t<OnItem>>(std::move(on_item));
  s.emit = [f](std::string_view item) { (*f)(item); };
  if constexpr (streaming_synapse<T>) {
    s.feed = [](synapse& syn, std::string_view bytes, const stream_emit& emit) {
      static_cast<T&>(syn).process_stream_bytes(bytes, emit);
    };
    s.finish = [](synapse& syn, const stream_emit& emit) {
      static_cast<T&>(syn).finish_stream(emit);
    };
  } else {
    static_assert(std::is_base_of_v<dynamic_synapse, T>,
                  "call_stream needs a bt::streaming_synapse type or bt::dynamic_synapse");
  }
  return s;
}

}  // namespace bt::detail
