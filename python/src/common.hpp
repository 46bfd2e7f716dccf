// Shared declarations of the bittensor_cpp Python module (pybind11).
//
// GIL contract of the whole module: C++ work that can wait (network I/O, a dendrite call, an
// axon's start/stop) runs with the GIL released; the GIL is taken on a C++ thread only to touch
// Python objects (build a synapse object, call a Python handler, resolve an asyncio future), and
// every Python reference a C++ thread may drop is dropped with the GIL held (gil_object).
#pragma once

#include <bt/dynamic_synapse.hpp>
#include <bt/keypair.hpp>

#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace btpy {

namespace py = pybind11;

/// Raised to Python as bittensor_cpp.Error (a ValueError): bad keys, addresses, mnemonics,
/// keyfiles, descriptors. The message is bt::error::message() or the std::system_error text.
struct bt_py_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// JSON null, for fields an object does not hold a value for.
inline const bt::json null_json{};

/// A Python reference that may be released by a thread that does not hold the GIL.
struct gil_object {
  py::object obj;
  gil_object() = default;
  explicit gil_object(py::object o) : obj(std::move(o)) {}
  gil_object(const gil_object&) = delete;
  gil_object& operator=(const gil_object&) = delete;
  ~gil_object() { reset(); }
  void reset() {
    if (obj) {
      py::gil_scoped_acquire g;
      obj = py::object();
    }
  }
};

/// The declared Python type of a field, checked on assignment from Python and on values that
/// arrive from the network (the axon's request bodies).
struct type_spec {
  enum class kind { any, integer, floating, string, boolean, list, dict, optional };
  kind k = kind::any;
  std::shared_ptr<const type_spec> inner;  ///< list element, dict value, optional's inner type

  std::string describe() const;  ///< "int", "Optional[List[str]]", ...
};

/// Parses int, float, str, bool, list, dict, typing.Any/object, typing.Optional[X],
/// typing.List[X]/list[X], typing.Dict[str, X]/dict[str, X]; other Unions accept anything.
/// Throws py::type_error for anything else, py::value_error for a type nested deeper than
/// max_json_depth().
std::shared_ptr<const type_spec> parse_type(py::handle t);

struct field_info {
  std::string name;
  std::shared_ptr<const type_spec> type;
  bool required = false;
};

/// A synapse type declared from Python (bittensor_cpp.SynapseType): the dynamic descriptor plus
/// the Python types of its fields. Immutable once built; shared by its instances.
struct synapse_type {
  std::shared_ptr<const bt::synapse_descriptor> descriptor;
  std::vector<field_info> fields;  ///< in descriptor order
  std::vector<std::string> hash_fields;
  std::vector<bt::json> defaults;  ///< per field: a new instance's value (null: None)

  const std::string& name() const { return descriptor->name(); }
  /// Empty when every value of `s` fits its declared type (None only for optional fields or
  /// Optional types), else "body.<field>: expected int, got string". No GIL needed.
  std::string check_values(const bt::dynamic_synapse& s) const;
};

/// An instance (bittensor_cpp.Synapse). Held by shared_ptr so TerminalInfo views can keep it.
struct py_synapse {
  std::shared_ptr<const synapse_type> type;
  bt::dynamic_synapse s;
};

std::shared_ptr<py_synapse> make_synapse(std::shared_ptr<const synapse_type> t);
std::shared_ptr<py_synapse> wrap_synapse(std::shared_ptr<const synapse_type> t,
                                         bt::dynamic_synapse s);

/// The deepest nesting of containers (lists, tuples, dicts; JSON arrays, objects) the
/// conversions between Python values and JSON accept, and of field types. They recurse once per
/// level, so a value nested without bound (a 200,000-deep list) or containing itself would
/// otherwise overflow the C++ stack. 64 by default, as bt::json_read_options::max_depth (what
/// the C++ peers accept); bittensor_cpp.set_max_json_depth() changes it for the process, from 1 to
/// max_json_depth_ceiling (the C++ reader's own ceiling).
inline constexpr std::size_t default_max_json_depth = 64;
inline constexpr std::size_t max_json_depth_ceiling = 1024;
std::size_t max_json_depth();
/// ValueError outside [1, max_json_depth_ceiling].
void set_max_json_depth(std::size_t levels);

/// Python value -> JSON under a type spec; throws py::type_error / py::value_error naming `path`
/// (ValueError for a value nested deeper than max_json_depth() or containing itself).
bt::json to_json_checked(const type_spec& t, py::handle v, bool none_ok, const std::string& path);
/// Any JSON-like Python value (None, bool, int, float, str, list/tuple, dict with str keys).
bt::json to_json_any(py::handle v, const std::string& path);
/// ValueError for a value nested deeper than max_json_depth().
py::object from_json(const bt::json& j);

/// Translates the exception in flight into a Python exception (bt_py_error for
/// std::system_error and bt errors); used by the binding code around C++ calls.
[[noreturn]] void raise_bt_error(const std::string& message);

/// "sr25519" or "ed25519"; ValueError naming the value otherwise.
bt::crypto_type parse_crypto(const std::string& name);
/// bytes, bytearray or memoryview as given; str as its UTF-8 encoding (bittensor signs str
/// messages that way). Anything else is a TypeError naming `what`.
std::string message_bytes(py::handle data, const char* what);

void init_keys(py::module_& m);
void init_synapse(py::module_& m);
void init_dendrite(py::module_& m);
void init_axon(py::module_& m);
void init_http_auth(py::module_& m);

/// Logs an exception raised by Python code run for the axon (with its traceback) on the logger
/// "bittensor_cpp" and returns the new error id the client sees. Needs the GIL.
std::string log_python_exception(py::error_already_set& e, std::string_view where);

}  // namespace btpy
