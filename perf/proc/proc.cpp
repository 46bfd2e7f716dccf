#include "proc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

extern char** environ;

namespace bt::perf {

namespace {
[[noreturn]] void throw_errno(int err, const char* what) {
  throw std::system_error(err, std::generic_category(), what);
}

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Reaps child `pid` if it exits within `limit` (true; also true when it is no child of ours to
/// wait for). Waits on the exit itself through a pidfd (readable once the process exits) where
/// the kernel has pidfd_open (Linux 5.3+); elsewhere it checks waitpid every 10 ms.
bool wait_exit(pid_t pid, std::chrono::milliseconds limit, int& status) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int pidfd = -1;
#ifdef SYS_pidfd_open
  pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      close_fd(pidfd);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      close_fd(pidfd);
      return false;
    }
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(10)));
    }
  }
}
}  // namespace

child_process child_process::spawn(const std::vector<std::string>& argv, const options& o) {
  if (argv.empty()) throw std::invalid_argument("child_process::spawn: empty argv");
  // O_CLOEXEC: only this child gets the pipe ends (dup2 onto 0 and 1 clears the flag there), so
  // a sibling spawned meanwhile cannot hold our stdin open past close_stdin().
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno(errno, "pipe2");
  int in[2] = {-1, -1};
  if (o.stdin_pipe && ::pipe2(in, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw_errno(err, "pipe2");
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (o.stdin_pipe)
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  else
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  if (o.quiet_stderr) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  if (!o.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, o.cwd.c_str());

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  close_fd(in[0]);
  if (rc != 0) {
    ::close(fds[0]);
    close_fd(in[1]);
    throw_errno(rc, ("posix_spawn " + argv[0]).c_str());
  }
  child_process c;
  c.pid_ = pid;
  c.stdin_fd_ = in[1];
  c.stdout_fd_ = fds[0];
  return c;
}

child_process::child_process(child_process&& o) noexcept
    : pid_(o.pid_),
      stdin_fd_(o.stdin_fd_),
      stdout_fd_(o.stdout_fd_),
      pending_(std::move(o.pending_)) {
  o.pid_ = -1;
  o.stdin_fd_ = -1;
  o.stdout_fd_ = -1;
}

void child_process::close_stdin() noexcept {
  close_fd(stdin_fd_);
}

child_process::~child_process() {
  stop(std::chrono::milliseconds(2000));
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

std::optional<std::string> child_process::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    if (stdout_fd_ < 0) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{stdout_fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(stdout_fd_);
      stdout_fd_ = -1;
      if (pending_.empty()) return std::nullopt;
      std::string line = std::move(pending_);
      pending_.clear();
      return line;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
  }
}

int child_process::stop(std::chrono::milliseconds grace) {
  close_stdin();
  if (pid_ <= 0) return -1;
  int status = 0;
  ::kill(pid_, SIGTERM);
  if (!wait_exit(pid_, grace, status)) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::optional<cpu_times> process_cpu_times(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  // The command name (field 2) is in parentheses and may contain spaces: skip past the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // After ')' come field 3 (state) onwards; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15; ++i) {
    if (!(rest >> field)) return std::nullopt;
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  const auto ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return cpu_times{static_cast<double>(utime) / ticks, static_cast<double>(stime) / ticks};
}

cpu_times self_cpu_times() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return {.user = seconds(u.ru_utime), .sys = seconds(u.ru_stime)};
}

std::optional<double> process_cpu_seconds(pid_t pid) {
  const auto t = process_cpu_times(pid);
  if (!t) return std::nullopt;
  return t->user + t->sys;
}

std::optional<std::uint64_t> process_rss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::uint64_t kb = 0;
      if (fields >> kb) return kb * 1024;
    }
  }
  return std::nullopt;
}

std::uint64_t raise_fd_limit(std::uint64_t wanted) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur < wanted) {
    rlimit next = lim;
    next.rlim_cur =
        (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= wanted) ? wanted : lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &next) == 0) lim = next;
  }
  return lim.rlim_cur;
}

}  // namespace bt::perf
