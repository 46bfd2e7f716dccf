#include "state/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <thread>

namespace bt::detail {

// ---- job_queue ----

bool job_queue::after(const item& a, const item& b) noexcept {
  const bool a_nan = std::isnan(a.priority), b_nan = std::isnan(b.priority);
  if (a_nan != b_nan) return a_nan;  // NaN runs last
  if (!a_nan && a.priority != b.priority) return a.priority < b.priority;
  return a.seq > b.seq;  // equal priority: older first
}

void job_queue::push(double priority, std::shared_ptr<pool_job> job) {
  heap_.push_back(item{priority, next_seq_++, std::move(job)});
  std::push_heap(heap_.begin(), heap_.end(), &job_queue::after);
}

std::shared_ptr<pool_job> job_queue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), &job_queue::after);
  auto job = std::move(heap_.back().job);
  heap_.pop_back();
  return job;
}

// ---- worker_pool ----

// Shared with the threads, so that an abandoned (detached) thread never touches a destroyed pool.
struct worker_pool::core {
  std::mutex m;
  std::condition_variable work_cv;  // workers wait for jobs
  std::condition_variable idle_cv;  // stop() waits for the queue to drain
  job_queue queue;
  std::size_t capacity = 0;
  std::size_t reserved = 0;
  std::size_t busy = 0;
  bool closing = false;
  // Taken shared by workers around complete(), exclusively by stop() to abandon: after that no
  // completion reaches the I/O side, which may be destroyed.
  std::shared_mutex abandon_m;
  bool abandoned = false;
  std::unique_ptr<std::atomic<bool>[]> in_handler;
  // By worker index (m): the job a worker runs (valid while in_handler), and whether stop()
  // abandoned the thread. Weak: a job is destroyed by its worker, never under m (a job's
  // destructor may return its queue slot, which takes m).
  std::vector<std::weak_ptr<pool_job>> running;
  std::vector<bool> detached;
  std::size_t abandoned_running = 0;  // abandoned threads not finished yet (m)
  std::shared_ptr<void> owner;        // hand_over_to_abandoned(); the last of them releases it
  std::vector<std::thread> threads;
};

namespace {

thread_local bool is_worker_thread = false;

void worker_main(std::shared_ptr<worker_pool::core> c, std::size_t index);

}  // namespace

bool worker_pool::on_worker_thread() noexcept {
  return is_worker_thread;
}

worker_pool::worker_pool(std::size_t threads, std::size_t capacity)
    : core_(std::make_shared<core>()), thread_count_(std::max<std::size_t>(threads, 1)) {
  core_->capacity = capacity;
  core_->in_handler = std::make_unique<std::atomic<bool>[]>(thread_count_);
  core_->running.resize(thread_count_);
  core_->detached.resize(thread_count_);
  core_->threads.reserve(thread_count_);
  for (std::size_t i = 0; i < thread_count_; ++i)
    core_->threads.emplace_back(worker_main, core_, i);
}

worker_pool::~worker_pool() {
  stop(std::chrono::steady_clock::duration::zero());
}

bool worker_pool::has_room() const noexcept {
  std::lock_guard lk(core_->m);
  return !core_->closing && core_->reserved + core_->queue.size() < core_->capacity;
}

bool worker_pool::try_reserve() noexcept {
  std::lock_guard lk(core_->m);
  if (core_->closing || core_->reserved + core_->queue.size() >= core_->capacity) return false;
  ++core_->reserved;
  return true;
}

void worker_pool::release() noexcept {
  std::lock_guard lk(core_->m);
  if (core_->reserved > 0) --core_->reserved;
  if (core_->busy == 0 && core_->queue.empty()) core_->idle_cv.notify_all();
}

bool worker_pool::submit(double priority, std::shared_ptr<pool_job> job) {
  {
    std::lock_guard lk(core_->m);
    if (core_->reserved > 0) --core_->reserved;
    if (core_->abandoned) return false;
    core_->queue.push(priority, std::move(job));
  }
  core_->work_cv.notify_one();
  return true;
}

std::size_t worker_pool::queued() const {
  std::lock_guard lk(core_->m);
  return core_->queue.size();
}

std::size_t worker_pool::busy() const {
  std::lock_guard lk(core_->m);
  return core_->busy;
}

std::vector<std::shared_ptr<pool_job>> worker_pool::stop(
    std::chrono::steady_clock::duration grace) {
  auto& c = *core_;
  std::vector<std::shared_ptr<pool_job>> stuck;
  std::unique_lock lk(c.m);
  if (c.threads.empty()) return stuck;  // already stopped
  c.closing = true;
  c.work_cv.notify_all();
  const bool drained =
      c.idle_cv.wait_for(lk, grace, [&] { return c.busy == 0 && c.queue.empty(); });
  if (!drained) c.queue.clear();  // nobody waits for these any more (connections were cut)
  auto threads = std::move(c.threads);
  c.threads.clear();
  lk.unlock();
  c.work_cv.notify_all();
  if (!drained) {
    std::unique_lock al(c.abandon_m);
    c.abandoned = true;
  }
  for (std::size_t i = 0; i < threads.size(); ++i) {
    // A thread still inside a handler after the grace period is left to finish on its own; it
    // holds `core` alive and exits without completing its job. (in_handler is read under m so
    // that the count and the list agree with what the thread sees when it finishes.)
    bool abandon = false;
    if (!drained) {
      std::lock_guard g(c.m);
      abandon = c.in_handler[i].load();
      if (abandon) {
        c.detached[i] = true;
        ++c.abandoned_running;
        if (auto job = c.running[i].lock()) stuck.push_back(std::move(job));
      }
    }
    if (abandon) {
      threads[i].detach();
    } else {
      threads[i].join();
    }
  }
  return stuck;
}

bool worker_pool::hand_over_to_abandoned(std::shared_ptr<void>& owner) {
  std::lock_guard lk(core_->m);
  if (core_->abandoned_running == 0) return false;
  core_->owner = std::move(owner);
  return true;
}

namespace {

void worker_main(std::shared_ptr<worker_pool::core> c, std::size_t index) {
  is_worker_thread = true;
  for (;;) {
    std::shared_ptr<pool_job> job;
    {
      std::unique_lock lk(c->m);
      c->work_cv.wait(lk, [&] { return c->closing || !c->queue.empty(); });
      if (c->queue.empty()) return;  // closing and nothing left
      job = c->queue.pop();
      ++c->busy;
      c->in_handler[index].store(true);
      c->running[index] = job;
    }
    job->run();
    {
      std::shared_lock al(c->abandon_m);
      // Once abandoned the I/O side may be destroyed: drop the result. (Jobs hold no I/O
      // objects, so destroying one afterwards is safe.)
      if (!c->abandoned) job->complete(job);
    }
    job.reset();  // outside m: its destructor may return its queue slot
    std::shared_ptr<void> owner;
    {
      std::lock_guard lk(c->m);
      c->in_handler[index].store(false);
      --c->busy;
      if (c->busy == 0 && c->queue.empty()) c->idle_cv.notify_all();
      // stop() abandoned this thread (it may have looked just before we got here): the job is
      // gone, so the last such thread releases what the jobs touched.
      if (c->detached[index]) {
        if (--c->abandoned_running == 0) owner = std::move(c->owner);
        return;  // `owner` is released after the lock (it may own the pool, not `core`: this
                 // thread keeps `core` alive until it ends)
      }
    }
  }
}

}  // namespace

}  // namespace bt::detail
