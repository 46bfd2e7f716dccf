// The routes of bittensor_cpp.Axon (axon.cpp) and their adapters: the Python forward, stream and
// JSON handler calls (axon_forward.cpp) and the blacklist/priority callbacks (axon_policy.cpp).
// Internal to the module.
#pragma once

#include "common.hpp"

#include <bt/axon.hpp>

#include <boost/asio/awaitable.hpp>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace btpy {

/// Whether the axon's io_contexts may still be posted to. py_axon::stop() clears it, under m,
/// before it destroys the axon; code that may run later (a Python done-callback) posts only
/// while holding m with `alive` set.
struct axon_liveness {
  std::mutex m;
  bool alive = true;  ///< guarded by m
};

struct synapse_route {
  std::shared_ptr<const synapse_type> type;
  gil_object forward, blacklist, priority;
  gil_object loop;                          ///< async forward only: the loop it runs on
  std::shared_ptr<axon_liveness> liveness;  ///< the axon's (async forward only)
};

/// The `send` a streaming forward receives. Python may keep it past the forward (a thread the
/// forward started, a stored reference): send() then raises RuntimeError. The axon ends the
/// stream, and frees the writer, once the forward has returned, so the forward's end waits for
/// the sends already running (finish()); a send is bounded by the stream's own limits (the
/// request's deadline, write_timeout), so that wait is too.
struct py_stream_writer {
  explicit py_stream_writer(bt::stream_writer& w) : w_(w) {}

  bool send(py::handle data) {
    std::string bytes;
    if (py::isinstance<py::str>(data))
      bytes = data.cast<std::string>();
    else if (py::isinstance<py::bytes>(data))
      bytes = std::string(data.cast<py::bytes>());
    else
      throw py::type_error("send() takes bytes or str, not " +
                           py::str(data.get_type().attr("__name__")).cast<std::string>());
    {
      std::lock_guard l(m_);
      if (finished_)
        throw std::runtime_error(
            "send() called after the streaming forward returned (the stream is over; a thread "
            "the forward starts must be done before it returns)");
      ++sending_;
    }
    py::gil_scoped_release r;
    // The count drops before the GIL is taken back: finish() waits without the GIL.
    struct done {
      py_stream_writer& p;
      ~done() {
        {
          std::lock_guard l(p.m_);
          --p.sending_;
        }
        p.idle_.notify_all();
      }
    } guard{*this};
    return w_.send_blocking(bytes);
  }

  bool open() {
    std::lock_guard l(m_);
    return !finished_ && w_.is_open();
  }

  /// Called when the forward has returned, without the GIL: later sends raise, and the sends
  /// running now are waited for (they use w_, which the axon frees after the forward).
  void finish() {
    std::unique_lock l(m_);
    finished_ = true;
    idle_.wait(l, [this] { return sending_ == 0; });
  }

 private:
  bt::stream_writer& w_;
  std::mutex m_;
  std::condition_variable idle_;
  std::size_t sending_ = 0;  ///< send() calls inside send_blocking, guarded by m_
  bool finished_ = false;    ///< guarded by m_
};

/// The verified caller of a plain JSON route (bittensor_cpp.RequestContext): a copy of
/// bt::request_context's fields, whose views are valid during the call only.
struct py_request_context {
  std::string hotkey, uuid, ip, path;
  std::int64_t nonce = 0;
  std::uint16_t port = 0;
  bool verified = false;

  explicit py_request_context(const bt::request_context& c)
      : hotkey(c.hotkey),
        uuid(c.uuid),
        ip(c.ip),
        path(c.synapse_name),
        nonce(c.nonce),
        port(c.port),
        verified(c.verified) {}
};

/// A plain JSON route (Axon.route): the Python handler and policy.
struct json_route {
  std::string path;
  gil_object handler, blacklist, priority;
  gil_object loop;  ///< async handler only: the loop it runs on
};

/// The Python forward of a synapse route: plain (on the worker pool), streaming, or async
/// (`async def`, run on the route's loop and awaited without holding a thread).
void sync_forward(const std::shared_ptr<synapse_route>& r, bt::dynamic_synapse& s);
void stream_forward(const std::shared_ptr<synapse_route>& r, bt::dynamic_synapse& s,
                    bt::stream_writer& w);
boost::asio::awaitable<void> async_forward(std::shared_ptr<synapse_route> r,
                                           bt::dynamic_synapse& s);

/// The synapse a route's blacklist and priority see: the request's headers, with the verified
/// caller's hotkey.
std::shared_ptr<py_synapse> header_view(const synapse_route& r, const bt::synapse& h,
                                        const bt::request_context& c);

/// Runs the Python handler of a plain JSON route on the worker pool. An `async def` handler runs
/// on the route's loop while this worker waits for it with the GIL released, until the request's
/// deadline or the axon's cancellation (json_handler is synchronous; the worker is held).
bt::json_reply json_call(const std::shared_ptr<json_route>& r, std::string_view body,
                         const bt::json& parsed, const bt::request_context& c);

/// The route's blacklist and priority as bt::route_options (unset when None).
bt::route_options make_policy(const std::shared_ptr<synapse_route>& r);

/// blacklist(ctx) -> bool or (bool, reason); priority(ctx) -> float, as make_policy's.
bt::json_route_options make_json_policy(const std::shared_ptr<json_route>& r, double timeout);

/// blacklist and priority of a route: None or a plain (not async) callable, since they run on the
/// axon's I/O threads before the body is read. Returns inspect.iscoroutinefunction for the caller.
py::object check_policy_callables(const py::object& blacklist, const py::object& priority);

/// A new route's blacklist and priority, checked by check_policy_callables and kept (None:
/// unset) in `r`. Returns inspect.iscoroutinefunction for the caller.
template <class Route>
py::object take_policy_callables(Route& r, const py::object& blacklist,
                                 const py::object& priority) {
  py::object iscoro = check_policy_callables(blacklist, priority);
  r.blacklist.obj = blacklist.is_none() ? py::object() : blacklist;
  r.priority.obj = priority.is_none() ? py::object() : priority;
  return iscoro;
}

}  // namespace btpy
