// The axon's internal priority queue and worker pool (axon/src/state/worker_pool.hpp).
#include "state/worker_pool.hpp"

#include <catch2/catch.hpp>

#include "support/wait.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

using bt::detail::job_queue;
using bt::detail::pool_job;
using bt::detail::worker_pool;

namespace {

struct tagged_job final : pool_job {
  int tag;
  std::vector<int>* order;
  std::mutex* m;
  std::function<void()> body;
  std::atomic<int>* completed;
  tagged_job(int t, std::vector<int>* o, std::mutex* mu, std::atomic<int>* c)
      : tag(t), order(o), m(mu), completed(c) {}
  void run() noexcept override {
    if (body) body();
    std::lock_guard lk(*m);
    order->push_back(tag);
  }
  void complete(std::shared_ptr<pool_job>) noexcept override { ++*completed; }
};

}  // namespace

TEST_CASE("job_queue: highest priority first, FIFO among equals, NaN last", "[worker_pool]") {
  std::vector<int> order;
  std::mutex m;
  std::atomic<int> done{0};
  job_queue q;
  const double prios[] = {1, 5, 5, std::numeric_limits<double>::quiet_NaN(), -1, 5, 2};
  for (int i = 0; i < 7; ++i) q.push(prios[i], std::make_shared<tagged_job>(i, &order, &m, &done));
  std::vector<int> popped;
  while (!q.empty()) popped.push_back(static_cast<tagged_job&>(*q.pop()).tag);
  CHECK(popped == std::vector<int>{1, 2, 5, 6, 0, 4, 3});
}

TEST_CASE("worker_pool: bounded reservations, priority order, completion", "[worker_pool]") {
  worker_pool pool(1, 3);
  std::vector<int> order;
  std::mutex m;
  std::atomic<int> completed{0};
  // Block the single worker so that the next jobs queue up.
  std::mutex gate_m;
  std::condition_variable gate_cv;
  bool open = false;
  std::atomic<bool> started{false};
  auto blocker = std::make_shared<tagged_job>(0, &order, &m, &completed);
  blocker->body = [&] {
    started = true;
    std::unique_lock lk(gate_m);
    gate_cv.wait(lk, [&] { return open; });
  };
  REQUIRE(pool.try_reserve());
  REQUIRE(pool.submit(0, blocker));
  while (!started) std::this_thread::yield();

  REQUIRE(pool.try_reserve());
  REQUIRE(pool.try_reserve());
  REQUIRE(pool.try_reserve());
  CHECK_FALSE(pool.try_reserve());  // capacity 3: full
  pool.release();                   // one request failed before submitting
  REQUIRE(pool.submit(1, std::make_shared<tagged_job>(1, &order, &m, &completed)));
  REQUIRE(pool.submit(7, std::make_shared<tagged_job>(2, &order, &m, &completed)));
  CHECK(pool.queued() == 2);
  REQUIRE(pool.try_reserve());
  REQUIRE(pool.submit(7, std::make_shared<tagged_job>(3, &order, &m, &completed)));
  CHECK_FALSE(pool.try_reserve());

  {
    std::lock_guard lk(gate_m);
    open = true;
  }
  gate_cv.notify_all();
  pool.stop(std::chrono::seconds(10));
  CHECK(order == std::vector<int>{0, 2, 3, 1});
  CHECK(completed.load() == 4);
  CHECK_FALSE(pool.try_reserve());  // stopped
}

TEST_CASE("worker_pool: a handler that never returns does not hang stop()", "[worker_pool]") {
  auto pool = std::make_unique<worker_pool>(1, 4);
  // Static: the abandoned thread may touch them after this test case returns.
  static std::vector<int> order;
  static std::mutex m;
  static std::atomic<int> completed{0};
  static bt::test::event release;
  static bt::test::event started;
  auto stuck = std::make_shared<tagged_job>(0, &order, &m, &completed);
  stuck->body = [] {
    started.set();
    release.wait_for(std::chrono::seconds(60));
  };
  REQUIRE(pool->try_reserve());
  REQUIRE(pool->submit(0, stuck));
  REQUIRE(started.wait_for(std::chrono::seconds(10)));
  pool->stop(std::chrono::milliseconds(50));  // returns although the handler still runs
  CHECK(completed.load() == 0);
  release.set();  // the abandoned thread finishes and exits without completing the job
  // The job records itself after its body returns, with nothing to wait on: poll (2 s, as before).
  bt::test::poll_until(
      [&] {
        std::lock_guard lk(m);
        return !order.empty();
      },
      std::chrono::seconds(2));
  std::lock_guard lk(m);
  CHECK(order == std::vector<int>{0});
  CHECK(completed.load() == 0);
}
