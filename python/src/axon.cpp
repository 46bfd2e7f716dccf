// bittensor_cpp.Axon over bt::axon: Python forward/blacklist/priority functions on routes of
// SynapseTypes.
//
// The GIL is taken only to run a Python callable and to build its argument; header parsing,
// signature checks, body reading and the field type checks (synapse_type::check_values: a
// request whose values do not fit the declared types is answered 400 before any Python runs)
// never hold it. A plain `def` forward runs on the axon's worker pool; an `async def` forward
// runs on an asyncio loop (the axon's own, a thread running loop.run_forever(), or the one
// given), awaited by a C++ coroutine that holds no thread meanwhile. A Python exception, or a
// return value that is neither None nor a synapse of the route's type, is answered
// 500 "Internal Server Error #<id>" and logged with its traceback on the logger "bittensor_cpp";
// the axon keeps serving. The request's deadline answers 408 whether or not Python returned
// (an async forward is then cancelled; a plain one runs on, its result discarded). stop() does
// not wait for a plain forward past drain_timeout: it is abandoned and named in a warning.
//
// Plain JSON routes (Axon.route, over bt::axon::route: Epistula v2) follow the same rules; their
// handler gets the body bytes, the parsed JSON and the verified caller (RequestContext) and
// returns (status, body). bt::json_handler is synchronous, so an `async def` handler runs on the
// loop while its worker waits with the GIL released (until the deadline, then it is cancelled).
#include "common.hpp"
#include "keyword_options.hpp"

#include <bt/axon.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace btpy {
namespace {

namespace net = boost::asio;

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

/// blacklist(ctx) -> bool or (bool, reason); priority(ctx) -> float, as make_policy's.
bt::json_route_options make_json_policy(const std::shared_ptr<json_route>& r, double timeout) {
  bt::json_route_options policy;
  if (!std::isfinite(timeout) || timeout <= 0)
    throw py::value_error("timeout must be a positive number of seconds");
  policy.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(timeout * 1000)));
  if (r->blacklist.obj) {
    policy.blacklist = [r](const bt::request_context& c) -> bt::verdict {
      py::gil_scoped_acquire g;
      try {
        py::object v = r->blacklist.obj(py::cast(py_request_context(c)));
        if (PyBool_Check(v.ptr()))
          return v.ptr() == Py_True ? bt::verdict::deny("blacklisted") : bt::verdict::allow();
        auto t = v.cast<std::pair<bool, std::string>>();
        return t.first ? bt::verdict::deny(t.second) : bt::verdict::allow();
      } catch (py::error_already_set& e) {
        return bt::verdict::deny("Internal Server Error #" +
                                 log_python_exception(e, "blacklist of " + r->path));
      } catch (py::cast_error&) {
        PyErr_SetString(PyExc_TypeError, "blacklist must return a bool or a (bool, str) tuple");
        py::error_already_set e;
        return bt::verdict::deny("Internal Server Error #" +
                                 log_python_exception(e, "blacklist of " + r->path));
      }
    };
  }
  if (r->priority.obj) {
    policy.priority = [r](const bt::request_context& c) -> double {
      py::gil_scoped_acquire g;
      try {
        return r->priority.obj(py::cast(py_request_context(c))).cast<double>();
      } catch (py::error_already_set& e) {
        log_python_exception(e, "priority of " + r->path);
      } catch (py::cast_error&) {
        PyErr_SetString(PyExc_TypeError, "priority must return a number");
        py::error_already_set e;
        log_python_exception(e, "priority of " + r->path);
      }
      return 0.0;
    };
  }
  return policy;
}

/// The keyword options of Axon(): every value field of bt::axon_options' table by its name
/// (durations in seconds), except ip and port, which are arguments of their own.
bt::axon_options options_from(const std::string& ip, std::int64_t port, const py::kwargs& kw) {
  bt::axon_options o;
  o.ip = ip;
  if (port < 0 || port > 65535) throw py::value_error("port out of range: " + std::to_string(port));
  o.port = static_cast<std::uint16_t>(port);
  o.io_threads = 2;
  apply_keywords(o, bt::axon_options::option_table(), kw, "Axon()", {"ip", "port"},
                 [](auto& opts, const auto& m, py::handle v) { return set_option(opts, m, v); });
  return o;
}

/// The route's blacklist and priority as bt::route_options (unset when None).
bt::route_options make_policy(const std::shared_ptr<synapse_route>& r) {
  bt::route_options policy;
  if (r->blacklist.obj) {
    policy.blacklist = [r](const bt::synapse& h, const bt::request_context& c) -> bt::verdict {
      py::gil_scoped_acquire g;
      try {
        py::object v = r->blacklist.obj(py::cast(header_view(*r, h, c)));
        if (PyBool_Check(v.ptr()))
          return v.ptr() == Py_True ? bt::verdict::deny("blacklisted") : bt::verdict::allow();
        auto t = v.cast<std::pair<bool, std::string>>();  // bittensor's (blacklisted, reason)
        return t.first ? bt::verdict::deny(t.second) : bt::verdict::allow();
      } catch (py::error_already_set& e) {
        return bt::verdict::deny("Internal Server Error #" +
                                 log_python_exception(e, "blacklist of " + r->type->name()));
      } catch (py::cast_error&) {
        PyErr_SetString(PyExc_TypeError, "blacklist must return a bool or a (bool, str) tuple");
        py::error_already_set e;
        return bt::verdict::deny("Internal Server Error #" +
                                 log_python_exception(e, "blacklist of " + r->type->name()));
      }
    };
  }
  if (r->priority.obj) {
    policy.priority = [r](const bt::synapse& h, const bt::request_context& c) -> double {
      py::gil_scoped_acquire g;
      try {
        return r->priority.obj(py::cast(header_view(*r, h, c))).cast<double>();
      } catch (py::error_already_set& e) {
        log_python_exception(e, "priority of " + r->type->name());
      } catch (py::cast_error&) {
        PyErr_SetString(PyExc_TypeError, "priority must return a number");
        py::error_already_set e;
        log_python_exception(e, "priority of " + r->type->name());
      }
      return 0.0;
    };
  }
  return policy;
}

/// blacklist and priority of a route: None or a plain (not async) callable, since they run on the
/// axon's I/O threads before the body is read. Returns inspect.iscoroutinefunction for the caller.
py::object check_policy_callables(const py::object& blacklist, const py::object& priority) {
  for (const py::object* f : {&blacklist, &priority})
    if (!f->is_none() && !PyCallable_Check(f->ptr()))
      throw py::type_error("blacklist and priority must be callable or None");
  py::object iscoro = py::module_::import("inspect").attr("iscoroutinefunction");
  if (iscoro(blacklist).cast<bool>() || iscoro(priority).cast<bool>())
    throw py::type_error(
        "blacklist and priority must be plain functions (they run on the "
        "axon's I/O threads before the body is read)");
  return iscoro;
}

class py_axon {
 public:
  py_axon(const bt::keypair& kp, bt::axon_options o, py::object loop) {
    if (!kp.has_secret()) throw bt_py_error("Axon: the keypair has no secret key");
    ax_ = std::make_unique<bt::axon>(kp, std::move(o));
    if (!loop.is_none()) loop_.obj = std::move(loop);
  }
  ~py_axon() { stop(); }

  void attach(std::shared_ptr<synapse_type> type, py::object forward, py::object blacklist,
              py::object priority, bool streaming) {
    if (!ax_) throw py::value_error("Axon is stopped");
    if (!PyCallable_Check(forward.ptr())) throw py::type_error("forward must be callable");
    const py::object iscoro = check_policy_callables(blacklist, priority);
    auto r = std::make_shared<synapse_route>();
    r->type = type;
    r->forward.obj = forward;
    r->blacklist.obj = blacklist.is_none() ? py::object() : blacklist;
    r->priority.obj = priority.is_none() ? py::object() : priority;
    const bool is_async = iscoro(forward).cast<bool>();
    if (streaming && is_async)
      throw py::type_error(
          "a streaming forward is a plain function forward(s, send) (it runs "
          "on the worker pool; send() blocks until the chunk is written)");
    if (is_async) {
      r->loop.obj = ensure_loop();
      r->liveness = liveness_;
    }

    bt::route_options policy = make_policy(r);
    if (streaming) {
      ax_->attach(
          type->descriptor,
          [r](bt::dynamic_synapse& s, bt::stream_writer& w, const bt::request_context&) {
            stream_forward(r, s, w);
          },
          std::move(policy));
    } else if (is_async) {
      ax_->attach(
          type->descriptor,
          [r](bt::dynamic_synapse& s, const bt::request_context&) { return async_forward(r, s); },
          std::move(policy));
    } else {
      ax_->attach(
          type->descriptor,
          [r](bt::dynamic_synapse& s, const bt::request_context&) { sync_forward(r, s); },
          std::move(policy));
    }
    routes_.push_back(std::move(r));
  }

  void route(const std::string& method, const std::string& path, py::object handler,
             py::object blacklist, py::object priority, double timeout) {
    if (!ax_) throw py::value_error("Axon is stopped");
    if (!PyCallable_Check(handler.ptr())) throw py::type_error("handler must be callable");
    const py::object iscoro = check_policy_callables(blacklist, priority);
    auto r = std::make_shared<json_route>();
    r->path = path;
    r->handler.obj = handler;
    r->blacklist.obj = blacklist.is_none() ? py::object() : blacklist;
    r->priority.obj = priority.is_none() ? py::object() : priority;
    if (iscoro(handler).cast<bool>()) r->loop.obj = ensure_loop();
    ax_->route(
        method, path,
        [r](std::string_view body, const bt::json& parsed, const bt::request_context& c) {
          return json_call(r, body, parsed, c);
        },
        make_json_policy(r, timeout));
    json_routes_.push_back(std::move(r));
  }

  /// Replaces the blacklist and priority of an attached route, e.g. the built-in "Synapse" ping
  /// (its forward stays the axon's own).
  void set_policy(const std::string& name, py::object blacklist, py::object priority) {
    if (!ax_) throw py::value_error("Axon is stopped");
    for (auto* f : {&blacklist, &priority})
      if (!f->is_none() && !PyCallable_Check(f->ptr()))
        throw py::type_error("blacklist and priority must be callable or None");
    auto r = std::make_shared<synapse_route>();
    for (const auto& x : routes_)
      if (x->type->name() == name) r->type = x->type;
    if (!r->type) {
      if (name != "Synapse") throw py::value_error("no route '" + name + "' is attached");
      r->type = py::module_::import("bittensor_cpp")
                    .attr("SynapseType")("Synapse", py::dict())
                    .cast<std::shared_ptr<synapse_type>>();
    }
    r->blacklist.obj = blacklist.is_none() ? py::object() : blacklist;
    r->priority.obj = priority.is_none() ? py::object() : priority;
    ax_->set_route_options(name, make_policy(r));
    routes_.push_back(std::move(r));
  }

  void start() {
    if (!ax_) throw py::value_error("Axon is stopped (an axon cannot be restarted)");
    if (own_loop_ && !loop_thread_.obj) {
      loop_thread_.obj =
          py::module_::import("threading")
              .attr("Thread")(py::arg("target") = loop_.obj.attr("run_forever"),
                              py::arg("name") = "bt-axon-asyncio", py::arg("daemon") = true);
      loop_thread_.obj.attr("start")();
    }
    py::gil_scoped_release r;
    ax_->start();
  }

  /// Bounded by drain_timeout (plus grace periods of about a second): a plain handler that has
  /// not returned by then is abandoned by bt::axon::stop() and named in a warning on the logger
  /// "bittensor_cpp". Its worker thread keeps the route (and so the Python callables) alive
  /// until it returns: bt::axon's destructor hands its state to that thread.
  void stop() {
    if (ax_) {
      std::vector<std::string> abandoned;
      {
        py::gil_scoped_release r;
        ax_->stop();
        abandoned = ax_->abandoned_handlers();
        {
          std::lock_guard l(liveness_->m);
          liveness_->alive = false;  // async forwards' done-callbacks post nothing from now on
        }
        ax_.reset();  // drops the routes' std::functions (unless a stuck handler holds them);
                      // their Python objects take the GIL
      }
      routes_.clear();
      json_routes_.clear();
      if (!abandoned.empty()) {
        py::list names;
        for (const auto& n : abandoned) names.append(n);
        py::module_::import("logging")
            .attr("getLogger")("bittensor_cpp")
            .attr("warning")(
                "Axon.stop(): %d handler(s) had not returned by the drain deadline and were "
                "abandoned (their results are dropped; each keeps its worker thread until it "
                "returns): %s",
                names.size(), py::str(", ").attr("join")(names));
      }
    }
    if (own_loop_ && loop_.obj) {
      if (loop_thread_.obj) {
        loop_.obj.attr("call_soon_threadsafe")(loop_.obj.attr("stop"));
        loop_thread_.obj.attr("join")();
        loop_thread_.obj = py::object();
      }
      loop_.obj.attr("close")();
      loop_.obj = py::object();
    }
  }

  bool running() const { return ax_ && ax_->running(); }

  bt::axon& get() {
    if (!ax_) throw py::value_error("Axon is stopped");
    return *ax_;
  }

 private:
  py::object ensure_loop() {
    if (!loop_.obj) {
      loop_.obj = py::module_::import("asyncio").attr("new_event_loop")();
      own_loop_ = true;
    }
    return loop_.obj;
  }

  std::unique_ptr<bt::axon> ax_;
  std::vector<std::shared_ptr<synapse_route>> routes_;
  std::vector<std::shared_ptr<json_route>> json_routes_;
  gil_object loop_, loop_thread_;
  bool own_loop_ = false;
  std::shared_ptr<axon_liveness> liveness_ = std::make_shared<axon_liveness>();
};

}  // namespace

void init_axon(py::module_& m) {
  py::exec(R"(
class ForwardError(Exception):
    """Raised by a forward function to answer with its own status (400 to 599) and message,
    as bittensor's SynapseException; any other exception is a 500 with a logged error id."""

    def __init__(self, status, message):
        if type(status) is not int or not 400 <= status <= 599:
            raise ValueError("ForwardError: status must be an int from 400 to 599")
        super().__init__(status, message)
        self.status = status
        self.message = str(message)
)",
           m.attr("__dict__"));
  py::class_<py_stream_writer, std::shared_ptr<py_stream_writer>>(
      m, "StreamWriter", "The send of a streaming forward(s, send), valid during the call.")
      .def("__call__", &py_stream_writer::send, py::arg("data"),
           "Sends data (bytes, or str as UTF-8) as one chunk once written to the socket; False "
           "once the stream is over (client gone, deadline, shutdown): then return. Raises "
           "RuntimeError once the forward has returned (its end waits for sends running).")
      .def_property_readonly("open", &py_stream_writer::open);
  py::class_<py_request_context>(
      m, "RequestContext",
      "The verified caller of a plain JSON route (Axon.route): hotkey is the Epistula-Signed-By "
      "address whose signature was checked.")
      .def_readonly("hotkey", &py_request_context::hotkey)
      .def_readonly("uuid", &py_request_context::uuid)
      .def_readonly("nonce", &py_request_context::nonce)
      .def_readonly("ip", &py_request_context::ip)
      .def_readonly("port", &py_request_context::port)
      .def_readonly("path", &py_request_context::path)
      .def_readonly("verified", &py_request_context::verified)
      .def("__repr__", [](const py_request_context& c) {
        return "RequestContext(path='" + c.path + "', hotkey='" + c.hotkey + "', uuid='" + c.uuid +
               "')";
      });
  py::class_<py_axon>(m, "Axon",
                      "The miner's server: the C++ axon with Python handlers. Options are "
                      "bt::axon_options' names as keywords, durations in seconds.")
      .def(py::init([](const bt::keypair& kp, const std::string& ip, std::int64_t port,
                       py::object loop, const py::kwargs& kw) {
             return std::make_unique<py_axon>(kp, options_from(ip, port, kw), std::move(loop));
           }),
           py::arg("keypair"), py::kw_only(), py::arg("ip") = "127.0.0.1", py::arg("port") = 0,
           py::arg("loop") = py::none())
      .def("attach", &py_axon::attach, py::arg("synapse_type"), py::arg("forward"),
           py::arg("blacklist") = py::none(), py::arg("priority") = py::none(),
           py::arg("streaming") = false,
           "Serves synapse_type at /<name>. forward(s) fills s's outputs (plain def: worker "
           "pool; async def: the asyncio loop). blacklist(s) -> bool or (bool, reason); "
           "priority(s) -> float; both see the header fields and the verified s.dendrite.hotkey. "
           "streaming=True: forward(s, send) sends the answer chunk by chunk with send(bytes).")
      .def("route", &py_axon::route, py::arg("method"), py::arg("path"), py::arg("handler"),
           py::kw_only(), py::arg("blacklist") = py::none(), py::arg("priority") = py::none(),
           py::arg("timeout") = 12.0,
           "Serves a plain JSON route (method 'POST' or 'GET', an exact path) authenticated "
           "with Epistula v2. handler(body: bytes, json, ctx: RequestContext) returns (status, "
           "json body); plain def: worker pool; async def: the asyncio loop, its worker waiting. "
           "blacklist(ctx) -> bool or (bool, reason); priority(ctx) -> float. timeout: the "
           "request's deadline in seconds (408 past it). Before start().")
      .def("set_policy", &py_axon::set_policy, py::arg("name"), py::arg("blacklist") = py::none(),
           py::arg("priority") = py::none(),
           "Replaces the blacklist and priority of an attached route, e.g. the built-in "
           "'Synapse' ping. Before start().")
      .def("start", &py_axon::start)
      .def("stop", &py_axon::stop,
           "Drains in-flight requests for up to drain_timeout, then stops; a plain handler "
           "still running is abandoned (named in a warning on the 'bittensor_cpp' logger), not "
           "waited for. Idempotent.")
      .def("info", [](py_axon& a) { return a.get().info(); })
      .def_property_readonly("port", [](py_axon& a) { return a.get().port(); })
      .def_property_readonly("running", &py_axon::running)
      .def_property_readonly("hotkey", [](py_axon& a) { return a.get().hotkey().ss58_address(); })
      .def("__enter__",
           [](py::object self) {
             self.cast<py_axon&>().start();
             return self;
           })
      .def("__exit__", [](py_axon& a, py::args) { a.stop(); });
}

}  // namespace btpy
