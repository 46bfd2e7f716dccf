// The blacklist and priority callbacks of bittensor_cpp.Axon's routes (axon_routes.hpp): Python
// callables run on the axon's I/O threads, before the body is read, with the GIL taken for the
// call only. A callable that raises or returns the wrong type denies (blacklist) or ranks 0.0
// (priority), and is logged.
#include "axon_routes.hpp"

#include <cmath>

namespace btpy {
namespace {

/// Runs a route's blacklist on the argument make_arg() builds (under the GIL): True or
/// (True, reason), bittensor's (blacklisted, reason), denies; False allows. A callable that
/// raises or returns another type denies with a 500 whose id names the logged traceback.
template <class MakeArg>
bt::verdict call_blacklist(const gil_object& f, const MakeArg& make_arg, std::string_view route) {
  py::gil_scoped_acquire g;
  try {
    py::object v = f.obj(make_arg());
    if (PyBool_Check(v.ptr()))
      return v.ptr() == Py_True ? bt::verdict::deny("blacklisted") : bt::verdict::allow();
    auto t = v.cast<std::pair<bool, std::string>>();
    return t.first ? bt::verdict::deny(t.second) : bt::verdict::allow();
  } catch (py::error_already_set& e) {
    return bt::verdict::deny("Internal Server Error #" +
                             log_python_exception(e, "blacklist of " + std::string(route)));
  } catch (py::cast_error&) {
    PyErr_SetString(PyExc_TypeError, "blacklist must return a bool or a (bool, str) tuple");
    py::error_already_set e;
    return bt::verdict::deny("Internal Server Error #" +
                             log_python_exception(e, "blacklist of " + std::string(route)));
  }
}

/// Runs a route's priority on the argument make_arg() builds (under the GIL); a callable that
/// raises or returns no number ranks 0.0 and is logged.
template <class MakeArg>
double call_priority(const gil_object& f, const MakeArg& make_arg, std::string_view route) {
  py::gil_scoped_acquire g;
  try {
    return f.obj(make_arg()).template cast<double>();
  } catch (py::error_already_set& e) {
    log_python_exception(e, "priority of " + std::string(route));
  } catch (py::cast_error&) {
    PyErr_SetString(PyExc_TypeError, "priority must return a number");
    py::error_already_set e;
    log_python_exception(e, "priority of " + std::string(route));
  }
  return 0.0;
}

}  // namespace

bt::json_route_options make_json_policy(const std::shared_ptr<json_route>& r, double timeout) {
  bt::json_route_options policy;
  if (!std::isfinite(timeout) || timeout <= 0)
    throw py::value_error("timeout must be a positive number of seconds");
  policy.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(timeout * 1000)));
  if (r->blacklist.obj) {
    policy.blacklist = [r](const bt::request_context& c) {
      return call_blacklist(
          r->blacklist, [&] { return py::cast(py_request_context(c)); }, r->path);
    };
  }
  if (r->priority.obj) {
    policy.priority = [r](const bt::request_context& c) {
      return call_priority(
          r->priority, [&] { return py::cast(py_request_context(c)); }, r->path);
    };
  }
  return policy;
}

bt::route_options make_policy(const std::shared_ptr<synapse_route>& r) {
  bt::route_options policy;
  if (r->blacklist.obj) {
    policy.blacklist = [r](const bt::synapse& h, const bt::request_context& c) {
      return call_blacklist(
          r->blacklist, [&] { return py::cast(header_view(*r, h, c)); }, r->type->name());
    };
  }
  if (r->priority.obj) {
    policy.priority = [r](const bt::synapse& h, const bt::request_context& c) {
      return call_priority(
          r->priority, [&] { return py::cast(header_view(*r, h, c)); }, r->type->name());
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

}  // namespace btpy
