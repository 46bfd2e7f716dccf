// The bounded priority queue and the worker pool that runs plain forward functions off the I/O
// threads (PROTOCOL D15: Python's priority orders nothing and its queue is unbounded).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace bt::detail {

/// One unit of work for the pool.
class pool_job {
 public:
  virtual ~pool_job() = default;
  /// Runs on a worker thread. Must not throw (implementations catch the handler's exceptions).
  virtual void run() noexcept = 0;
  /// Runs on the same worker thread right after run(): hands the result back to the I/O side.
  /// Skipped when the pool was abandoned at shutdown (the I/O side may be gone by then).
  virtual void complete(std::shared_ptr<pool_job> self) noexcept = 0;
};

/// Highest priority first; first in, first out among equal priorities. Not synchronised (the
/// pool's mutex guards it). NaN priorities sort below every number.
class job_queue {
 public:
  void push(double priority, std::shared_ptr<pool_job> job);
  /// Precondition: !empty().
  std::shared_ptr<pool_job> pop();
  bool empty() const noexcept { return heap_.empty(); }
  std::size_t size() const noexcept { return heap_.size(); }
  void clear() noexcept { heap_.clear(); }

 private:
  struct item {
    double priority;
    std::uint64_t seq;
    std::shared_ptr<pool_job> job;
  };
  /// Heap order: `a` runs after `b`.
  static bool after(const item& a, const item& b) noexcept;
  std::vector<item> heap_;
  std::uint64_t next_seq_ = 0;
};

/// A fixed set of threads fed by a job_queue of bounded length.
///
/// Admission is split from submission: the axon looks (has_room) before it reads a body, so a
/// full queue is refused before the upload; try_reserve() takes a slot once the body arrived,
/// submit() fills it once the body is verified, release() gives it back when the request fails
/// in between (or, for a coroutine handler, which holds its slot while it runs, when it ends).
/// Slots count reserved plus queued jobs (not the ones running on a worker). All members are
/// thread-safe.
class worker_pool {
 public:
  worker_pool(std::size_t threads, std::size_t capacity);
  /// stop() with no grace period.
  ~worker_pool();
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;

  /// Whether try_reserve() would succeed now (a hint: another thread may take the slot).
  bool has_room() const noexcept;
  /// False when the queue is full or the pool is stopping.
  bool try_reserve() noexcept;
  /// Returns a reserved slot that will not be submitted.
  void release() noexcept;
  /// Queues a job in a reserved slot. False (slot released, job dropped) once stopped.
  bool submit(double priority, std::shared_ptr<pool_job> job);

  /// Stops taking work, lets queued and running jobs finish for up to `grace`, then drops the
  /// queued ones and abandons (detaches) threads still inside a handler: a hung handler cannot
  /// hang shutdown. Abandoned jobs are never completed. Returns the jobs of the abandoned
  /// threads (empty when every job finished in time, and on a second call). Idempotent.
  std::vector<std::shared_ptr<pool_job>> stop(std::chrono::steady_clock::duration grace);

  /// Ownership of what abandoned jobs still touch (their route, the axon's state): when a thread
  /// stop() abandoned is still running, takes `owner` and returns true; the last abandoned
  /// thread to finish releases it, after its job is destroyed. Returns false (and leaves
  /// `owner` to the caller) when none is running any more.
  bool hand_over_to_abandoned(std::shared_ptr<void>& owner);

  std::size_t queued() const;
  /// Workers inside a job now (for metrics; takes the pool's mutex, so not for the hot path).
  std::size_t busy() const;
  /// Whether the calling thread is a worker of any pool (stop() must not run there).
  static bool on_worker_thread() noexcept;
  std::size_t threads() const noexcept { return thread_count_; }

  struct core;  // shared with the threads (defined in worker_pool.cpp)

 private:
  std::shared_ptr<core> core_;
  std::size_t thread_count_;
};

}  // namespace bt::detail
