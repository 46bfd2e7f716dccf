// bt::dendrite: the public API (dendrite.hpp), the dendrite's own I/O threads and its shutdown, and
// the entry points that start calls. A call is an exchange (exchange.cpp: I/O, limits, deadline,
// retry, response signature, error mapping) in one dialect (call_dialect.hpp): synapse_dialect.cpp
// for call and call_stream, epistula_dialect.cpp for epistula_call, btauth_dialect.cpp for
// btauth_call. The fan-out of forward and forward_mixed is fanout.cpp, the keep-alive pool
// connection_pool.cpp, the codec dendrite_codec.cpp.
#include <bt/dendrite.hpp>

#include <bt/detail/timer_tick.hpp>

#include "btauth_dialect.hpp"
#include "call_completion.hpp"
#include "epistula_dialect.hpp"
#include "exchange.hpp"
#include "fanout.hpp"
#include "synapse_dialect.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <pthread.h>

#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace bt {
namespace net = boost::asio;

namespace detail {

/// The io_context and threads of a dendrite that owns them, and its timer_tick (so a call's
/// deadline timer costs no timerfd system call; only here: on a caller's executor a pending tick
/// would keep the caller's io_context.run() from returning).
struct dendrite_runner {
  net::io_context ioc;
  net::executor_work_guard<net::io_context::executor_type> guard;
  timer_tick tick{ioc};
  std::vector<std::thread> threads;

  explicit dendrite_runner(unsigned n)
      : ioc(static_cast<int>(n == 0 ? 1 : n)), guard(ioc.get_executor()) {
    tick.start();
    for (unsigned i = 0; i < (n == 0 ? 1 : n); ++i)
      threads.emplace_back([this] {
        pthread_setname_np(pthread_self(), "bt-dendrite");  // visible in top, perf, gdb
        ioc.run();
      });
  }
  void join() {
    tick.stop();
    guard.reset();
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
  ~dendrite_runner() { join(); }
};

/// Ends every running call (cancelled), closes the pooled connections and stops the signing
/// pool: the dendrite's destructor, and Python's close(), before the threads are joined.
void dendrite_state::shutdown() {
  std::vector<std::shared_ptr<call_exchange>> ops;
  {
    std::lock_guard lk(mu);
    stopped = true;
    // A linked call is alive (it unlinks before it is destroyed), but may be ending: its
    // weak_from_this() is then expired.
    for (active_call_link* l = active.next; l != &active; l = l->next)
      if (auto sp = l->op->weak_from_this().lock()) ops.push_back(std::move(sp));
  }
  for (auto& op : ops) op->cancel("dendrite stopped");
  pool.close();
  // Calls waiting for a signature resume (and end, cancelled) once the pool has drained.
  signing_pool* s = nullptr;
  {
    std::lock_guard lk(mu);
    s = signer.get();
  }
  if (s) s->stop();
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------

namespace {
void require_secret(const keypair& k) {
  if (!k.has_secret()) throw std::invalid_argument("bt::dendrite: the hotkey has no secret key");
}
}  // namespace

dendrite::dendrite(keypair hotkey, options opt) {
  require_secret(hotkey);
  const unsigned n = opt.threads == 0 ? 1 : opt.threads;
  runner_ = std::make_unique<detail::dendrite_runner>(n);
  state_ = std::make_shared<detail::dendrite_state>(std::move(opt), std::move(hotkey),
                                                    runner_->ioc.get_executor());
  state_->own_threads = n;
}

dendrite::dendrite(executor_type ex, keypair hotkey, options opt) {
  require_secret(hotkey);
  state_ =
      std::make_shared<detail::dendrite_state>(std::move(opt), std::move(hotkey), std::move(ex));
}

dendrite::~dendrite() {
  state_->shutdown();
  if (runner_) {
    runner_->join();  // every cancelled call completes before the threads return
    state_.reset();
    runner_.reset();
  }
}

dendrite::executor_type dendrite::get_executor() const noexcept {
  return state_->ex;
}
const keypair& dendrite::hotkey() const noexcept {
  return state_->key;
}
const std::string& dendrite::uuid() const noexcept {
  return state_->uuid;
}
const dendrite::options& dendrite::get_options() const noexcept {
  return state_->opt;
}
void dendrite::close_idle() {
  state_->pool.close_idle();
}

dendrite_stats dendrite::stats() const {
  dendrite_stats s;
  s.calls = state_->calls.load();
  s.connections_opened = state_->opened.load();
  s.connections_reused = state_->reused.load();
  s.retries = state_->retries.load();
  s.sessions_offered = state_->sessions_offered.load();
  s.sessions_established = state_->sessions_established.load();
  s.sessions_rejected = state_->sessions_rejected.load();
  s.session_requests = state_->session_requests.load();
  s.idle_connections = state_->pool.idle_count();
  std::lock_guard lk(state_->mu);
  s.in_flight = state_->active_count;
  return s;
}

bt::metrics::registry& dendrite::metrics() noexcept {
  return state_->registry;
}

void dendrite::check_blocking_allowed() const {
  if (runner_ && runner_->ioc.get_executor().running_in_this_thread())
    throw std::logic_error("bt::dendrite: blocking call from one of the dendrite's own threads");
}

namespace {
/// A single call (call, call_stream or epistula_call): the caller's handler and the target it
/// copied, kept alive by the call's on_done.
struct single_call {
  axon_info target;
  std::optional<detail::dendrite_completion> done;
  detail::stream_sink stream;  ///< call_stream's parser (unused otherwise)
};

std::shared_ptr<single_call> new_single_call(const std::shared_ptr<detail::dendrite_state>& st,
                                             axon_info target,
                                             net::any_completion_handler<void()> handler) {
  auto call = std::make_shared<single_call>();
  call->target = std::move(target);
  call->done.emplace(std::move(handler), st->ex);
  return call;
}

/// Starts `call` in dialect D (made from `dialect_args`), completing the caller's handler.
template <class D, class... A>
void run_single_call(const std::shared_ptr<detail::dendrite_state>& st,
                     const std::shared_ptr<single_call>& call, double timeout,
                     A&&... dialect_args) {
  std::shared_ptr<detail::call_exchange> op = std::make_shared<detail::dialect_call<D>>(
      st, call->target, timeout, detail::dendrite_deadline_after(timeout),
      std::forward<A>(dialect_args)...);
  if (call->done->slot.is_connected()) {
    call->done->slot.assign([w = std::weak_ptr<detail::call_exchange>(op)](net::cancellation_type) {
      if (auto sp = w.lock()) sp->cancel("cancelled by the caller");
    });
  }
  op->on_done = [call] { call->done->complete(); };
  op->start();
}
}  // namespace

void dendrite::async_call_impl(axon_info target, detail::synapse_ref ref, double timeout,
                               net::any_completion_handler<void()> handler) {
  auto call = new_single_call(state_, std::move(target), std::move(handler));
  run_single_call<detail::synapse_dialect>(state_, call, timeout, ref, nullptr);
}

void dendrite::async_plain_impl(wire_dialect dialect, axon_info target, std::string method,
                                std::string path, std::string body, double timeout,
                                http_call_response* out,
                                net::any_completion_handler<void()> handler) {
  auto call = new_single_call(state_, std::move(target), std::move(handler));
  if (dialect == wire_dialect::epistula)
    run_single_call<detail::epistula_dialect>(state_, call, timeout, std::move(method),
                                              std::move(path), std::move(body), out);
  else
    run_single_call<detail::btauth_dialect>(state_, call, timeout, std::move(method),
                                            std::move(path), std::move(body), out);
}

http_call_response dendrite::plain_call(wire_dialect dialect, const axon_info& target,
                                        std::string method, std::string path, std::string json_body,
                                        double timeout) {
  check_blocking_allowed();
  std::promise<http_call_response> p;
  auto f = p.get_future();
  async_plain_call(dialect, target, std::move(method), std::move(path), std::move(json_body),
                   timeout,
                   [p = std::move(p)](http_call_response r) mutable { p.set_value(std::move(r)); });
  return f.get();
}

http_call_response dendrite::epistula_call(const axon_info& target, std::string method,
                                           std::string path, std::string json_body,
                                           double timeout) {
  return plain_call(wire_dialect::epistula, target, std::move(method), std::move(path),
                    std::move(json_body), timeout);
}

http_call_response dendrite::btauth_call(const axon_info& target, std::string method,
                                         std::string path, std::string json_body, double timeout) {
  return plain_call(wire_dialect::btauth, target, std::move(method), std::move(path),
                    std::move(json_body), timeout);
}

void dendrite::async_call_stream_impl(axon_info target, detail::synapse_ref ref, double timeout,
                                      detail::stream_sink sink,
                                      net::any_completion_handler<void()> handler) {
  auto call = new_single_call(state_, std::move(target), std::move(handler));
  call->stream = std::move(sink);
  run_single_call<detail::synapse_dialect>(state_, call, timeout, ref, &call->stream);
}

void dendrite::async_forward_impl(std::vector<axon_info> axons,
                                  std::vector<detail::synapse_ref> refs, double timeout,
                                  net::any_completion_handler<void()> handler) {
  std::vector<mixed_request> requests(axons.size());
  std::vector<detail::mixed_slot> slots(axons.size());
  for (std::size_t i = 0; i < axons.size(); ++i) {
    requests[i].axon = std::move(axons[i]);
    slots[i].ref = refs[i];
  }
  detail::start_fanout(state_, std::move(requests), std::move(slots), timeout, std::move(handler));
}

void dendrite::async_forward_mixed_impl(std::vector<mixed_request> requests,
                                        std::vector<detail::mixed_slot> slots, double timeout,
                                        net::any_completion_handler<void()> handler) {
  detail::start_fanout(state_, std::move(requests), std::move(slots), timeout, std::move(handler));
}

}  // namespace bt
