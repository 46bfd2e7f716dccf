// What bt-ping prints and writes: the seed-format summary (exactly the three lines of the
// original Python measurement), percentiles, failures, the floor comparison and --json.
#pragma once

#include "floor.hpp"
#include "proc.hpp"
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
  /// CPU time (user, system) the calls cost over the measured section, both ends where bt-ping
  /// can see them (`cpu_scope` says whose); unset when not measured.
  std::optional<cpu_times> cpu;
  std::string cpu_scope;
  /// Whether `cpu` covers both ends (the in-process axon, or a spawned bt-axon read from /proc),
  /// so that it compares with the bare round trip's; not for a --target axon.
  bool cpu_both_ends = false;

  static constexpr std::size_t max_failure_kinds = 64;
  static constexpr const char* other_messages = "(other messages)";
  /// Counts a failed call under its status and message.
  void add_failure(std::int64_t status, std::string message);
  std::size_t failed() const noexcept { return calls - latency_us.size(); }
  /// CPU per call (every call made: a failed one costs CPU too), µs; 0 when not measured.
  double cpu_us_per_call() const;
  /// Appends another run's calls, latencies, failures, wall time and CPU (alternated rounds).
  void merge(const ping_run& other);
};

/// --rounds N: the means of N alternated floor and ping rounds (floor first), in µs.
struct alternated_rounds {
  std::vector<double> floor_means;  ///< bare round trip mean of each floor round
  std::vector<double> ping_means;   ///< ping mean of each ping round
  std::size_t calls_per_round = 0;
};
/// (max - min) / min of a series of round means: how far apart the rounds were.
double spread(const std::vector<double>& means);

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
  /// CPU time of one bare round trip (both ends, this process), µs.
  cpu_times bare_cpu_us;
  /// Several alternated rounds (--rounds): `bare` is then the best floor round's and the ping
  /// summary given with these figures the best ping round's.
  alternated_rounds rounds;
  /// The crypto a signed (not session) ping adds to the bare exchange: sign + verify + sign.
  double crypto_us() const {
    return signed_ping && !session ? crypto.sign_us + crypto.verify_us + crypto.sign_us : 0.0;
  }
  /// bare + sign + verify + sign when signed, bare alone otherwise.
  double floor_us() const { return bare.mean + crypto_us(); }
  /// The same for CPU per request: the bare round trip's CPU plus the crypto's (itself CPU time).
  double cpu_floor_us() const { return bare_cpu_us.user + bare_cpu_us.sys + crypto_us(); }
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

/// Prints the floor and `ratio = ping_mean / floor` with the goal (1.15 signed, 1.2 no-crypto),
/// then the verdict line `ratio goal met|missed: R <= G` (with several rounds followed by
/// ` (best of N alternated rounds; spread ...)`), then, when `run`'s CPU covers both ends, the
/// CPU per request against the bare round trip's (`cpu ratio = ...`, goal 1.15 without crypto,
/// 1.25 with sessions).
void print_baseline(std::ostream& out, const summary& ping, const baseline_figures& b,
                    const ping_run& run);

/// {"count","successes","mean_us","stddev_us","p50_us","p90_us","p99_us","max_us",
/// "failures":{status:n},"failure_reasons":[{"status","message","count"}]} ("count" is every
/// call; the figures cover the successful ones and are null when there are none) plus
/// "baseline":{"bare_rtt_mean_us","sign_us","verify_us","ratio", "bare_rtt_cpu_us",
/// "cpu_floor_us","cpu_ratio","cpu_ratio_goal","rounds",...} when given,
/// "cpu_us_per_request"/"cpu_user_us_per_request"/"cpu_sys_us_per_request"/"cpu_scope" when
/// measured, and "concurrency"/"requests_per_s" (successful calls per second). `ping` is the
/// summary the ratio uses (the best round's with several rounds, else `s`). `extra` entries are
/// appended as is.
json to_json(const ping_run& run, const summary& s, const baseline_figures* b,
             const json& extra = json::object(), const summary* ping = nullptr);

/// Successful requests per second of a run (successes / wall time), 0 when the wall time is
/// unknown.
double requests_per_second(const ping_run& run);

/// One figure printed with a printf format of one double ("%.1f"), for the reports.
std::string format_figure(const char* format, double v);

}  // namespace bt::perf
