// The lanes of blocking calls (caller_lanes.hpp has the contract and the reason).
#include "caller_lanes.hpp"

#include <bt/detail/timer_tick.hpp>

#include <boost/asio/io_context.hpp>

#include <stdexcept>
#include <vector>

namespace btpy {

struct caller_lanes::lane {
  std::mutex mu;  // guards d: a call starts, or close() destroys it, never both at once
  boost::asio::io_context ioc{1};  // run by the lane's thread only, inside run()
  // The dendrite's own io_context has the same tick: without it, every call's deadline timer is
  // the earliest in the queue and re-arms the timerfd (a system call per call). Its pending wait
  // keeps run_one() from ever finding the context out of work, which run() does not rely on (it
  // stops at done()). Never stopped: the lane is destroyed when no call runs on it, and the
  // timer's destruction cancels the wait, whose handler the io_context's destruction then
  // destroys without running it. Declared after ioc: destroyed before it.
  bt::detail::timer_tick tick{ioc};
  std::unique_ptr<bt::dendrite> d;  // declared after ioc: destroyed first
};

void add_stats(bt::dendrite_stats& a, const bt::dendrite_stats& b, bool gauges) {
  a.calls += b.calls;
  a.connections_opened += b.connections_opened;
  a.connections_reused += b.connections_reused;
  a.retries += b.retries;
  a.sessions_offered += b.sessions_offered;
  a.sessions_established += b.sessions_established;
  a.sessions_rejected += b.sessions_rejected;
  a.session_requests += b.session_requests;
  if (!gauges) return;
  a.idle_connections += b.idle_connections;
  a.in_flight += b.in_flight;
}

namespace {
/// Forgets this thread's lanes when the thread ends (a thread pool's threads come and go).
struct thread_exit_hook {
  std::vector<std::weak_ptr<caller_lanes>> owners;  // that gave this thread a lane
  void add(std::weak_ptr<caller_lanes> o) {
    std::erase_if(owners, [](const auto& w) { return w.expired(); });  // closed dendrites
    owners.push_back(std::move(o));
  }
  ~thread_exit_hook() {
    for (auto& w : owners)
      if (auto o = w.lock()) o->forget_this_thread();
  }
};
thread_local thread_exit_hook exit_hook;
}  // namespace

caller_lanes::caller_lanes(bt::keypair key, bt::dendrite_options opt)
    : key_(std::move(key)), opt_(std::move(opt)) {}

caller_lanes::~caller_lanes() {
  close();
}

std::shared_ptr<caller_lanes::lane> caller_lanes::lane_for_this_thread() {
  const auto id = std::this_thread::get_id();
  std::lock_guard lk(mu_);
  if (closed_) throw std::invalid_argument("Dendrite is closed");  // ValueError, as get()
  auto& l = lanes_[id];
  if (!l) {
    auto fresh = std::make_shared<lane>();
    fresh->d = std::make_unique<bt::dendrite>(fresh->ioc.get_executor(), key_, opt_);
    fresh->tick.start();  // its first wait is armed by the lane's first run_one()
    l = std::move(fresh);
    exit_hook.add(weak_from_this());
  }
  return l;
}

void caller_lanes::forget_this_thread() {
  const auto id = std::this_thread::get_id();
  std::shared_ptr<lane> gone;
  {
    std::lock_guard lk(mu_);
    auto it = lanes_.find(id);
    if (it == lanes_.end()) return;
    gone = std::move(it->second);
    lanes_.erase(it);
    add_stats(retired_, gone->d->stats(), false);  // the counters stay monotonic
  }
  // Destroyed here, outside mu_: the thread is ending, so no call of its own is running.
}

void caller_lanes::run(const std::function<void(bt::dendrite&)>& start,
                       const std::function<bool()>& done) {
  const std::shared_ptr<lane> l = lane_for_this_thread();
  {
    std::lock_guard lk(l->mu);
    if (!l->d) throw std::invalid_argument("Dendrite is closed");
    start(*l->d);
  }
  // The call holds work on the io_context until its handler has run, so run_one() blocks until
  // something happens; it returns 0 only when the context had stopped (no work left after an
  // earlier call), and then the context is restarted.
  while (!done())
    if (l->ioc.run_one() == 0) l->ioc.restart();
}

void caller_lanes::close() {
  std::unordered_map<std::thread::id, std::shared_ptr<lane>> lanes;
  {
    std::lock_guard lk(mu_);
    closed_ = true;
    lanes.swap(lanes_);
  }
  for (auto& [id, l] : lanes) {
    std::lock_guard lk(l->mu);
    l->d.reset();  // cancels a running call; its thread completes it and then returns
  }
}

bt::dendrite_stats caller_lanes::stats() const {
  std::lock_guard lk(mu_);
  bt::dendrite_stats sum = retired_;
  for (const auto& [id, l] : lanes_) add_stats(sum, l->d->stats(), true);
  return sum;
}

}  // namespace btpy
