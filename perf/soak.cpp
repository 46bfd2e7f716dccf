// bt-soak: load and soak test. Starts `bt-axon --test-routes` on loopback as a
// separate process and drives it with N concurrent dendrites (one validator each: own uuid, one
// call in flight, no pause between calls) for a bounded time, sampling the axon's resident memory
// and open descriptors every second. Prints, per window (default 5 s): calls served, p50/p99
// latency, RSS and descriptors; then the totals, errors by status, RSS after warm-up vs at the end
// and descriptors before vs after. Run through scripts/soak [seconds].
//
// The mix: mostly Dummy calls; with --mix (default) also 1% Big calls (a 256 KiB answer, so that
// buffers grow and shrink) and 1% Throw calls (the handler throws: a deliberate 500, counted
// apart). Any other non-200 is unexpected.
//
// Exit status 0 when: no unexpected status, RSS at the end within --rss-tolerance (10%) of RSS
// at the end of the warm-up (--warmup, default a quarter of the run: allocator arenas of the
// axon's threads and per-connection buffers reach their working size in the first seconds), the
// descriptor count back to its starting value once the dendrites are gone, and SIGTERM stops the
// axon with status 0. Otherwise 1 (2: usage).
//
// The starting descriptor count is taken after one round of calls from every caller (then closed):
// each I/O thread's io_context opens its epoll reactor (eventfd, epoll, timerfd: 3 descriptors)
// on its first connection and keeps it for life, which is not a leak.
#include "proc.hpp"

#include <bt/dendrite.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/json.hpp>

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct config {
  double seconds = 60;
  std::size_t callers = 16;
  double window = 5;
  std::string axon_binary;
  std::size_t axon_workers = 4;
  std::size_t axon_io_threads = 2;
  bool mix = true;
  double rss_tolerance = 0.10;
  double warmup = 0;  // 0: a quarter of the run, at least one window, at most 60 s
  double timeout = 5.0;
};

std::string find_axon(const config& cfg) {
  if (!cfg.axon_binary.empty()) return cfg.axon_binary;
#ifdef BT_AXON_BINARY
  if (std::filesystem::exists(BT_AXON_BINARY)) return BT_AXON_BINARY;
#endif
  return "bt-axon";
}

std::size_t fd_count(pid_t pid) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

/// What each open descriptor of `pid` points to ("socket:[123]", "anon_inode:[eventfd]", ...),
/// by descriptor number; printed when the count does not come back, to tell what was left open.
std::map<int, std::string> fd_targets(pid_t pid) {
  std::map<int, std::string> out;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code lec;
    const auto target = std::filesystem::read_symlink(it->path(), lec);
    out[std::atoi(it->path().filename().c_str())] = lec ? "?" : target.string();
  }
  return out;
}

double mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

/// What every caller records; merged under a mutex once per call (cheap next to a signed call).
struct shared_results {
  std::mutex mu;
  std::vector<std::vector<double>> window_latency_us;  // successful Dummy calls, per window
  std::vector<std::uint64_t> window_calls;             // all calls completed, per window
  std::map<int, std::uint64_t> by_status;              // every call, by dendrite status
  std::uint64_t deliberate = 0;                        // Throw calls answered 500
  std::uint64_t unexpected = 0;
  std::map<std::string, std::uint64_t> unexpected_messages;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  config cfg;
  CLI::App app{"bt-soak: N dendrites at full rate against one bt-axon process, for a bounded time"};
  app.add_option("seconds,--seconds", cfg.seconds, "How long to drive the load")
      ->check(CLI::Range(5.0, 86400.0))
      ->capture_default_str();
  app.add_option("--callers", cfg.callers, "Concurrent dendrites (one call in flight each)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--window", cfg.window, "Seconds per reporting window (p99 over time)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  app.add_option("--axon-binary", cfg.axon_binary, "bt-axon to start (default: the one built)");
  app.add_option("--axon-workers", cfg.axon_workers, "bt-axon --axon.max_workers")
      ->capture_default_str();
  app.add_option("--axon-io-threads", cfg.axon_io_threads, "bt-axon --axon.io_threads")
      ->capture_default_str();
  app.add_flag("--mix,!--no-mix", cfg.mix, "Add 1% Big (256 KiB answers) and 1% Throw (500) calls")
      ->capture_default_str();
  app.add_option("--rss-tolerance", cfg.rss_tolerance,
                 "Allowed RSS growth from the end of the warm-up to the end")
      ->capture_default_str();
  app.add_option("--warmup", cfg.warmup,
                 "Seconds of load before the RSS baseline (default: a quarter of the run, at "
                 "least one window, at most 60)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  bt::perf::raise_fd_limit(4096);
  const std::string axon_exe = find_axon(cfg);
  std::vector<std::string> args = {axon_exe,
                                   "--uri",
                                   "//Bob",
                                   "--axon.ip",
                                   "127.0.0.1",
                                   "--axon.port",
                                   "0",
                                   "--test-routes",
                                   "--axon.max_workers",
                                   std::to_string(cfg.axon_workers),
                                   "--axon.io_threads",
                                   std::to_string(cfg.axon_io_threads)};
  auto axon = bt::perf::child_process::spawn(args, /*quiet_stderr=*/true);
  const auto line = axon.read_line(std::chrono::seconds(20));
  const auto info_json = line ? bt::json::parse(*line, nullptr, false) : bt::json();
  if (!info_json.is_object()) {
    std::cerr << "bt-soak: " << axon_exe << " did not print its AxonInfo line\n";
    return 1;
  }
  bt::axon_info target;
  target.ip = "127.0.0.1";
  target.port = info_json.at("port").get<std::uint16_t>();
  target.hotkey = info_json.at("hotkey").get<std::string>();
  const pid_t pid = axon.pid();

  bt::error err;
  const auto big_type = bt::make_dynamic_descriptor(
      "Big", {{"size", bt::field_kind::required}, {"data"}}, {"size"}, err);
  const auto throw_type = bt::make_dynamic_descriptor("Throw", {}, {}, err);
  if (err) {
    std::cerr << "bt-soak: " << err.message() << "\n";
    return 1;
  }

  if (cfg.warmup <= 0) cfg.warmup = std::clamp(cfg.seconds / 4, cfg.window, 60.0);
  cfg.warmup = std::min(cfg.warmup, cfg.seconds);

  // One call per caller on its own connection, all connections open at once (so that every I/O
  // thread has had one), then closed; the descriptor baseline is taken once the count is stable.
  {
    std::vector<std::unique_ptr<bt::dendrite>> first;
    std::vector<std::thread> threads;
    const bt::keypair key = bt::keypair::from_uri("//Alice");
    for (std::size_t i = 0; i < cfg.callers; ++i)
      first.push_back(std::make_unique<bt::dendrite>(key));
    for (std::size_t i = 0; i < cfg.callers; ++i)
      threads.emplace_back([&, i] {
        bt::examples::dummy q;
        q.dummy_input = 1;
        (void)first[i]->call(target, q, cfg.timeout);
      });
    for (auto& t : threads) t.join();
  }
  std::size_t fds_start = fd_count(pid);
  for (int stable = 0, i = 0; stable < 20 && i < 500; ++i) {  // 200 ms without change, 5 s at most
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::size_t now = fd_count(pid);
    stable = now == fds_start ? stable + 1 : 0;
    fds_start = now;
  }
  const auto fd_targets_start = fd_targets(pid);
  const std::uint64_t rss_idle = bt::perf::process_rss_bytes(pid).value_or(0);
  const std::size_t windows =
      static_cast<std::size_t>(std::max(1.0, std::ceil(cfg.seconds / cfg.window)));

  std::cout << fmt::format(
      "bt-soak: {} callers at full rate for {:.0f} s against {} (pid {}, port {}, "
      "{} workers, {} I/O threads){}\n",
      cfg.callers, cfg.seconds, axon_exe, pid, target.port, cfg.axon_workers, cfg.axon_io_threads,
      cfg.mix ? ", mix: 1% Big 256 KiB, 1% Throw" : "");
  std::cout << fmt::format(
      "axon idle (after one call per caller): RSS {:.1f} MiB, {} open descriptors; RSS baseline "
      "after {:.0f} s of load\n",
      mib(rss_idle), fds_start, cfg.warmup);

  shared_results res;
  res.window_latency_us.resize(windows);
  res.window_calls.resize(windows, 0);
  const auto t0 = clock_type::now();
  const auto end = t0 + std::chrono::duration_cast<clock_type::duration>(
                            std::chrono::duration<double>(cfg.seconds));
  auto window_of = [&](clock_type::time_point t) {
    const double s = std::chrono::duration<double>(t - t0).count();
    return std::min(windows - 1, static_cast<std::size_t>(s / cfg.window));
  };

  // ---- sampler: RSS and descriptors once a second ----
  struct sample {
    double t;
    std::uint64_t rss;
    std::size_t fds;
  };
  std::vector<sample> samples;
  std::atomic<bool> load_done{false};
  std::thread sampler([&] {
    auto next = t0;
    while (!load_done.load()) {
      next += std::chrono::seconds(1);
      std::this_thread::sleep_until(next);
      if (load_done.load()) break;
      samples.push_back({std::chrono::duration<double>(clock_type::now() - t0).count(),
                         bt::perf::process_rss_bytes(pid).value_or(0), fd_count(pid)});
    }
  });

  // ---- callers ----
  {
    std::vector<std::unique_ptr<bt::dendrite>> dendrites;
    const bt::keypair key = bt::keypair::from_uri("//Alice");
    for (std::size_t i = 0; i < cfg.callers; ++i)
      dendrites.push_back(std::make_unique<bt::dendrite>(key));
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < cfg.callers; ++i) {
      threads.emplace_back([&, i] {
        bt::dendrite& d = *dendrites[i];
        std::uint64_t n = i * 7;  // spread the mix over callers
        while (clock_type::now() < end) {
          ++n;
          const bool is_throw = cfg.mix && n % 100 == 0;
          const bool is_big = cfg.mix && n % 100 == 50;
          int status = 0;
          std::string message;
          const auto c0 = clock_type::now();
          if (is_throw) {
            const auto r = d.call(target, bt::dynamic_synapse(throw_type), cfg.timeout);
            status = r.dendrite.status_code.value_or(0);
            message = r.dendrite.status_message.value_or("");
          } else if (is_big) {
            bt::dynamic_synapse s(big_type);
            *s.get("size") = 256 * 1024;
            const auto r = d.call(target, s, cfg.timeout);
            status = r.dendrite.status_code.value_or(0);
            message = r.dendrite.status_message.value_or("");
            const bt::json* data = r.get("data");
            if (status == 200 && (!data || !data->is_string() ||
                                  data->get_ref<const std::string&>().size() != 256 * 1024)) {
              status = -1;
              message = "Big answer of the wrong size";
            }
          } else {
            bt::examples::dummy q;
            q.dummy_input = static_cast<std::int64_t>(n);
            const auto r = d.call(target, q, cfg.timeout);
            status = r.dendrite.status_code.value_or(0);
            message = r.dendrite.status_message.value_or("");
            if (status == 200 && r.dummy_output != 2 * q.dummy_input) {
              status = -1;
              message = "wrong dummy_output";
            }
          }
          const auto c1 = clock_type::now();
          const double us = std::chrono::duration<double, std::micro>(c1 - c0).count();
          const std::size_t w = window_of(c1);
          std::lock_guard lk(res.mu);
          ++res.by_status[status];
          ++res.window_calls[w];
          if (is_throw && status == 500) {
            ++res.deliberate;
          } else if (status != 200) {
            ++res.unexpected;
            ++res.unexpected_messages[fmt::format("{} {}", status, message)];
          } else if (!is_big) {
            res.window_latency_us[w].push_back(us);
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    dendrites.clear();  // closes every pooled connection
  }
  load_done = true;
  sampler.join();
  const double elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();

  // ---- per-window report ----
  std::cout << fmt::format("{:>8} {:>9} {:>9} {:>10} {:>10} {:>10} {:>5}\n", "window", "calls",
                           "calls/s", "p50 us", "p99 us", "RSS MiB", "fds");
  double worst_p99 = 0;
  for (std::size_t w = 0; w < windows; ++w) {
    const double from = static_cast<double>(w) * cfg.window;
    const double to = std::min(cfg.seconds, from + cfg.window);
    std::optional<sample> last;
    for (const auto& s : samples)
      if (s.t <= to + 0.5) last = s;
    const double p99 = percentile(res.window_latency_us[w], 0.99);
    worst_p99 = std::max(worst_p99, p99);
    std::cout << fmt::format(
        "{:>3.0f}-{:<4.0f} {:>9} {:>9.0f} {:>10.0f} {:>10.0f} {:>10.1f} {:>5}\n", from, to,
        res.window_calls[w], static_cast<double>(res.window_calls[w]) / (to - from),
        percentile(res.window_latency_us[w], 0.50), p99, last ? mib(last->rss) : 0.0,
        last ? last->fds : 0);
  }

  // ---- RSS: at the end of the warm-up vs the last sample under load ----
  std::uint64_t rss_warm = 0, rss_end = 0, rss_peak = 0;
  for (const auto& s : samples) {
    if (rss_warm == 0 && s.t >= cfg.warmup) rss_warm = s.rss;
    rss_end = s.rss;
    rss_peak = std::max(rss_peak, s.rss);
  }
  if (rss_warm == 0) rss_warm = rss_end;

  // ---- descriptors: back to the starting count once the dendrites are gone ----
  std::size_t fds_end = fd_count(pid);
  for (int i = 0; i < 500 && fds_end != fds_start; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    fds_end = fd_count(pid);
  }
  if (fds_end != fds_start) {
    const auto now = fd_targets(pid);
    for (const auto& [fd, target] : now) {
      const auto was = fd_targets_start.find(fd);
      if (was == fd_targets_start.end() || was->second != target)
        std::cout << fmt::format("axon descriptor {} -> {} (not open at the start)\n", fd, target);
    }
  }
  const int axon_exit = axon.stop(std::chrono::milliseconds(15000));

  std::uint64_t total = 0;
  for (const auto& [status, n] : res.by_status) total += n;
  std::cout << fmt::format("\ncalls: {} in {:.1f} s ({:.0f}/s), worst window p99 {:.0f} us\n",
                           total, elapsed, static_cast<double>(total) / elapsed, worst_p99);
  std::cout << "by status:";
  for (const auto& [status, n] : res.by_status) std::cout << fmt::format(" {}={}", status, n);
  std::cout << fmt::format("\ndeliberate errors (Throw -> 500): {}, unexpected: {}\n",
                           res.deliberate, res.unexpected);
  for (const auto& [m, n] : res.unexpected_messages)
    std::cout << fmt::format("  unexpected x{}: {}\n", n, m);
  const double growth = rss_warm ? (static_cast<double>(rss_end) - static_cast<double>(rss_warm)) /
                                       static_cast<double>(rss_warm)
                                 : 0.0;
  std::cout << fmt::format(
      "axon RSS: idle {:.1f} MiB, after warm-up ({:.0f} s) {:.1f} MiB, end {:.1f} MiB, peak {:.1f} "
      "MiB: {:+.1f}% from warm-up (limit {:.0f}%)\n",
      mib(rss_idle), cfg.warmup, mib(rss_warm), mib(rss_end), mib(rss_peak), growth * 100,
      cfg.rss_tolerance * 100);
  std::cout << fmt::format("axon descriptors: {} at start, {} after the load\n", fds_start,
                           fds_end);
  std::cout << fmt::format("axon exit status after SIGTERM: {}\n", axon_exit);

  bool ok = true;
  if (res.unexpected != 0) {
    std::cout << "FAIL: unexpected statuses\n";
    ok = false;
  }
  if (total == 0) {
    std::cout << "FAIL: no call completed\n";
    ok = false;
  }
  if (growth > cfg.rss_tolerance) {
    std::cout << "FAIL: RSS grew more than the tolerance\n";
    ok = false;
  }
  if (fds_end != fds_start) {
    std::cout << "FAIL: descriptors did not return to the starting count\n";
    ok = false;
  }
  if (axon_exit != 0) {
    std::cout << "FAIL: bt-axon did not exit with status 0\n";
    ok = false;
  }
  std::cout << (ok ? "PASS\n" : "FAIL\n");
  return ok ? 0 : 1;
}
