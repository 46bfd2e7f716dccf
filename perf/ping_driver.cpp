#include "ping_driver.hpp"

#include "payload_synapse.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <type_traits>

namespace bt::perf {

namespace asio = boost::asio;

caller_set::caller_set(const keypair& key, std::size_t callers, unsigned threads,
                       const dendrite_options& opt)
    : work_(ioc_.get_executor()) {
  callers = std::max<std::size_t>(1, callers);
  dendrites_.reserve(callers);
  if (callers == 1) {
    dendrite_options o = opt;
    o.threads = std::max(1u, threads);
    dendrites_.push_back(std::make_unique<dendrite>(key, o));
    return;
  }
  for (std::size_t i = 0; i < callers; ++i)
    dendrites_.push_back(std::make_unique<dendrite>(ioc_.get_executor(), key, opt));
  tick_ = std::make_unique<bt::detail::timer_tick>(ioc_);
  tick_->start();
  for (unsigned i = 0; i < std::max(1u, threads); ++i)
    threads_.emplace_back([this] { ioc_.run(); });
}

caller_set::~caller_set() {
  dendrites_.clear();  // cancels and closes; their last handlers still run on ioc_
  if (tick_) tick_->stop();
  work_.reset();
  for (auto& t : threads_) t.join();
}

namespace {

/// Shared by the callers of one run. Every coroutine runs on the dendrite's executor; with
/// several dendrite threads they may run in parallel, hence the mutex around the results.
template <class T>
struct run_state {
  run_state(caller_set& c_, const axon_info& target_, const T& proto_, const drive_options& opt_)
      : callers(c_), target(target_), proto(proto_), opt(opt_) {}
  caller_set& callers;
  const axon_info& target;
  const T& proto;
  const drive_options& opt;
  std::chrono::steady_clock::time_point end{};
  std::atomic<std::size_t> next{0};  ///< calls started
  std::atomic<std::size_t> done{0};  ///< calls finished
  std::size_t progress_step = 0;
  std::mutex m;
  ping_run run;

  bool take_ticket(std::size_t& index) {
    if (opt.duration.count() > 0) {
      if (std::chrono::steady_clock::now() >= end) return false;
      index = next.fetch_add(1);
      return true;
    }
    index = next.fetch_add(1);
    return index < opt.count;
  }
};

void draw_progress(std::size_t done, std::size_t total) {
  constexpr int width = 40;
  const int filled =
      static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * width);
  std::printf("\r[%.*s%*s] %3d%% %zu/%zu", filled, "########################################",
              width - filled, "",
              static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)),
              done, total);
  std::fflush(stdout);
}

/// What one call answered, whichever kind of call it was.
struct call_outcome {
  std::int64_t status = 0;
  double seconds = 0;  // the dendrite's process_time
  std::string message;
};

template <class T>
asio::awaitable<call_outcome> call_once(dendrite& d, const axon_info& target, const T& proto,
                                        double timeout) {
  if constexpr (std::is_same_v<T, plain_ping>) {
    http_call_response r =
        proto.dialect == wire_dialect::btauth
            ? co_await d.async_btauth_call(target, "POST", proto.path, proto.body, timeout,
                                           asio::use_awaitable)
            : co_await d.async_epistula_call(target, "POST", proto.path, proto.body, timeout,
                                             asio::use_awaitable);
    co_return call_outcome{r.status, r.process_time.value_or(0.0), std::move(r.status_message)};
  } else {
    T r = co_await d.async_call(target, proto, timeout, asio::use_awaitable);
    co_return call_outcome{r.dendrite.status_code.value_or(0),
                           r.dendrite.process_time.value_or(0.0),
                           r.dendrite.status_message.value_or("")};
  }
}

template <class T>
asio::awaitable<void> caller(std::shared_ptr<run_state<T>> st, dendrite& d) {
  std::size_t index = 0;
  while (st->take_ticket(index)) {
    const call_outcome result = co_await call_once(d, st->target, st->proto, st->opt.timeout);
    const double us = result.seconds * 1e6;
    const std::int64_t status = result.status;
    {
      std::lock_guard lock(st->m);
      ++st->run.calls;
      if (status == 200)
        st->run.latency_us.push_back(us);
      else
        st->run.add_failure(status, result.message);
      if (st->opt.verbose) {
        *st->opt.verbose << "query " << index + 1 << ": status " << status << ", process_time "
                         << result.seconds << " s";
        if (status != 200) *st->opt.verbose << ", message " << result.message;
        *st->opt.verbose << "\n";
      }
    }
    const std::size_t finished = st->done.fetch_add(1) + 1;
    if (st->opt.progress && st->progress_step && finished % st->progress_step == 0) {
      std::lock_guard lock(st->m);
      draw_progress(finished, st->opt.count);
    }
  }
}

}  // namespace

template <class T>
ping_run drive(caller_set& callers, const axon_info& target, const T& proto,
               const drive_options& opt) {
  auto st = std::make_shared<run_state<T>>(callers, target, proto, opt);
  const std::size_t n = std::max<std::size_t>(1, opt.concurrency);
  st->run.concurrency = n;
  if (opt.duration.count() <= 0) {
    st->run.latency_us.reserve(opt.count);
    if (opt.progress) st->progress_step = std::max<std::size_t>(1, opt.count / 100);
  }

  const auto start = std::chrono::steady_clock::now();
  st->end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(opt.duration);
  std::vector<std::future<void>> finished;
  finished.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    finished.push_back(asio::co_spawn(
        callers.executor(), caller<T>(st, callers.at(i % callers.size())), asio::use_future));
  for (auto& f : finished) f.get();  // rethrows a caller's exception (a bug: calls never throw)
  st->run.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (opt.progress) {
    std::printf("\r%*s\r", 70, "");
    std::fflush(stdout);
  }
  return std::move(st->run);
}

template ping_run drive<synapse>(caller_set&, const axon_info&, const synapse&,
                                 const drive_options&);
template ping_run drive<payload_synapse>(caller_set&, const axon_info&, const payload_synapse&,
                                         const drive_options&);
template ping_run drive<plain_ping>(caller_set&, const axon_info&, const plain_ping&,
                                    const drive_options&);

}  // namespace bt::perf
