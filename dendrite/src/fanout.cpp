// The fan-out of dendrite::forward and forward_mixed (fanout.hpp).
#include "fanout.hpp"

#include "btauth_dialect.hpp"
#include "epistula_dialect.hpp"
#include "exchange.hpp"
#include "synapse_dialect.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>

namespace bt::detail {
namespace {

/// A fan-out: launches calls up to max_concurrency and completes when all have.
struct dendrite_fanout {
  std::shared_ptr<dendrite_state> st;
  std::vector<mixed_request> requests;
  std::vector<mixed_slot> slots;
  double timeout = 12.0;
  std::chrono::steady_clock::time_point deadline;
  std::optional<dendrite_completion> done;
  /// Where the calls sign (dendrite_options::signing_threads); null: on their own executor.
  signing_pool* signer = nullptr;

  std::mutex mu;
  std::size_t next = 0, finished = 0, running = 0;
  bool cancelled = false;
  std::vector<std::shared_ptr<call_exchange>> live;  // by index, while running
  /// The fan-out itself until its last call has finished (its calls' on_done refer to it).
  std::shared_ptr<dendrite_fanout> keep_alive;
  /// The one deadline of all the calls (a timer per call would cost each call a timer queue
  /// entry and a completion): at expiry it ends the running ones; a call launched later finds
  /// the deadline passed when it begins. Cancelled when the last call has finished.
  std::optional<boost::asio::steady_timer> deadline_timer;

  /// Calls taken to start outside the lock: one when a finished call makes room (no allocation
  /// for it), up to max_concurrency at the beginning.
  using calls_to_start = boost::container::small_vector<std::shared_ptr<call_exchange>, 2>;

  /// Takes the calls there is room for now. Requires mu held.
  void take_calls(calls_to_start& start) {
    while (next < requests.size() && running < std::max<std::size_t>(1, st->opt.max_concurrency)) {
      const std::size_t i = next++;
      ++running;
      std::shared_ptr<call_exchange> op = make_call(i);
      // (a pointer and an index: small enough for std::function to hold without allocating;
      // keep_alive holds the fan-out)
      op->on_done = [this, i] { on_call_done(i); };
      op->sign_in(signer);
      op->deadline_watched_elsewhere();  // by deadline_timer
      live[i] = op;
      start.push_back(std::move(op));
    }
  }

  /// Starts what take_calls took. Touches nothing of the fan-out itself: once its mutex is
  /// released, the fan-out may be freed by another thread finishing its last call unless one of
  /// these calls is still to finish (a call taken is one the fan-out waits for).
  static void start_calls(calls_to_start& start, bool was_cancelled) {
    // A call launched after cancel_all() starts cancelled; one cancelled by a cancel_all()
    // racing with this loop is stopped by its posted cancel().
    for (auto& op : start) op->start(was_cancelled ? "cancelled by the caller" : std::string());
  }

  void launch_more() {
    calls_to_start start;
    bool was_cancelled = false;
    {
      std::lock_guard lk(mu);
      take_calls(start);
      was_cancelled = cancelled;
    }
    start_calls(start, was_cancelled);
  }

  /// The call of requests[i] in its dialect (its method, path and body moved into the call: each
  /// request is launched once; its axon stays here, where the call refers to it).
  std::shared_ptr<call_exchange> make_call(std::size_t i) {
    mixed_request& r = requests[i];
    switch (r.dialect) {
      case wire_dialect::synapse:
        return std::make_shared<dialect_call<synapse_dialect>>(st, r.axon, timeout, deadline,
                                                               slots[i].ref, nullptr);
      case wire_dialect::epistula:
        return std::make_shared<dialect_call<epistula_dialect>>(
            st, r.axon, timeout, deadline, std::move(r.method), std::move(r.path),
            std::move(r.body), slots[i].http);
      case wire_dialect::btauth:
        break;
    }
    return std::make_shared<dialect_call<btauth_dialect>>(st, r.axon, timeout, deadline,
                                                          std::move(r.method), std::move(r.path),
                                                          std::move(r.body), slots[i].http);
  }

  void on_call_done(std::size_t i) {
    // Everything about the fan-out is decided under one lock: after it, the fan-out is only
    // touched by the thread that finished its last call (holding `self`), because another
    // thread's last call may free it the moment the lock is released.
    calls_to_start start;
    bool was_cancelled = false;
    std::optional<dendrite_completion> c;
    std::shared_ptr<dendrite_fanout> self;  // set when this was the last call
    {
      std::lock_guard lk(mu);
      live[i].reset();
      --running;
      if (++finished == requests.size()) {
        c.swap(done);
        self.swap(keep_alive);
      } else {
        take_calls(start);
        was_cancelled = cancelled;
      }
    }
    if (self) {
      deadline_timer->cancel();  // its handler holds the fan-out until it has run
      if (c) c->complete();
      return;  // the fan-out ends with `self`
    }
    start_calls(start, was_cancelled);
  }

  /// The running calls, to end outside the lock; `cancelling`: also marks the fan-out cancelled.
  std::vector<std::shared_ptr<call_exchange>> running_calls(bool cancelling) {
    std::vector<std::shared_ptr<call_exchange>> ops;
    std::lock_guard lk(mu);
    if (cancelling) cancelled = true;
    for (auto& op : live)
      if (op) ops.push_back(op);
    return ops;
  }

  void cancel_all() {
    for (auto& op : running_calls(true)) op->cancel("cancelled by the caller");
  }

  void expire_all() {
    for (auto& op : running_calls(false)) op->expire();
  }
};

}  // namespace

void start_fanout(const std::shared_ptr<dendrite_state>& st, std::vector<mixed_request> requests,
                  std::vector<mixed_slot> slots, double timeout,
                  boost::asio::any_completion_handler<void()> handler) {
  auto f = std::make_shared<dendrite_fanout>();
  f->st = st;
  f->requests = std::move(requests);
  f->slots = std::move(slots);
  f->timeout = timeout;
  f->deadline = dendrite_deadline_after(timeout);
  f->live.resize(f->requests.size());
  // One call alone gains nothing from another thread (and would wait for the hand-off).
  if (f->requests.size() > 1) f->signer = st->fanout_signer();
  f->done.emplace(std::move(handler), st->ex);
  if (f->requests.empty()) {
    // Complete through the executor, never inside the initiating function.
    boost::asio::post(st->ex, [f] {
      std::optional<dendrite_completion> c;
      c.swap(f->done);
      c->complete();
    });
    return;
  }
  if (f->done->slot.is_connected()) {
    f->done->slot.assign([w = std::weak_ptr<dendrite_fanout>(f)](boost::asio::cancellation_type) {
      if (auto sp = w.lock()) sp->cancel_all();
    });
  }
  f->keep_alive = f;
  f->deadline_timer.emplace(st->ex, f->deadline);
  f->deadline_timer->async_wait([f](boost::system::error_code e) {
    if (e != boost::asio::error::operation_aborted) f->expire_all();
  });
  f->launch_more();
}

}  // namespace bt::detail
