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
#include <utility>
#include <vector>

namespace bt::perf {

/// The outcome of one measured run of calls. Latencies and throughput count successful calls
/// (status 200) only: a failed call's time (often none: a refused connect) is not a service time.
struct ping_run {
  std::size_t calls = 0;                         ///< calls finished, successful or not
  std::vector<double> latency_us;                ///< dendrite.process_time of each 200, in µs
  std::map<std::int64_t, std::size_t> failures;  ///< status code (not 200) -> count
  /// (status, status message) -> count; at most max_failure_kinds distinct messages are kept,
  /// further ones are counted under (status, other_messages) so that per-call text (a nonce in a
  /// 401's message) cannot grow it without bound.
  std::map<std::pair<std::int64_t, std::string>, std::size_t> failure_reasons;
  std::size_t concurrency = 1;
  double wall_seconds = 0;  ///< first call start to last call end

  static constexpr std::size_t max_failure_kinds = 64;
  static constexpr const char* other_messages = "(other messages)";
  /// Counts a failed call under its status and message.
  void add_failure(std::int64_t status, std::string message);
  std::size_t failed() const noexcept { return calls - latency_us.size(); }
};

/// The floor measured in the same run (--baseline).
struct baseline_figures {
  summary bare;  ///< bare Beast round trips, µs
  std::size_t request_bytes = 0;
  std::size_t response_bytes = 0;
  crypto_timings crypto;
  bool signed_ping = true;  ///< false with --no-crypto: the floor is the bare round trip alone
  /// --session: the pings are MAC'd (PROTOCOL 13), so the floor is the bare round trip of the
  /// session-shaped exchange alone (an HMAC costs about a microsecond).
  bool session = false;
  /// --payload N: a hashed field of N bytes each way, whose ratio goal is 2.0 rather than 1.15.
  std::size_t payload_bytes = 0;
  /// bare + sign + verify + sign when signed, bare alone otherwise.
  double floor_us() const {
    return signed_ping && !session ? bare.mean + crypto.sign_us + crypto.verify_us + crypto.sign_us
                                   : bare.mean;
  }
};

/// Prints, with `s` the summary of run.latency_us (the successful calls):
///   Number of queries: N          (every call made, as the original)
///   Average: X seconds            (4 decimals, as the original; over the successful calls)
///   Standard deviation: Y seconds (4 decimals)
///   Latency: p50 .. us, p90 .. us, p99 .. us, max .. us (mean .. us, stddev .. us)
///   Failures: none
/// plus throughput of the successful calls when concurrency > 1 or the wall time is known. When
/// calls failed, the Latency line says how many calls it covers and the failures are listed by
/// kind, most frequent first (at most 10 kinds, messages cut at 200 characters):
///   Failures: F of N calls
///     n x <status> <status message>
/// When no call succeeded there is no figure to give: Average and Standard deviation read
/// "none (no call succeeded)", and the Latency and Throughput lines are left out.
void print_summary(std::ostream& out, const ping_run& run, const summary& s);

/// Prints the floor and `ratio = ping_mean / floor` with the goal (1.15 signed, 1.2 no-crypto).
void print_baseline(std::ostream& out, const summary& ping, const baseline_figures& b);

/// {"count","successes","mean_us","stddev_us","p50_us","p90_us","p99_us","max_us",
/// "failures":{status:n},"failure_reasons":[{"status","message","count"}]} ("count" is every
/// call; the figures cover the successful ones and are null when there are none) plus
/// "baseline":{"bare_rtt_mean_us","sign_us","verify_us","ratio"} when given, and
/// "concurrency"/"requests_per_s" (successful calls per second). `extra` entries are appended as
/// is.
json to_json(const ping_run& run, const summary& s, const baseline_figures* b,
             const json& extra = json::object());

/// Successful requests per second of a run (successes / wall time), 0 when the wall time is
/// unknown.
double requests_per_second(const ping_run& run);

/// One figure printed with a printf format of one double ("%.1f"), for the reports.
std::string format_figure(const char* format, double v);

}  // namespace bt::perf
