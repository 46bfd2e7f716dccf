// What bt-ping prints and writes: the seed-format summary (exactly the three lines of the
// original Python measurement), percentiles, failures, the floor comparison and --json.
#pragma once

#include "floor.hpp"
#include "stats.hpp"

#include <bt/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace bt::perf {

/// The outcome of one measured run of calls.
struct ping_run {
  std::vector<double> latency_us;                ///< dendrite.process_time of every call, in µs
  std::map<std::int64_t, std::size_t> failures;  ///< status code (not 200) -> count
  std::size_t concurrency = 1;
  double wall_seconds = 0;  ///< first call start to last call end
};

/// The floor measured in the same run (--baseline).
struct baseline_figures {
  summary bare;  ///< bare Beast round trips, µs
  std::size_t request_bytes = 0;
  std::size_t response_bytes = 0;
  crypto_timings crypto;
  bool signed_ping = true;  ///< false with --no-crypto: the floor is the bare round trip alone
  /// bare + sign + verify + sign when signed, bare alone otherwise.
  double floor_us() const {
    return signed_ping ? bare.mean + crypto.sign_us + crypto.verify_us + crypto.sign_us : bare.mean;
  }
};

/// Prints:
///   Number of queries: N
///   Average: X seconds            (4 decimals, as the original)
///   Standard deviation: Y seconds (4 decimals)
///   Latency: p50 .. us, p90 .. us, p99 .. us, max .. us (mean .. us, stddev .. us)
///   Failures: none | <status>: n, ...
/// plus throughput when concurrency > 1.
void print_summary(std::ostream& out, const ping_run& run, const summary& s);

/// Prints the floor and `ratio = ping_mean / floor` with the goal (1.15 signed, 1.2 no-crypto).
void print_baseline(std::ostream& out, const summary& ping, const baseline_figures& b);

/// {"count","mean_us","stddev_us","p50_us","p90_us","p99_us","max_us","failures":{status:n}}
/// plus "baseline":{"bare_rtt_mean_us","sign_us","verify_us","ratio"} when given, and
/// "concurrency"/"requests_per_s" for concurrent runs. `extra` entries are appended as is.
json to_json(const ping_run& run, const summary& s, const baseline_figures* b,
             const json& extra = json::object());

/// Requests per second of a run (count / wall time), 0 when the wall time is unknown.
double requests_per_second(const ping_run& run);

}  // namespace bt::perf
