// Internals of bt::dendrite's public templates: the type-erased view of a caller's synapse and
// the completion wrapper that hands a typed result back through any_completion_handler. Not a
// stable interface.
#pragma once

#include <bt/dynamic_synapse.hpp>
#include <bt/synapse.hpp>

#include <boost/asio/associator.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace bt::detail {

/// Owning pointer to a synapse of some derived type (synapse has no virtual destructor, so the
/// deleter is the derived type's).
using owned_synapse = std::unique_ptr<synapse, void (*)(synapse*)>;

/// A caller's synapse seen through its descriptor. `object` must outlive the call.
struct synapse_ref {
  synapse* object = nullptr;
  const synapse_descriptor* descriptor = nullptr;
  /// A default object of the same type as `like`, for validating a response body into it
  /// before anything is copied into `object`.
  owned_synapse (*make_blank)(const synapse& like) = nullptr;
};

template <class T>
owned_synapse make_blank_of(const synapse& like) {
  if constexpr (std::is_base_of_v<dynamic_synapse, T>) {
    return owned_synapse(new T(static_cast<const T&>(like).type),
                         [](synapse* p) { delete static_cast<T*>(p); });
  } else {
    (void)like;
    return owned_synapse(new T(), [](synapse* p) { delete static_cast<T*>(p); });
  }
}

template <class T>
synapse_ref make_synapse_ref(T& s) {
  static_assert(std::is_base_of_v<synapse, T>, "a synapse type derives from bt::synapse");
  static_assert(std::is_default_constructible_v<T> || std::is_base_of_v<dynamic_synapse, T>,
                "a synapse type used with the dendrite must be default-constructible");
  return synapse_ref{&s, &descriptor_for(s), &make_blank_of<T>};
}

/// Completion wrapper: owns the typed result while the type-erased operation runs and passes it
/// to the user's handler on completion. Forwards every associated characteristic (executor,
/// allocator, cancellation slot) of the wrapped handler, so coroutines resume where they were.
template <class Result, class Handler>
struct result_handler {
  Handler handler_;
  std::unique_ptr<Result> result_;

  void operator()() {
    Result r = std::move(*result_);
    result_.reset();
    std::move(handler_)(std::move(r));
  }
};

}  // namespace bt::detail

// Forward every associator of the wrapped handler (Boost.Asio 1.81 `associator`), as
// executor_binder does.
template <template <class, class> class Associator, class Result, class Handler,
          class DefaultCandidate>
struct boost::asio::associator<Associator, bt::detail::result_handler<Result, Handler>,
                               DefaultCandidate> {
  using type = typename Associator<Handler, DefaultCandidate>::type;

  static type get(const bt::detail::result_handler<Result, Handler>& h) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.handler_);
  }
  static auto get(const bt::detail::result_handler<Result, Handler>& h,
                  const DefaultCandidate& c) noexcept
      -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler_, c)) {
    return Associator<Handler, DefaultCandidate>::get(h.handler_, c);
  }
};
