// bittensor_cpp.SynapseType, Synapse and TerminalInfo: synapse types declared at run time on
// bt's dynamic descriptor (bt::make_dynamic_descriptor), with the Python field types checked on
// every assignment from Python and on every value that arrives from the network (the values
// and their checks: field_values.cpp).
#include "common.hpp"

#include <bt/json_body.hpp>

#include <pybind11/stl.h>

#include <set>
#include <string>

namespace btpy {

namespace {

/// A float field keeps Python's float type when the wire sent an integral number.
py::object from_json_typed(const type_spec& t, const bt::json& j) {
  const type_spec* s = t.k == type_spec::kind::optional ? t.inner.get() : &t;
  if (s->k == type_spec::kind::floating && j.is_number_integer())
    return py::float_(j.get<double>());
  return from_json(j);
}

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
