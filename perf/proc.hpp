// Process helpers for bt-ping: spawning bt-axon as a separate process and reading its AxonInfo
// line, and reading a process's CPU time and resident memory from /proc (Linux).
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bt::perf {

/// A child process whose stdout we read line by line. The destructor kills it (SIGTERM, then
/// SIGKILL after a grace period) and reaps it, so a failing run leaves no stray process.
class child_process {
 public:
  /// Starts `argv[0]` (a path, or a name looked up in PATH) with the given arguments (no
  /// shell). stdin is /dev/null, stderr is inherited unless `quiet_stderr`, stdout is a pipe.
  /// Throws std::system_error on failure.
  static child_process spawn(const std::vector<std::string>& argv, bool quiet_stderr = false);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&&) = delete;
  child_process(const child_process&) = delete;
  ~child_process();

  pid_t pid() const noexcept { return pid_; }
  /// The next stdout line (without '\n'), or nullopt at EOF or when `timeout` passes first.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  /// SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status as a shell shows it
  /// (128+signal when killed), or -1 if already stopped.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

 private:
  child_process() = default;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string pending_;
};

/// user+sys CPU seconds consumed so far by every thread of process `pid` (/proc/<pid>/stat,
/// fields 14 and 15, in clock ticks: resolution 1/sysconf(_SC_CLK_TCK), usually 10 ms).
/// nullopt if the process is gone.
std::optional<double> process_cpu_seconds(pid_t pid);

struct cpu_times {
  double user = 0;  ///< seconds
  double sys = 0;   ///< seconds
};
/// The same, split into user and system time.
std::optional<cpu_times> process_cpu_times(pid_t pid);

/// Resident set size in bytes (VmRSS of /proc/<pid>/status); nullopt if unreadable.
std::optional<std::uint64_t> process_rss_bytes(pid_t pid);

/// Raises this process's RLIMIT_NOFILE soft limit to at least `wanted` (up to the hard limit).
/// Returns the soft limit in effect afterwards.
std::uint64_t raise_fd_limit(std::uint64_t wanted);

}  // namespace bt::perf
