// bittensor_cpp.SynapseType, Synapse and TerminalInfo: synapse types declared at run time on
// bt's dynamic descriptor (bt::make_dynamic_descriptor), with the Python field types checked on
// every assignment from Python and on every value that arrives from the network.
#include "common.hpp"

#include <bt/json_body.hpp>

#include <pybind11/stl.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <set>
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

/// A float field keeps Python's float type when the wire sent an integral number.
py::object from_json_typed(const type_spec& t, const bt::json& j) {
  const type_spec* s = t.k == type_spec::kind::optional ? t.inner.get() : &t;
  if (s->k == type_spec::kind::floating && j.is_number_integer())
    return py::float_(j.get<double>());
  return from_json(j);
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

// ---------------------------------------------------------------- Python classes

namespace {

/// s.dendrite / s.axon: a live view of one TerminalInfo block of a synapse.
struct terminal_view {
  std::shared_ptr<py_synapse> owner;
  bool axon = false;
  bt::terminal_info& ti() const { return axon ? owner->s.axon : owner->s.dendrite; }
};

template <class V>
void def_terminal_field(py::class_<terminal_view>& c, const char* name,
                        std::optional<V> bt::terminal_info::*member) {
  c.def_property(
      name, [member](const terminal_view& v) { return v.ti().*member; },
      [member](const terminal_view& v, std::optional<V> x) { v.ti().*member = std::move(x); });
}

py::dict terminal_dict(const bt::terminal_info& t) {
  py::dict d;
  d["status_code"] = py::cast(t.status_code);
  d["status_message"] = py::cast(t.status_message);
  d["process_time"] = py::cast(t.process_time);
  d["ip"] = py::cast(t.ip);
  d["port"] = py::cast(t.port);
  d["version"] = py::cast(t.version);
  d["nonce"] = py::cast(t.nonce);
  d["uuid"] = py::cast(t.uuid);
  d["hotkey"] = py::cast(t.hotkey);
  d["signature"] = py::cast(t.signature);
  return d;
}

const std::set<std::string, std::less<>>& base_names() {
  static const std::set<std::string, std::less<>> names{
      "name",     "timeout", "total_size",         "header_size",
      "dendrite", "axon",    "computed_body_hash", "required_hash_fields"};
  return names;
}

void set_field(py_synapse& p, const field_info& f, std::size_t index, py::handle value) {
  bt::json j = to_json_checked(*f.type, value, !f.required, f.name);
  if (p.s.values.size() <= index) p.s.values.resize(index + 1);
  p.s.values[index] = std::move(j);
}

/// Builds a SynapseType from (name, {field: type}, required, hash_fields).
std::shared_ptr<synapse_type> build_type(const std::string& name, const py::dict& fields,
                                         const std::vector<std::string>& required,
                                         const std::vector<std::string>& hash_fields,
                                         const py::dict& defaults) {
  auto t = std::make_shared<synapse_type>();
  std::vector<bt::dynamic_field_spec> specs;
  std::set<std::string> seen;
  for (auto kv : fields) {
    if (!PyUnicode_Check(kv.first.ptr())) throw py::type_error("field names must be str");
    field_info f;
    f.name = kv.first.cast<std::string>();
    if (base_names().contains(f.name))
      throw py::value_error("field '" + f.name + "' is a base Synapse field");
    f.type = parse_type(kv.second);
    seen.insert(f.name);
    t->fields.push_back(f);
  }
  for (const auto& r : required) {
    if (!seen.contains(r)) throw py::value_error("required field '" + r + "' is not a field");
  }
  for (auto& f : t->fields) {
    f.required = std::find(required.begin(), required.end(), f.name) != required.end();
    specs.push_back({f.name, f.required ? bt::field_kind::required : bt::field_kind::optional});
  }
  bt::error err;
  t->descriptor = bt::make_dynamic_descriptor(name, specs, hash_fields, err);
  if (!t->descriptor) raise_bt_error(err.message());
  t->hash_fields = hash_fields;
  t->defaults.assign(t->fields.size(), bt::json());
  for (auto kv : defaults) {
    const std::string key = py::str(kv.first).cast<std::string>();
    const auto* f = t->descriptor->find(key);
    if (!f) throw py::value_error("default for '" + key + "', which is not a field");
    if (t->fields[f->index].required)
      throw py::value_error("default for '" + key + "', which is required");
    t->defaults[f->index] = to_json_checked(*t->fields[f->index].type, kv.second, true, key);
  }
  return t;
}

std::shared_ptr<synapse_type> type_from_pydantic(py::handle model) {
  py::module_ typing = py::module_::import("typing");
  py::dict hints = typing.attr("get_type_hints")(model);
  py::dict fields, defaults;
  std::vector<std::string> required;
  const bool v2 = py::hasattr(model, "model_fields");
  py::dict model_fields = v2 ? model.attr("model_fields") : model.attr("__fields__");
  for (auto kv : model_fields) {
    const std::string name = kv.first.cast<std::string>();
    if (base_names().contains(name)) continue;  // a bittensor.Synapse subclass's base fields
    py::object ann = hints.contains(kv.first) ? py::object(hints[kv.first])
                                              : py::object(kv.second.attr("outer_type_"));
    fields[kv.first] = ann;
    const bool req =
        v2 ? kv.second.attr("is_required")().cast<bool>() : kv.second.attr("required").cast<bool>();
    if (req) {
      required.push_back(name);
    } else {
      // v1 ModelField.get_default(), v2 FieldInfo.get_default(call_default_factory=True)
      defaults[kv.first] =
          v2 ? kv.second.attr("get_default")(py::arg("call_default_factory") = true)
             : kv.second.attr("get_default")();
    }
  }
  std::vector<std::string> hash_fields;
  if (py::hasattr(model, "required_hash_fields")) {
    py::object h = model.attr("required_hash_fields");
    if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr()) && v2) {
      py::object f = model_fields.attr("get")("required_hash_fields");
      if (!f.is_none()) h = f.attr("default");
    }
    if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()))
      for (auto x : h) hash_fields.push_back(x.cast<std::string>());
  }
  return build_type(model.attr("__name__").cast<std::string>(), fields, required, hash_fields,
                    defaults);
}

py::dict synapse_dict(const py_synapse& p) {
  py::dict d;
  d["name"] = p.type->name();
  d["timeout"] = py::cast(p.s.timeout);
  d["total_size"] = py::cast(p.s.total_size);
  d["header_size"] = py::cast(p.s.header_size);
  d["dendrite"] = terminal_dict(p.s.dendrite);
  d["axon"] = terminal_dict(p.s.axon);
  d["computed_body_hash"] = p.s.computed_body_hash;
  d["required_hash_fields"] = py::cast(p.type->hash_fields);
  for (std::size_t i = 0; i < p.type->fields.size(); ++i) {
    const auto& v = i < p.s.values.size() ? p.s.values[i] : null_json;
    d[py::str(p.type->fields[i].name)] = from_json_typed(*p.type->fields[i].type, v);
  }
  return d;
}

}  // namespace

void init_synapse(py::module_& m) {
  py::class_<terminal_view> ti(m, "TerminalInfo",
                               "One side's view of a call (s.dendrite or s.axon); a live view "
                               "of the synapse it belongs to.");
  def_terminal_field<std::int64_t>(ti, "status_code", &bt::terminal_info::status_code);
  def_terminal_field<std::string>(ti, "status_message", &bt::terminal_info::status_message);
  def_terminal_field<double>(ti, "process_time", &bt::terminal_info::process_time);
  def_terminal_field<std::string>(ti, "ip", &bt::terminal_info::ip);
  def_terminal_field<std::int64_t>(ti, "port", &bt::terminal_info::port);
  def_terminal_field<std::int64_t>(ti, "version", &bt::terminal_info::version);
  def_terminal_field<std::int64_t>(ti, "nonce", &bt::terminal_info::nonce);
  def_terminal_field<std::string>(ti, "uuid", &bt::terminal_info::uuid);
  def_terminal_field<std::string>(ti, "hotkey", &bt::terminal_info::hotkey);
  def_terminal_field<std::string>(ti, "signature", &bt::terminal_info::signature);
  ti.def("to_dict", [](const terminal_view& v) { return terminal_dict(v.ti()); });
  ti.def("__repr__", [](const terminal_view& v) {
    return "TerminalInfo(" + py::repr(terminal_dict(v.ti())).cast<std::string>() + ")";
  });

  py::class_<synapse_type, std::shared_ptr<synapse_type>> st(
      m, "SynapseType",
      "A synapse type declared at run time: SynapseType('Dummy', {'dummy_input': int, "
      "'dummy_output': Optional[int]}, required=['dummy_input'], hash_fields=[]). Calling it "
      "with keywords makes an instance.");
  st.def(py::init([](const std::string& name, const py::dict& fields,
                     const std::vector<std::string>& required,
                     const std::vector<std::string>& hash_fields, const py::dict& defaults) {
           return build_type(name, fields, required, hash_fields, defaults);
         }),
         py::arg("name"), py::arg("fields"), py::arg("required") = std::vector<std::string>{},
         py::arg("hash_fields") = std::vector<std::string>{}, py::arg("defaults") = py::dict())
      .def_static("from_pydantic", &type_from_pydantic, py::arg("model"),
                  "The SynapseType of a pydantic model class (v1 or v2; the base fields of a "
                  "bittensor.Synapse subclass are skipped).")
      .def_property_readonly("name", &synapse_type::name)
      .def_property_readonly("required",
                             [](const synapse_type& t) {
                               std::vector<std::string> r;
                               for (const auto& f : t.fields)
                                 if (f.required) r.push_back(f.name);
                               return r;
                             })
      .def_property_readonly("defaults",
                             [](const synapse_type& t) {
                               py::dict d;
                               for (std::size_t i = 0; i < t.fields.size(); ++i)
                                 if (!t.defaults[i].is_null())
                                   d[py::str(t.fields[i].name)] = from_json(t.defaults[i]);
                               return d;
                             })
      .def_property_readonly("hash_fields", [](const synapse_type& t) { return t.hash_fields; })
      .def_property_readonly("fields",
                             [](const synapse_type& t) {
                               py::dict d;
                               for (const auto& f : t.fields)
                                 d[py::str(f.name)] = f.type->describe();
                               return d;
                             })
      .def("__call__",
           [](std::shared_ptr<synapse_type> self, const py::kwargs& kw) {
             auto p = make_synapse(self);
             std::vector<bool> given(self->fields.size());
             for (auto kv : kw) {
               const std::string key = kv.first.cast<std::string>();
               const auto* f = self->descriptor->find(key);
               if (f) {
                 set_field(*p, self->fields[f->index], f->index, kv.second);
                 given[f->index] = true;
               } else if (key == "timeout") {
                 p->s.timeout = kv.second.cast<std::optional<double>>();
               } else {
                 throw py::type_error(self->name() + "() got an unexpected keyword argument '" +
                                      key + "'");
               }
             }
             for (std::size_t i = 0; i < given.size(); ++i)
               if (self->fields[i].required && !given[i])
                 throw py::type_error(self->name() + "() missing required field '" +
                                      self->fields[i].name + "'");
             return p;
           })
      .def("__repr__", [](const synapse_type& t) { return "<SynapseType '" + t.name() + "'>"; });

  py::class_<py_synapse, std::shared_ptr<py_synapse>>(
      m, "Synapse", "An instance of a SynapseType; fields are attributes (type-checked).")
      .def("__getattr__",
           [](const py_synapse& p, const std::string& name) -> py::object {
             const auto* f = p.type->descriptor->find(name);
             if (!f)
               throw py::attribute_error("'" + p.type->name() + "' has no field '" + name + "'");
             const auto& v = f->index < p.s.values.size() ? p.s.values[f->index] : null_json;
             return from_json_typed(*p.type->fields[f->index].type, v);
           })
      .def("__setattr__",
           [](py::object self, const py::str& name, py::object value) {
             auto& p = self.cast<py_synapse&>();
             const auto* f = p.type->descriptor->find(name.cast<std::string>());
             if (f) {
               set_field(p, p.type->fields[f->index], f->index, value);
               return;
             }
             if (PyObject_GenericSetAttr(self.ptr(), name.ptr(), value.ptr()) != 0)
               throw py::error_already_set();
           })
      .def("__dir__",
           [](const py_synapse& p) {
             std::vector<std::string> names(base_names().begin(), base_names().end());
             for (const auto& f : p.type->fields) names.push_back(f.name);
             for (const char* n : {"to_dict", "copy", "synapse_type", "is_success", "is_failure",
                                   "is_timeout", "is_blacklist", "failed_verification"})
               names.emplace_back(n);
             return names;
           })
      .def_property_readonly("name", [](const py_synapse& p) { return p.type->name(); })
      .def_property_readonly("synapse_type", [](const py_synapse& p) { return p.type; })
      .def_property_readonly("required_hash_fields",
                             [](const py_synapse& p) { return p.type->hash_fields; })
      .def_property(
          "timeout", [](const py_synapse& p) { return p.s.timeout; },
          [](py_synapse& p, std::optional<double> t) { p.s.timeout = t; })
      .def_property(
          "total_size", [](const py_synapse& p) { return p.s.total_size; },
          [](py_synapse& p, std::optional<std::int64_t> t) { p.s.total_size = t; })
      .def_property(
          "header_size", [](const py_synapse& p) { return p.s.header_size; },
          [](py_synapse& p, std::optional<std::int64_t> t) { p.s.header_size = t; })
      .def_property(
          "computed_body_hash", [](const py_synapse& p) { return p.s.computed_body_hash; },
          [](py_synapse& p, std::string h) { p.s.computed_body_hash = std::move(h); })
      .def_property_readonly("dendrite",
                             [](std::shared_ptr<py_synapse> p) {
                               return terminal_view{std::move(p), false};
                             })
      .def_property_readonly("axon",
                             [](std::shared_ptr<py_synapse> p) {
                               return terminal_view{std::move(p), true};
                             })
      .def_property_readonly("is_success", [](const py_synapse& p) { return p.s.is_success(); })
      .def_property_readonly("is_failure", [](const py_synapse& p) { return p.s.is_failure(); })
      .def_property_readonly("is_timeout", [](const py_synapse& p) { return p.s.is_timeout(); })
      .def_property_readonly("is_blacklist", [](const py_synapse& p) { return p.s.is_blacklist(); })
      .def_property_readonly("failed_verification",
                             [](const py_synapse& p) { return p.s.failed_verification(); })
      .def("to_dict", &synapse_dict, "The model_dump() form: base fields, then the fields.")
      .def("copy", [](const py_synapse& p) { return wrap_synapse(p.type, p.s); })
      .def("__copy__", [](const py_synapse& p) { return wrap_synapse(p.type, p.s); })
      .def("__deepcopy__",
           [](const py_synapse& p, py::handle) { return wrap_synapse(p.type, p.s); })
      .def("__eq__",
           [](const py_synapse& a, py::handle b) {
             if (!py::isinstance<py_synapse>(b)) return false;
             const auto& o = b.cast<const py_synapse&>();
             return a.type == o.type &&
                    static_cast<const bt::synapse&>(a.s) == static_cast<const bt::synapse&>(o.s) &&
                    a.s.values == o.s.values;
           })
      .def("__repr__", [](const py_synapse& p) {
        std::string out = p.type->name() + "(";
        for (std::size_t i = 0; i < p.type->fields.size(); ++i) {
          const auto& v = i < p.s.values.size() ? p.s.values[i] : null_json;
          if (i) out += ", ";
          out += p.type->fields[i].name + "=" + py::repr(from_json(v)).cast<std::string>();
        }
        return out + ")";
      });
}

}  // namespace btpy
