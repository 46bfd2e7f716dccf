// The dendrite's signing pool (signing_pool.hpp states the contract).
#include "signing_pool.hpp"

#include <boost/asio/post.hpp>

#include <pthread.h>

#include <utility>

namespace bt::detail {
namespace net = boost::asio;

signing_pool::signing_pool(const keypair& key, unsigned threads, net::any_io_executor executor)
    : key_(key), executor_(std::move(executor)) {
  threads_.reserve(threads);
  awake_ = threads;  // each counts itself out when it first finds nothing to do
  for (unsigned i = 0; i < threads; ++i)
    threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "bt-dendrite-sig");  // visible in top, perf, gdb
      run();
    });
}

signing_pool::~signing_pool() {
  stop();
}

void signing_pool::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void signing_pool::submit(std::string_view message, signature_bytes& out,
                          net::any_completion_handler<void()> handler) {
  job j{message, &out, std::move(handler)};
  bool wake = false;
  {
    std::lock_guard lk(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(j));
      j.handler = nullptr;
      // A sleeping thread is woken (a futex call and a context switch, each costing about
      // what a tenth of a signature does) only when the awake ones have more queued than one
      // job each: a trickle of calls is signed by one thread, a burst by all.
      wake = queue_.size() > awake_;
    }
  }
  if (!j.handler) {
    if (wake) wake_.notify_one();
    return;
  }
  // After stop() no thread takes jobs: signed here instead (a call racing the dendrite's
  // shutdown still resumes, and then ends cancelled).
  complete(std::move(j));
}

/// Signs a job and posts its completion through the dendrite's executor to the handler's own
/// (a call's strand, or the loop itself), which Asio keeps busy meanwhile: a call never resumes
/// inside submit() or on a pool thread.
void signing_pool::complete(job j) {
  *j.out = key_.sign(j.message);
  net::post(executor_, std::move(j.handler));
}

/// One job at a time, so that a burst of requests (a fan-out's first max_concurrency calls)
/// spreads over every pool thread.
void signing_pool::run() {
  for (;;) {
    std::unique_lock lk(mu_);
    if (!stopping_ && queue_.empty()) {
      --awake_;
      wake_.wait(lk, [this] { return stopping_ || !queue_.empty(); });
      ++awake_;
    }
    if (queue_.empty()) return;  // stopping, and everything submitted was signed
    job j = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    complete(std::move(j));
  }
}

}  // namespace bt::detail
