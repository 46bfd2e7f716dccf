// The Python side of bittensor_cpp.Axon's routes (axon_routes.hpp): a synapse route's forward,
// plain, streaming or async, and a plain JSON route's handler. Python exceptions become the
// axon's answers here (ForwardError's own status, or a 500 with a logged id); the threading and
// GIL rules are axon.cpp's.
#include "axon_routes.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>

namespace btpy {

namespace net = boost::asio;

namespace {

/// bittensor_cpp.ForwardError(status, message): the handler's own answer (bt::forward_error),
/// any status from 400 to 599; anything else a handler raises is a 500 with a logged id.
[[noreturn]] void internal_error(py::error_already_set& e, std::string_view route_name,
                                 const char* what) {
  if (e.matches(py::module_::import("bittensor_cpp").attr("ForwardError"))) {
    py::object v = e.value();
    const auto status = v.attr("status").cast<std::int64_t>();
    const auto message = py::str(v.attr("message")).cast<std::string>();
    if (status >= 400 && status <= 599) throw bt::forward_error(static_cast<int>(status), message);
  }
  const std::string id =
      log_python_exception(e, std::string(what) + " of " + std::string(route_name));
  throw bt::forward_error(500, "Internal Server Error #" + id);
}

/// Copies what the Python forward produced into the answer. GIL held.
void apply_result(const synapse_route& r, bt::dynamic_synapse& s, const py_synapse& obj,
                  py::handle pyobj, py::handle ret) {
  if (ret.is_none() || ret.is(pyobj)) {
    s = obj.s;
    return;
  }
  if (py::isinstance<py_synapse>(ret)) {
    const auto& other = ret.cast<const py_synapse&>();
    if (other.type == r.type) {
      s = other.s;
      return;
    }
  }
  PyErr_SetString(PyExc_TypeError, ("forward returned " +
                                    py::str(ret.get_type().attr("__name__")).cast<std::string>() +
                                    ", expected None or a " + r.type->name() + " synapse")
                                       .c_str());
  py::error_already_set e;
  internal_error(e, r.type->name(), "forward");
}

}  // namespace

std::shared_ptr<py_synapse> header_view(const synapse_route& r, const bt::synapse& h,
                                        const bt::request_context& c) {
  auto obj = make_synapse(r.type);
  static_cast<bt::synapse&>(obj->s) = h;
  obj->s.dendrite.hotkey = std::string(c.hotkey);  // the verified caller
  return obj;
}

void sync_forward(const std::shared_ptr<synapse_route>& r, bt::dynamic_synapse& s) {
  if (auto e = r->type->check_values(s); !e.empty()) throw bt::forward_error(400, e);
  py::gil_scoped_acquire g;
  auto obj = wrap_synapse(r->type, s);
  py::object pyobj = py::cast(obj);
  py::object ret;
  try {
    ret = r->forward.obj(pyobj);
  } catch (py::error_already_set& e) {
    internal_error(e, r->type->name(), "forward");
  }
  apply_result(*r, s, *obj, pyobj, ret);
}

void stream_forward(const std::shared_ptr<synapse_route>& r, bt::dynamic_synapse& s,
                    bt::stream_writer& w) {
  if (auto e = r->type->check_values(s); !e.empty()) throw bt::forward_error(400, e);
  auto writer = std::make_shared<py_stream_writer>(w);
  // Declared before the GIL is taken: it runs after the GIL is released again, on every way out
  // (a return, a Python exception turned into a forward_error).
  struct finish_sends {
    py_stream_writer& p;
    ~finish_sends() { p.finish(); }
  } finish{*writer};
  py::gil_scoped_acquire g;
  py::object pyobj = py::cast(wrap_synapse(r->type, s));
  try {
    r->forward.obj(pyobj, py::cast(writer));
  } catch (py::error_already_set& e) {
    internal_error(e, r->type->name(), "streaming forward");
  }
}

namespace {

/// Shared by an async forward's coroutine and the done-callback of its Python future. The
/// callback is a Python object: it may run, and be destroyed, after the axon and its io_contexts
/// are gone, so it owns no timer nor executor. While the coroutine's frame lives, `wake` posts
/// the cancellation of the frame's timer to the frame's strand; the frame takes `wake` away when
/// it ends (a return, or its destruction with the io_context), and the callback calls it only
/// while the axon is alive (axon_liveness), so nothing is ever posted to a dead io_context.
struct async_wait {
  std::atomic<bool> done{false};
  std::mutex m;
  std::function<void()> wake;  ///< guarded by m
};

}  // namespace

net::awaitable<void> async_forward(std::shared_ptr<synapse_route> r, bt::dynamic_synapse& s) {
  if (auto e = r->type->check_values(s); !e.empty()) throw bt::forward_error(400, e);
  auto ex = co_await net::this_coro::executor;
  auto timer =
      std::make_shared<net::steady_timer>(ex, std::chrono::steady_clock::time_point::max());
  auto w = std::make_shared<async_wait>();
  {
    std::lock_guard l(w->m);
    // The timer is touched only on the coroutine's strand: the wake-up is posted there.
    w->wake = [ex, weak = std::weak_ptr<net::steady_timer>(timer)] {
      net::post(ex, [weak] {
        if (auto t = weak.lock()) t->cancel();
      });
    };
  }
  struct unhook {
    async_wait& w;
    ~unhook() {
      std::lock_guard l(w.m);
      w.wake = nullptr;  // drops the strand's copy while the io_context is alive
    }
  } const unhook_wake{*w};
  std::shared_ptr<py_synapse> obj;
  gil_object pyobj, fut;
  bool finished = false;
  {
    py::gil_scoped_acquire g;
    obj = wrap_synapse(r->type, s);
    pyobj.obj = py::cast(obj);
    try {
      py::object ret = r->forward.obj(pyobj.obj);
      if (!py::module_::import("inspect").attr("iscoroutine")(ret).cast<bool>()) {
        apply_result(*r, s, *obj, pyobj.obj, ret);
        finished = true;
      } else {
        fut.obj = py::module_::import("asyncio").attr("run_coroutine_threadsafe")(ret, r->loop.obj);
        fut.obj.attr("add_done_callback")(py::cpp_function([w, liveness = r->liveness](py::handle) {
          w->done = true;
          std::lock_guard a(liveness->m);
          if (!liveness->alive) return;
          std::lock_guard l(w->m);
          if (w->wake) w->wake();
        }));
      }
    } catch (py::error_already_set& e) {
      internal_error(e, r->type->name(), "forward");
    }
  }
  if (finished) co_return;
  if (!w->done) co_await timer->async_wait(net::as_tuple(net::use_awaitable));
  py::gil_scoped_acquire g;
  if (!w->done) {
    // The axon gave up on the request (deadline: 408 already sent, or shutdown).
    fut.obj.attr("cancel")();
    co_return;
  }
  py::object ret;
  try {
    ret = fut.obj.attr("result")(0);
  } catch (py::error_already_set& e) {
    internal_error(e, r->type->name(), "forward");
  }
  apply_result(*r, s, *obj, pyobj.obj, ret);
}

namespace {

/// The handler's (status, body) as the axon's answer; anything else is a 500 with a logged id.
/// GIL held.
bt::json_reply reply_from(const json_route& r, py::handle ret) {
  std::string problem;
  if (!py::isinstance<py::tuple>(ret) || py::len(ret) != 2) {
    problem = "a route handler returns a (status, body) tuple, not " +
              py::str(ret.get_type().attr("__name__")).cast<std::string>();
  } else {
    auto t = py::reinterpret_borrow<py::tuple>(ret);
    long long status = 0;
    if (PyLong_Check(t[0].ptr()) && !PyBool_Check(t[0].ptr())) {
      int overflow = 0;
      status = PyLong_AsLongLongAndOverflow(t[0].ptr(), &overflow);
      if (overflow != 0) status = 0;
    }
    if (status < 100 || status > 599) {
      problem = "a route handler's status must be an int from 100 to 599, not " +
                py::repr(t[0]).cast<std::string>();
    } else {
      try {
        return bt::json_reply{static_cast<int>(status), to_json_any(t[1], "body")};
      } catch (py::error_already_set& e) {
        internal_error(e, r.path, "handler");
      } catch (py::builtin_exception& e) {
        e.set_error();
        py::error_already_set err;
        internal_error(err, r.path, "handler");
      }
    }
  }
  PyErr_SetString(PyExc_TypeError, problem.c_str());
  py::error_already_set e;
  internal_error(e, r.path, "handler");
}

/// Set from the loop's thread when an async handler's future is done; waited for by the worker.
struct async_done {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
};

}  // namespace

/// Runs the Python handler of a plain JSON route on the worker pool. An `async def` handler runs
/// on the route's loop while this worker waits for it with the GIL released, until the request's
/// deadline or the axon's cancellation (json_handler is synchronous; the worker is held).
bt::json_reply json_call(const std::shared_ptr<json_route>& r, std::string_view body,
                         const bt::json& parsed, const bt::request_context& c) {
  py::gil_scoped_acquire g;
  py::object ret;
  try {
    ret = r->handler.obj(py::bytes(body.data(), body.size()), from_json(parsed),
                         py::cast(py_request_context(c)));
  } catch (py::error_already_set& e) {
    internal_error(e, r->path, "handler");
  } catch (py::builtin_exception& e) {  // from_json: a body nested deeper than max_json_depth()
    e.set_error();
    py::error_already_set err;
    internal_error(err, r->path, "handler");
  }
  if (!r->loop.obj || !py::module_::import("inspect").attr("iscoroutine")(ret).cast<bool>())
    return reply_from(*r, ret);

  auto w = std::make_shared<async_done>();
  py::object fut;
  try {
    fut = py::module_::import("asyncio").attr("run_coroutine_threadsafe")(ret, r->loop.obj);
    fut.attr("add_done_callback")(py::cpp_function([w](py::handle) {
      {
        std::lock_guard l(w->m);
        w->done = true;
      }
      w->cv.notify_all();
    }));
  } catch (py::error_already_set& e) {
    internal_error(e, r->path, "handler");
  }
  bool done = false;
  {
    py::gil_scoped_release unlocked;
    std::unique_lock l(w->m);
    // Slices, so that the axon's cancellation (shutdown past the drain deadline) is seen.
    while (!w->done && !c.expired())
      w->cv.wait_for(l, std::min<std::chrono::steady_clock::duration>(
                            c.remaining(), std::chrono::milliseconds(50)));
    done = w->done;
  }
  if (!done) {
    fut.attr("cancel")();  // the axon answered 408 (or is stopping): CancelledError inside
    throw bt::forward_error(408, "the handler did not finish before the request's deadline");
  }
  try {
    ret = fut.attr("result")(0);
  } catch (py::error_already_set& e) {
    internal_error(e, r->path, "handler");
  }
  return reply_from(*r, ret);
}

}  // namespace btpy
