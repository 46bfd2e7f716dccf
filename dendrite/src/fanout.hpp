// dendrite::forward and dendrite::forward_mixed (query many axons): one call per target, in the
// dialect it is addressed in, at most options.max_concurrency at a time, completing once all
// have.
#pragma once

#include "call_completion.hpp"
#include "dendrite_state.hpp"

#include <boost/asio/any_completion_handler.hpp>

#include <memory>
#include <vector>

namespace bt::detail {

/// Starts the call of `requests[i]` answering into `slots[i]` (same length; the slots' objects
/// outlive the operation; a synapse request's slot has its `ref`, a plain one its `http`), all
/// with the one deadline `timeout` sets now; `handler` runs once all completed. The handler's
/// cancellation slot cancels every call (queued ones start cancelled).
void start_fanout(const std::shared_ptr<dendrite_state>& st, std::vector<mixed_request> requests,
                  std::vector<mixed_slot> slots, double timeout,
                  boost::asio::any_completion_handler<void()> handler);

}  // namespace bt::detail
