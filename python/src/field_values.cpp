// The values of bittensor_cpp's synapse fields (common.hpp): Python field types as type specs,
// the Python <-> JSON conversion with its depth and cycle checks, and the check of the values
// that arrive from the network against their declared types (synapse_type::check_values, run
// without the GIL).
#include "common.hpp"

#include <bt/json_body.hpp>

#include <atomic>
#include <cmath>
#include <string>

namespace btpy {

// ---------------------------------------------------------------- type specs

std::string type_spec::describe() const {
  switch (k) {
    case kind::any:
      return "Any";
    case kind::integer:
      return "int";
    case kind::floating:
      return "float";
    case kind::string:
      return "str";
    case kind::boolean:
      return "bool";
    case kind::list:
      return "List[" + inner->describe() + "]";
    case kind::dict:
      return "Dict[str, " + inner->describe() + "]";
    case kind::optional:
      return "Optional[" + inner->describe() + "]";
  }
  return "?";
}

namespace {

std::shared_ptr<const type_spec> spec(type_spec::kind k,
                                      std::shared_ptr<const type_spec> inner = nullptr) {
  auto t = std::make_shared<type_spec>();
  t->k = k;
  t->inner = inner ? std::move(inner)
                   : (k == type_spec::kind::list || k == type_spec::kind::dict ||
                              k == type_spec::kind::optional
                          ? spec(type_spec::kind::any)
                          : nullptr);
  return t;
}

std::string py_type_name(py::handle v) {
  return py::str(v.get_type().attr("__name__")).cast<std::string>();
}

}  // namespace

namespace {

std::atomic<std::size_t> json_depth_limit{default_max_json_depth};

std::string too_deep(const std::string& what, std::size_t limit) {
  return what + " nested deeper than " + std::to_string(limit) +
         " levels (the limit of bittensor_cpp.set_max_json_depth)";
}

std::shared_ptr<const type_spec> parse_type_at(py::handle t, std::size_t depth, std::size_t limit) {
  using kind = type_spec::kind;
  // typing aliases can be nested without bound (List[List[...]] built in a loop): the walk
  // below recurses once per level, so it stops at the same limit as the values.
  if (depth > limit) throw py::value_error(too_deep("a field type", limit));
  auto* b = reinterpret_cast<PyObject*>(&PyBool_Type);
  if (t.ptr() == b) return spec(kind::boolean);
  if (t.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return spec(kind::integer);
  if (t.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return spec(kind::floating);
  if (t.ptr() == reinterpret_cast<PyObject*>(&PyUnicode_Type)) return spec(kind::string);
  if (t.ptr() == reinterpret_cast<PyObject*>(&PyList_Type) ||
      t.ptr() == reinterpret_cast<PyObject*>(&PyTuple_Type))
    return spec(kind::list);
  if (t.ptr() == reinterpret_cast<PyObject*>(&PyDict_Type)) return spec(kind::dict);
  if (t.ptr() == reinterpret_cast<PyObject*>(&PyBaseObject_Type)) return spec(kind::any);
  py::module_ typing = py::module_::import("typing");
  if (t.is(typing.attr("Any"))) return spec(kind::any);
  py::object origin = typing.attr("get_origin")(t);
  py::tuple args = typing.attr("get_args")(t);
  if (origin.is(typing.attr("Union"))) {
    py::handle none_type = py::none().get_type();
    std::vector<py::handle> rest;
    bool has_none = false;
    for (auto a : args) {
      if (a.is(none_type))
        has_none = true;
      else
        rest.push_back(a);
    }
    auto inner = rest.size() == 1 ? parse_type_at(rest[0], depth + 1, limit) : spec(kind::any);
    return has_none ? spec(kind::optional, inner) : inner;
  }
  if (origin.ptr() == reinterpret_cast<PyObject*>(&PyList_Type) ||
      origin.ptr() == reinterpret_cast<PyObject*>(&PyTuple_Type)) {
    // Tuple[X, ...] and List[X] are both JSON arrays; a tuple of mixed types accepts anything.
    if (args.size() == 1 || (args.size() == 2 && args[1].ptr() == Py_Ellipsis))
      return spec(kind::list, parse_type_at(args[0], depth + 1, limit));
    return spec(kind::list);
  }
  if (origin.ptr() == reinterpret_cast<PyObject*>(&PyDict_Type)) {
    if (args.size() == 2) {
      if (args[0].ptr() != reinterpret_cast<PyObject*>(&PyUnicode_Type))
        throw py::type_error("Dict keys must be str (JSON object keys)");
      return spec(kind::dict, parse_type_at(args[1], depth + 1, limit));
    }
    return spec(kind::dict);
  }
  throw py::type_error("unsupported field type " + py::repr(t).cast<std::string>() +
                       " (supported: int, float, str, bool, list, dict, typing.Any, Optional, "
                       "List, Dict[str, X])");
}

/// One Python -> JSON conversion. It walks the value recursively, so it keeps the containers on
/// the current path: a container met again on its own path is a cycle (ValueError, as
/// json.dumps), and a path longer than the limit is a ValueError too, before the C++ stack can
/// overflow. Lists and tuples are read by index and dicts with PyDict_Next, holding a reference
/// to each item while it is converted: no Python code runs during the walk (no __iter__ of a
/// subclass), and nothing it reads can be freed under it.
class py_to_json {
 public:
  py_to_json() : limit_(max_json_depth()) {}

  bt::json any(py::handle v, const std::string& path) {
    if (v.is_none()) return nullptr;
    if (PyBool_Check(v.ptr())) return v.ptr() == Py_True;
    if (PyLong_Check(v.ptr())) {
      int overflow = 0;
      const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
      if (overflow == 0) return static_cast<std::int64_t>(x);
      if (overflow > 0) {
        const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
        if (!PyErr_Occurred()) return static_cast<std::uint64_t>(u);
        PyErr_Clear();
      }
      throw py::value_error(path + ": integer out of range [-2**63, 2**64)");
    }
    if (PyFloat_Check(v.ptr())) {
      const double d = PyFloat_AsDouble(v.ptr());
      if (!std::isfinite(d)) throw py::value_error(path + ": NaN and infinities are not JSON");
      return d;
    }
    if (PyUnicode_Check(v.ptr())) return v.cast<std::string>();
    if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
      const level in{*this, v, path};
      bt::json a = bt::json::array();
      for (std::size_t i = 0; i < sequence_size(v); ++i)
        a.push_back(any(sequence_item(v, i), path + "[" + std::to_string(i) + "]"));
      return a;
    }
    if (PyDict_Check(v.ptr())) {
      const level in{*this, v, path};
      bt::json o = bt::json::object();
      for_each_item(v, path, [&](const std::string& key, py::handle x) {
        o[key] = any(x, path + "." + key);
      });
      return o;
    }
    throw py::type_error(path + ": " + py_type_name(v) + " is not a JSON value");
  }

  bt::json checked(const type_spec& t, py::handle v, bool none_ok, const std::string& path) {
    using kind = type_spec::kind;
    if (v.is_none()) {
      if (none_ok || t.k == kind::optional || t.k == kind::any) return nullptr;
      throw py::type_error(path + ": expected " + t.describe() + ", got None");
    }
    const auto wrong = [&] {
      return py::type_error(path + ": expected " + t.describe() + ", got " + py_type_name(v));
    };
    switch (t.k) {
      case kind::any:
        return any(v, path);
      case kind::optional:
        return checked(*t.inner, v, false, path);
      case kind::boolean:
        if (!PyBool_Check(v.ptr())) throw wrong();
        return v.ptr() == Py_True;
      case kind::integer:
        if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr())) throw wrong();
        return any(v, path);
      case kind::floating:
        if (PyFloat_Check(v.ptr())) return any(v, path);
        if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) return v.cast<double>();
        throw wrong();
      case kind::string:
        if (!PyUnicode_Check(v.ptr())) throw wrong();
        return v.cast<std::string>();
      case kind::list: {
        if (!PyList_Check(v.ptr()) && !PyTuple_Check(v.ptr())) throw wrong();
        const level in{*this, v, path};
        bt::json a = bt::json::array();
        for (std::size_t i = 0; i < sequence_size(v); ++i)
          a.push_back(
              checked(*t.inner, sequence_item(v, i), false, path + "[" + std::to_string(i) + "]"));
        return a;
      }
      case kind::dict: {
        if (!PyDict_Check(v.ptr())) throw wrong();
        const level in{*this, v, path};
        bt::json o = bt::json::object();
        for_each_item(v, path, [&](const std::string& key, py::handle x) {
          o[key] = checked(*t.inner, x, false, path + "." + key);
        });
        return o;
      }
    }
    throw wrong();
  }

 private:
  /// The container `v` on the current path while the object lives.
  class level {
   public:
    level(py_to_json& c, py::handle v, const std::string& path) : c_(c) {
      for (PyObject* o : c.path_)
        if (o == v.ptr())
          throw py::value_error(path + ": the value contains itself (a reference cycle)");
      if (c.path_.size() >= c.limit_)
        throw py::value_error(path + ": " + too_deep("a value", c.limit_));
      c.path_.push_back(v.ptr());
    }
    ~level() { c_.path_.pop_back(); }
    level(const level&) = delete;
    level& operator=(const level&) = delete;

   private:
    py_to_json& c_;
  };

  // The size is read again before each item: nothing here changes the list, but a list is
  // mutable and the bound must never be stale.
  static std::size_t sequence_size(py::handle v) {
    return static_cast<std::size_t>(PyList_Check(v.ptr()) ? PyList_GET_SIZE(v.ptr())
                                                          : PyTuple_GET_SIZE(v.ptr()));
  }
  static py::object sequence_item(py::handle v, std::size_t i) {
    const auto n = static_cast<Py_ssize_t>(i);
    return py::reinterpret_borrow<py::object>(PyList_Check(v.ptr()) ? PyList_GET_ITEM(v.ptr(), n)
                                                                    : PyTuple_GET_ITEM(v.ptr(), n));
  }
  template <class Fn>
  static void for_each_item(py::handle v, const std::string& path, Fn&& fn) {
    Py_ssize_t pos = 0;
    PyObject *k = nullptr, *x = nullptr;
    while (PyDict_Next(v.ptr(), &pos, &k, &x)) {
      const auto key_ref = py::reinterpret_borrow<py::object>(k);
      const auto value_ref = py::reinterpret_borrow<py::object>(x);
      if (!PyUnicode_Check(k))
        throw py::type_error(path + ": dict keys must be str, got " + py_type_name(k));
      fn(key_ref.cast<std::string>(), value_ref);
    }
  }

  std::size_t limit_;
  std::vector<PyObject*> path_;  ///< the containers being converted, outermost first
};

py::object from_json_at(const bt::json& j, std::size_t depth, std::size_t limit) {
  switch (j.type()) {
    case bt::json::value_t::null:
      return py::none();
    case bt::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case bt::json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case bt::json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case bt::json::value_t::number_float:
      return py::float_(j.get<double>());
    case bt::json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case bt::json::value_t::array: {
      if (depth >= limit) throw py::value_error(too_deep("a JSON value", limit));
      py::list l;
      for (const auto& x : j) l.append(from_json_at(x, depth + 1, limit));
      return l;
    }
    case bt::json::value_t::object: {
      if (depth >= limit) throw py::value_error(too_deep("a JSON value", limit));
      py::dict d;
      for (auto it = j.begin(); it != j.end(); ++it)
        d[py::str(it.key())] = from_json_at(it.value(), depth + 1, limit);
      return d;
    }
    case bt::json::value_t::binary:
    case bt::json::value_t::discarded:
      break;
  }
  return py::none();
}

}  // namespace

std::size_t max_json_depth() {
  return json_depth_limit.load(std::memory_order_relaxed);
}

void set_max_json_depth(std::size_t levels) {
  if (levels < 1 || levels > max_json_depth_ceiling)
    throw py::value_error("max_json_depth must be from 1 to " +
                          std::to_string(max_json_depth_ceiling));
  json_depth_limit.store(levels, std::memory_order_relaxed);
}

std::shared_ptr<const type_spec> parse_type(py::handle t) {
  return parse_type_at(t, 0, max_json_depth());
}

bt::json to_json_any(py::handle v, const std::string& path) {
  return py_to_json().any(v, path);
}

bt::json to_json_checked(const type_spec& t, py::handle v, bool none_ok, const std::string& path) {
  return py_to_json().checked(t, v, none_ok, path);
}

py::object from_json(const bt::json& j) {
  return from_json_at(j, 0, max_json_depth());
}

namespace {

/// Empty when `j` fits `t`; else what is wrong. No Python involved (runs without the GIL).
std::string check_json(const type_spec& t, const bt::json& j, bool none_ok,
                       const std::string& path) {
  using kind = type_spec::kind;
  if (j.is_null()) {
    if (none_ok || t.k == kind::optional || t.k == kind::any) return {};
    return path + ": expected " + t.describe() + ", got null";
  }
  const auto wrong = [&] {
    return path + ": expected " + t.describe() + ", got " + std::string(j.type_name());
  };
  switch (t.k) {
    case kind::any:
      return {};
    case kind::optional:
      return check_json(*t.inner, j, false, path);
    case kind::boolean:
      return j.is_boolean() ? std::string() : wrong();
    case kind::integer:
      return j.is_number_integer() ? std::string() : wrong();
    case kind::floating:
      return j.is_number() ? std::string() : wrong();
    case kind::string:
      return j.is_string() ? std::string() : wrong();
    case kind::list: {
      if (!j.is_array()) return wrong();
      std::size_t i = 0;
      for (const auto& x : j) {
        auto e = check_json(*t.inner, x, false, path + "[" + std::to_string(i++) + "]");
        if (!e.empty()) return e;
      }
      return {};
    }
    case kind::dict: {
      if (!j.is_object()) return wrong();
      for (auto it = j.begin(); it != j.end(); ++it) {
        auto e = check_json(*t.inner, it.value(), false, path + "." + it.key());
        if (!e.empty()) return e;
      }
      return {};
    }
  }
  return wrong();
}

}  // namespace

std::string synapse_type::check_values(const bt::dynamic_synapse& s) const {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const bt::json& v = i < s.values.size() ? s.values[i] : null_json;
    auto e = check_json(*fields[i].type, v, !fields[i].required, "body." + fields[i].name);
    if (!e.empty()) return e;
  }
  return {};
}

std::shared_ptr<py_synapse> make_synapse(std::shared_ptr<const synapse_type> t) {
  auto p = std::make_shared<py_synapse>();
  p->s = bt::dynamic_synapse(t->descriptor);
  p->s.values = t->defaults;
  p->type = std::move(t);
  return p;
}

std::shared_ptr<py_synapse> wrap_synapse(std::shared_ptr<const synapse_type> t,
                                         bt::dynamic_synapse s) {
  auto p = std::make_shared<py_synapse>();
  p->s = std::move(s);
  p->type = std::move(t);
  return p;
}

}  // namespace btpy
