#include "report.hpp"

#include <cstdio>
#include <string>

namespace bt::perf {

namespace {
std::string f(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
}  // namespace

double requests_per_second(const ping_run& run) {
  return run.wall_seconds > 0 ? static_cast<double>(run.latency_us.size()) / run.wall_seconds : 0.0;
}

void print_summary(std::ostream& out, const ping_run& run, const summary& s) {
  // The first three lines are the original measurement's output, character for character.
  out << "Number of queries: " << s.count << "\n";
  out << "Average: " << f("%.4f", s.mean / 1e6) << " seconds\n";
  out << "Standard deviation: " << f("%.4f", s.stddev / 1e6) << " seconds\n";
  out << "Latency: p50 " << f("%.1f", s.p50) << " us, p90 " << f("%.1f", s.p90) << " us, p99 "
      << f("%.1f", s.p99) << " us, max " << f("%.1f", s.max) << " us (mean " << f("%.1f", s.mean)
      << " us, stddev " << f("%.1f", s.stddev) << " us)\n";
  out << "Failures: ";
  if (run.failures.empty()) {
    out << "none\n";
  } else {
    bool first = true;
    for (const auto& [status, n] : run.failures) {
      out << (first ? "" : ", ") << status << ": " << n;
      first = false;
    }
    out << "\n";
  }
  if (run.concurrency > 1 || run.wall_seconds > 0) {
    out << "Throughput: " << f("%.0f", requests_per_second(run)) << " requests/s with "
        << run.concurrency << " in flight (" << f("%.2f", run.wall_seconds) << " s wall)\n";
  }
}

void print_baseline(std::ostream& out, const summary& ping, const baseline_figures& b) {
  out << "Baseline: bare Beast HTTP/1.1 keep-alive round trip mean " << f("%.1f", b.bare.mean)
      << " us (p50 " << f("%.1f", b.bare.p50) << " us, p99 " << f("%.1f", b.bare.p99)
      << " us; request " << b.request_bytes << " B, response " << b.response_bytes << " B, "
      << b.bare.count << " round trips)\n";
  out << "Baseline: sr25519 sign " << f("%.1f", b.crypto.sign_us) << " us, verify "
      << f("%.1f", b.crypto.verify_us) << " us (" << b.crypto.message_bytes << "-byte message)\n";
  const double floor = b.floor_us();
  if (b.signed_ping) {
    out << "Floor: " << f("%.1f", floor) << " us = bare_rtt_mean + sign + verify + sign\n";
    out << "ratio = " << f("%.3f", ping.mean / floor) << " (ping_mean / floor; goal <= 1.15)\n";
  } else {
    out << "Floor: " << f("%.1f", floor) << " us = bare_rtt_mean (no crypto)\n";
    out << "ratio = " << f("%.3f", ping.mean / floor)
        << " (ping_mean / bare_rtt_mean; goal <= 1.2)\n";
  }
}

json to_json(const ping_run& run, const summary& s, const baseline_figures* b, const json& extra) {
  json j = json::object();
  j["count"] = s.count;
  j["mean_us"] = s.mean;
  j["stddev_us"] = s.stddev;
  j["p50_us"] = s.p50;
  j["p90_us"] = s.p90;
  j["p99_us"] = s.p99;
  j["max_us"] = s.max;
  json failures = json::object();
  for (const auto& [status, n] : run.failures) failures[std::to_string(status)] = n;
  j["failures"] = std::move(failures);
  if (b) {
    json base = json::object();
    base["bare_rtt_mean_us"] = b->bare.mean;
    base["sign_us"] = b->crypto.sign_us;
    base["verify_us"] = b->crypto.verify_us;
    base["ratio"] = s.mean / b->floor_us();
    base["floor_us"] = b->floor_us();
    base["signed"] = b->signed_ping;
    base["request_bytes"] = b->request_bytes;
    base["response_bytes"] = b->response_bytes;
    j["baseline"] = std::move(base);
  }
  j["concurrency"] = run.concurrency;
  j["wall_seconds"] = run.wall_seconds;
  j["requests_per_s"] = requests_per_second(run);
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

}  // namespace bt::perf
