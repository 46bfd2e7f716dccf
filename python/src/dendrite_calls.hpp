// The life-cycle pieces of bittensor_cpp.Dendrite's calls (dendrite.cpp): the gate that
// Dendrite.close() shuts and waits on, and the asyncio future a C++ completion resolves. Internal
// to the module.
#pragma once

#include "common.hpp"

#include <bt/dendrite.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace btpy {

/// What Dendrite.close() waits for. Every use of the C++ dendrite from a Python thread that
/// releases the GIL (a blocking call, starting an asynchronous one, an asyncio cancellation)
/// holds a ticket; close() closes the gate, which cancels the blocking calls registered with
/// on_close() and waits until every ticket is returned, and only then destroys the dendrite. So
/// no thread ever uses a dendrite that close() is destroying, and close() returns once every
/// call it cut short has returned. Shared (shared_ptr) with the asyncio callbacks, which may run
/// after the Dendrite object is gone.
class call_gate {
 public:
  class ticket {
   public:
    ticket() = default;
    ticket(ticket&& o) noexcept : g_(std::move(o.g_)) {}
    ticket& operator=(ticket&&) = delete;
    ~ticket() {
      if (g_) g_->leave();
    }
    /// False once the gate is closing (nothing may start on the dendrite any more).
    bool enter(const std::shared_ptr<call_gate>& g) {
      if (!g->try_enter()) return false;
      g_ = g;
      return true;
    }

   private:
    std::shared_ptr<call_gate> g_;
  };

  /// Registers the cancellation of a running blocking call; it runs at once if the gate is
  /// already closing. `cancel` must not block (it posts the cancellation signal's emission).
  std::uint64_t on_close(std::function<void()> cancel) {
    std::lock_guard l(m_);
    if (closed_) {
      cancel();
      return 0;
    }
    cancels_.emplace(++next_id_, std::move(cancel));
    return next_id_;
  }
  void forget(std::uint64_t id) {
    std::lock_guard l(m_);
    cancels_.erase(id);
  }

  /// Without the GIL: a ticket holder may need it to finish (it builds Python results).
  void close() {
    std::unique_lock l(m_);
    closed_ = true;
    for (auto& [id, cancel] : cancels_) cancel();
    cancels_.clear();
    idle_.wait(l, [this] { return users_ == 0; });
  }

 private:
  bool try_enter() {
    std::lock_guard l(m_);
    if (closed_) return false;
    ++users_;
    return true;
  }
  void leave() {
    {
      std::lock_guard l(m_);
      --users_;
    }
    idle_.notify_all();
  }

  std::mutex m_;
  std::condition_variable idle_;
  std::size_t users_ = 0;  // guarded by m_, as the rest
  bool closed_ = false;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, std::function<void()>> cancels_;
};

/// An asyncio future of the caller's running loop, resolved by a C++ completion. `start(token)`
/// initiates the operation (GIL released) with a completion token bound to a strand of its own
/// and to a cancellation slot; the completion (a dendrite I/O thread) takes the GIL only to run
/// `to_py(result)` and hand it to loop.call_soon_threadsafe. Cancelling the future emits the
/// cancellation signal on that strand, where the completion runs and the dendrite clears the
/// slot, so emission and completion never run at once. RuntimeError outside a coroutine.
/// The cancellation is posted only while the dendrite is alive (a ticket of `gate`); once it is
/// closing, its destruction cancels the call anyway.
template <class Result, class ToPy, class Start>
py::object loop_future(bt::dendrite& d, const std::shared_ptr<call_gate>& gate, ToPy to_py,
                       Start&& start) {
  py::module_ asyncio = py::module_::import("asyncio");
  py::object loop = asyncio.attr("get_running_loop")();
  py::object fut = loop.attr("create_future")();

  // Owned by the C++ completion handler; the future's done-callback holds it weakly. The strand
  // lives here, not in the callback: a strand must not outlive the dendrite's io_context, and
  // the callback (a Python object) may outlive it.
  struct call_state {
    boost::asio::cancellation_signal cancel;
    gil_object loop, fut;
    boost::asio::any_io_executor strand;
  };
  auto st = std::make_shared<call_state>();
  st->loop.obj = loop;
  st->fut.obj = fut;
  st->strand = boost::asio::make_strand(d.get_executor());

  auto handler = [st, to_py = std::move(to_py)](Result r) mutable {
    py::gil_scoped_acquire g;
    try {
      // A closed loop (asyncio.run returned after a cancellation): nobody is waiting.
      if (!st->loop.obj.attr("is_closed")().template cast<bool>()) {
        py::object result = to_py(std::move(r));
        auto resolve = py::cpp_function([](py::object f, py::object v) {
          if (!f.attr("done")().cast<bool>()) f.attr("set_result")(v);
        });
        st->loop.obj.attr("call_soon_threadsafe")(resolve, st->fut.obj, result);
      }
    } catch (py::error_already_set& e) {
      // The loop closed between the check and the call: nobody is waiting any more.
      e.discard_as_unraisable("bittensor_cpp.Dendrite: completing an awaited call");
    }
    st->loop.obj = py::object();
    st->fut.obj = py::object();
  };
  const boost::asio::any_io_executor strand = st->strand;
  std::weak_ptr<call_state> weak = st;
  fut.attr("add_done_callback")(py::cpp_function([weak, gate](py::object f) {
    if (!f.attr("cancelled")().cast<bool>()) return;
    // The ticket first: `s` may be the state's last owner, and must go while the dendrite (the
    // io_context of its strand) is alive.
    call_gate::ticket t;
    if (!t.enter(gate)) return;  // closing: the dendrite's destruction ends the call
    auto s = weak.lock();
    if (!s) return;  // already completed
    boost::asio::post(s->strand, [s] { s->cancel.emit(boost::asio::cancellation_type::terminal); });
  }));
  {
    py::gil_scoped_release r;
    start(boost::asio::bind_cancellation_slot(
        st->cancel.slot(), boost::asio::bind_executor(strand, std::move(handler))));
  }
  return fut;
}

/// The awaitable an async call returns. `start()` initiates the call and returns its
/// loop_future. Called inside a running loop, `start()` runs now: the call is under way before
/// the first await, as with any asyncio future. Called with no loop running (the argument of
/// `asyncio.run(d.forward(...))` is evaluated before the loop exists), a coroutine that runs
/// `start()` on its first await, in the loop that awaits it.
inline py::object awaitable_in_running_loop(const py::object& start) {
  if (!py::module_::import("asyncio").attr("_get_running_loop")().is_none()) return start();
  return py::module_::import("bittensor_cpp").attr("_start_when_awaited")(start);
}

}  // namespace btpy
