// dendrite::forward (query many axons): one synapse call per axon, at most
// options.max_concurrency at a time, completing once all have.
#pragma once

#include "call_completion.hpp"
#include "dendrite_state.hpp"

#include <boost/asio/any_completion_handler.hpp>

#include <memory>
#include <vector>

namespace bt::detail {

/// Starts the calls of `refs[i]` to `axons[i]` (same length; the objects outlive the
/// operation), all with the one deadline `timeout` sets now; `handler` runs once all completed.
/// The handler's cancellation slot cancels every call (queued ones start cancelled).
void start_fanout(const std::shared_ptr<dendrite_state>& st, std::vector<axon_info> axons,
                  std::vector<synapse_ref> refs, double timeout,
                  boost::asio::any_completion_handler<void()> handler);

}  // namespace bt::detail
