// The measured loop of bt-ping: dendrite calls against one axon, sequential (the original
// measurement) or with N callers in flight, for a number of calls or for a bounded time.
#pragma once

#include "report.hpp"

#include <bt/axon_info.hpp>
#include <bt/dendrite.hpp>

#include <chrono>
#include <cstddef>
#include <iosfwd>

namespace bt::perf {

struct drive_options {
  std::size_t count = 10'000;        ///< calls to make (ignored when `duration` is set)
  std::chrono::duration<double> duration{0};  ///< > 0: keep calling until this much time passed
  std::size_t concurrency = 1;       ///< callers in flight at once
  double timeout = 5.0;              ///< seconds, passed to every call
  std::ostream* verbose = nullptr;   ///< per-call lines when set
  bool progress = false;             ///< a progress bar on stdout (for a terminal)
};

/// Runs the calls as coroutines on the dendrite's own executor (no thread hop per call, like
/// Python's single event loop) and waits for them. Each call's latency is the dendrite's
/// `process_time`; a call whose status is not 200 counts as a failure under its status (its
/// time is still recorded, as the original loop did). The synapse sent is a copy of `proto`.
/// Instantiated for bt::synapse and payload_synapse.
template <class T>
ping_run drive(dendrite& d, const axon_info& target, const T& proto, const drive_options& opt);

}  // namespace bt::perf
