// How a dendrite operation (a single call, a fan-out) completes its caller's handler.
#pragma once

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>

#include <utility>

namespace bt::detail {

/// Completes a type-erased handler on its own executor, keeping that executor's work count up
/// while the operation runs (so a caller's io_context.run() does not return early), and
/// clearing the handler's cancellation slot before it runs (Asio's rule). The slot is cleared on
/// the handler's executor too: a caller that emits the signal there (a strand it bound the
/// handler to) never races the clear, whichever dendrite thread finished the call.
struct dendrite_completion {
  boost::asio::any_completion_handler<void()> handler;
  boost::asio::any_completion_executor work;
  boost::asio::cancellation_slot slot;

  dendrite_completion(boost::asio::any_completion_handler<void()> h,
                      const boost::asio::any_io_executor& fallback)
      : handler(std::move(h)),
        work(boost::asio::prefer(boost::asio::get_associated_executor(handler, fallback),
                                 boost::asio::execution::outstanding_work.tracked)),
        slot(boost::asio::get_associated_cancellation_slot(handler)) {}

  void complete() {
    auto ex = std::move(work);
    boost::asio::dispatch(ex, [h = std::move(handler), s = slot]() mutable {
      if (s.is_connected()) s.clear();
      std::move(h)();
    });
  }
};

}  // namespace bt::detail
