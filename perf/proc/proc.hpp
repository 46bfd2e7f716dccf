// Process helpers for bt-ping and the tests: spawning a child (bt-axon, a Node.js peer) and
// reading its first stdout line (the address it listens on), and reading a process's CPU time and
// resident memory from /proc (Linux). The tests link this file through the bt_proc library
// (tests/CMakeLists.txt): it is the one spawn-and-read-a-line helper of the repository.
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
  struct options {
    bool quiet_stderr = false;  ///< stderr to /dev/null instead of inherited
    /// stdin is a pipe this object holds (close_stdin() closes it, so does stop()) instead of
    /// /dev/null: for children that exit when their stdin closes.
    bool stdin_pipe = false;
    std::string cwd;  ///< working directory of the child; empty: ours
  };
  /// Starts `argv[0]` (a path, or a name looked up in PATH) with the given arguments (no
  /// shell). stdout is a pipe (read_line). Throws std::system_error on failure.
  static child_process spawn(const std::vector<std::string>& argv, const options& o);
  /// The same with stdin /dev/null, stderr inherited unless `quiet_stderr`.
  static child_process spawn(const std::vector<std::string>& argv, bool quiet_stderr = false) {
    return spawn(argv, options{.quiet_stderr = quiet_stderr, .stdin_pipe = false, .cwd = {}});
  }

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&&) = delete;
  child_process(const child_process&) = delete;
  ~child_process();

  pid_t pid() const noexcept { return pid_; }
  /// The next stdout line (without '\n'), or nullopt at EOF or when `timeout` passes first.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  /// Closes the child's stdin pipe (options::stdin_pipe); a no-op otherwise or when closed.
  void close_stdin() noexcept;
  /// Closes stdin, sends SIGTERM, waits for the exit up to `grace` (on the exit event itself, a
  /// pidfd, where the kernel has one), then SIGKILL. Returns the exit status as a shell shows it
  /// (128+signal when killed), or -1 if already stopped.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

 private:
  child_process() = default;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
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

/// user+sys CPU seconds consumed so far by every thread of this process (getrusage: the total
/// is the scheduler's exact runtime, not rounded to clock ticks as /proc/<pid>/stat is).
cpu_times self_cpu_times();

/// The CPU time spent between two readings.
inline cpu_times operator-(const cpu_times& later, const cpu_times& earlier) {
  return {.user = later.user - earlier.user, .sys = later.sys - earlier.sys};
}
inline cpu_times operator+(const cpu_times& a, const cpu_times& b) {
  return {.user = a.user + b.user, .sys = a.sys + b.sys};
}

/// Resident set size in bytes (VmRSS of /proc/<pid>/status); nullopt if unreadable.
std::optional<std::uint64_t> process_rss_bytes(pid_t pid);

/// Raises this process's RLIMIT_NOFILE soft limit to at least `wanted` (up to the hard limit).
/// Returns the soft limit in effect afterwards.
std::uint64_t raise_fd_limit(std::uint64_t wanted);

}  // namespace bt::perf
