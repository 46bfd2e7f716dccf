// The bittensor_cpp module: the C++ keys, synapses, dendrite and axon for Python validators and
// miners (docs/python.md). Each part registers itself from its own file.
#include "common.hpp"

#include <bt/detail/uuid.hpp>

#include <exception>
#include <system_error>

namespace btpy {

[[noreturn]] void raise_bt_error(const std::string& message) {
  throw bt_py_error(message);
}

std::string log_python_exception(py::error_already_set& e, std::string_view where) {
  std::string id = bt::detail::make_uuid4();
  try {
    py::module_ traceback = py::module_::import("traceback");
    // An error raised by C++ code (PyErr_SetString: "priority must return a number") has no
    // traceback: its trace() is a null handle, which pybind11 refuses to pass as an argument
    // (cast_error), so None is passed instead.
    py::object trace =
        e.trace() ? py::reinterpret_borrow<py::object>(e.trace()) : py::object(py::none());
    py::object lines = traceback.attr("format_exception")(e.type(), e.value(), trace);
    const std::string text = py::str("").attr("join")(lines).cast<std::string>();
    py::module_::import("logging")
        .attr("getLogger")("bittensor_cpp")
        .attr("error")("%s raised (Internal Server Error #%s):\n%s", std::string(where), id, text);
  } catch (py::error_already_set& inner) {
    // Logging itself failed (interpreter shutting down, a broken handler): nothing else to do.
    inner.discard_as_unraisable("bittensor_cpp: logging a handler's exception");
  } catch (const std::exception&) {
    // A pybind11 cast failure: the callers rely on this function not throwing (a policy
    // function's exception must turn into its documented verdict, never escape to the axon).
  }
  return id;
}

}  // namespace btpy

PYBIND11_MODULE(bittensor_cpp, m) {
  using namespace btpy;
  m.doc() = "The C++ dendrite and axon of bittensor-cpp for Python (docs/python.md).";
  static py::exception<bt_py_error> error(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const bt_py_error& e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const std::system_error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  m.def("get_max_json_depth", &max_json_depth,
        "The deepest nesting of lists/dicts the conversions between Python values and JSON "
        "accept (64 by default); deeper values, and values that contain themselves, raise "
        "ValueError.");
  m.def("set_max_json_depth", &set_max_json_depth, py::arg("levels"),
        "Sets get_max_json_depth() for the process (1 to 1024).");
  init_keys(m);
  init_synapse(m);
  init_dendrite(m);
  init_axon(m);
  init_http_auth(m);
}
