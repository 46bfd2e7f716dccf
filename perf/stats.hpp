// Summary statistics and a latency histogram for the ping harness (bt-ping).
// Samples are microseconds throughout; the seed-format lines convert to seconds when printing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace bt::perf {

/// What bt-ping reports about a set of latencies.
struct summary {
  std::size_t count = 0;
  double mean = 0;    ///< arithmetic mean
  double stddev = 0;  ///< population standard deviation (numpy.std's default, ddof=0)
  double min = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

/// Computes the summary; an empty input gives an all-zero summary.
/// Percentiles use linear interpolation between closest ranks (numpy.percentile's default).
summary summarize(std::vector<double> samples);

/// The q-th percentile (0..100) of an ascending-sorted, non-empty vector.
double percentile_sorted(const std::vector<double>& sorted, double q);

/// A latency histogram of `samples` (µs) as a self-contained SVG document: log-spaced bins from
/// the minimum to the p99.9 value (the rest counted in a final "≥" bin), markers at p50/p90/p99,
/// and a caption. No external tools or fonts are needed to view it.
std::string histogram_svg(const std::vector<double>& samples, const std::string& title);

}  // namespace bt::perf
