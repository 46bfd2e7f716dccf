// A Dendrite call's Python arguments as the C++ call takes them (call_args.hpp), and the
// MixedRequest class that names one target of a mixed fan-out.
#include "call_args.hpp"

#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>

namespace btpy {

bt::axon_info axon_from_py(py::handle h) {
  if (py::isinstance<bt::axon_info>(h)) return h.cast<bt::axon_info>();
  if (!py::hasattr(h, "ip") || !py::hasattr(h, "port"))
    throw py::type_error(
        "an axon must be an AxonInfo or have ip, port and hotkey attributes, not " +
        py::str(h.get_type().attr("__name__")).cast<std::string>());
  bt::axon_info a;
  try {
    a.ip = h.attr("ip").cast<std::string>();
    const auto port = h.attr("port").cast<std::int64_t>();
    if (port < 0 || port > 65535)
      throw py::value_error("axon port out of range: " + std::to_string(port));
    a.port = static_cast<std::uint16_t>(port);
    if (py::hasattr(h, "hotkey")) a.hotkey = h.attr("hotkey").cast<std::string>();
    if (py::hasattr(h, "coldkey")) {
      py::object c = h.attr("coldkey");
      if (!c.is_none()) a.coldkey = c.cast<std::string>();
    }
    if (py::hasattr(h, "version")) a.version = h.attr("version").cast<std::int64_t>();
    if (py::hasattr(h, "ip_type")) a.ip_type = h.attr("ip_type").cast<int>();
  } catch (py::cast_error&) {
    throw py::type_error("axon attributes: ip and hotkey must be str, port an int");
  }
  return a;
}

std::pair<std::vector<bt::axon_info>, bool> axons_from_py(py::handle h) {
  std::vector<bt::axon_info> out;
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    for (auto x : h) out.push_back(axon_from_py(x));
    return {std::move(out), false};
  }
  out.push_back(axon_from_py(h));
  return {std::move(out), true};
}

double check_timeout(double t) {
  if (!std::isfinite(t) || t <= 0)
    throw py::value_error("timeout must be a positive number of seconds");
  return t;
}

std::string body_from_py(py::handle v) {
  if (PyBytes_Check(v.ptr()) || PyByteArray_Check(v.ptr()) || PyMemoryView_Check(v.ptr()))
    return std::string(py::bytes(py::reinterpret_borrow<py::object>(v)));
  return to_json_any(v, "json_body").dump();
}

plain_call_args plain_call_from_py(bt::wire_dialect dialect, py::handle axon, std::string method,
                                   std::string path, py::handle json_body, double timeout) {
  plain_call_args a;
  a.dialect = dialect;
  a.target = axon_from_py(axon);
  a.timeout = check_timeout(timeout);
  a.body = body_from_py(json_body);
  a.method = std::move(method);
  a.path = std::move(path);
  return a;
}

namespace {

/// The Python names of bt::wire_dialect, as MixedRequest.dialect takes and gives them.
constexpr std::pair<bt::wire_dialect, const char*> dialect_names[] = {
    {bt::wire_dialect::synapse, "synapse"},
    {bt::wire_dialect::epistula, "epistula"},
    {bt::wire_dialect::btauth, "btauth"},
};

bt::wire_dialect dialect_from_name(const std::string& name) {
  for (const auto& [d, n] : dialect_names)
    if (name == n) return d;
  throw py::value_error("dialect must be 'synapse', 'epistula' or 'btauth', not '" + name + "'");
}

const char* dialect_name(bt::wire_dialect d) {
  for (const auto& [dialect, n] : dialect_names)
    if (dialect == d) return n;
  return "unknown";
}

}  // namespace

mixed_call_args mixed_call_from_py(py::handle requests, py::handle synapse, double timeout) {
  if (!py::isinstance<py::list>(requests) && !py::isinstance<py::tuple>(requests))
    throw py::type_error("requests must be a list of MixedRequest or axons");
  mixed_call_args a;
  a.timeout = check_timeout(timeout);
  bool has_synapse_target = false;
  for (auto entry : requests) {
    // An entry that is no MixedRequest is an axon, sent the synapse.
    a.requests.push_back(py::isinstance<bt::mixed_request>(entry)
                             ? entry.cast<bt::mixed_request>()
                             : bt::mixed_request{.axon = axon_from_py(entry)});
    has_synapse_target |= a.requests.back().dialect == bt::wire_dialect::synapse;
  }
  if (!synapse.is_none()) {
    if (!py::isinstance<py_synapse>(synapse))
      throw py::type_error("synapse must be a Synapse or None, not " +
                           py::str(synapse.get_type().attr("__name__")).cast<std::string>());
    const auto& s = synapse.cast<const py_synapse&>();
    a.synapse = s.s;
    a.type = s.type;
  } else if (has_synapse_target) {
    throw py::value_error(
        "a synapse target (an axon, or a MixedRequest of dialect 'synapse') "
        "needs a synapse to send");
  }
  return a;
}

py::list mixed_answers_to_py(const std::shared_ptr<const synapse_type>& type,
                             std::vector<bt::mixed_answer<bt::dynamic_synapse>>&& answers) {
  py::list out;
  for (auto& a : answers) {
    if (auto* s = std::get_if<bt::dynamic_synapse>(&a))
      out.append(py::cast(wrap_synapse(type, std::move(*s))));
    else
      out.append(py::cast(std::move(std::get<bt::http_call_response>(a))));
  }
  return out;
}

void init_mixed_request(py::module_& m) {
  py::class_<bt::mixed_request>(
      m, "MixedRequest",
      "One target of Dendrite.query_mixed / forward_mixed: an axon and the dialect its miner "
      "speaks ('synapse': sent the fan-out's synapse; 'epistula' or 'btauth': sent method, path "
      "and json_body, signed with Epistula v2 or btauth/1). Immutable.")
      .def(py::init([](py::handle axon, const std::string& dialect, std::string method,
                       std::string path, py::handle json_body) {
             bt::mixed_request r;
             r.axon = axon_from_py(axon);
             r.dialect = dialect_from_name(dialect);
             r.body = body_from_py(json_body);
             if (r.dialect == bt::wire_dialect::synapse && (!path.empty() || !r.body.empty()))
               throw py::value_error(
                   "a synapse target is sent the fan-out's synapse: it takes no path or "
                   "json_body");
             r.method = std::move(method);
             r.path = std::move(path);
             return r;
           }),
           py::arg("axon"), py::arg("dialect") = "synapse", py::arg("method") = "POST",
           py::arg("path") = "", py::arg("json_body") = py::bytes())
      .def_readonly("axon", &bt::mixed_request::axon)
      .def_property_readonly("dialect",
                             [](const bt::mixed_request& r) { return dialect_name(r.dialect); })
      .def_readonly("method", &bt::mixed_request::method)
      .def_readonly("path", &bt::mixed_request::path)
      .def_property_readonly("json_body",
                             [](const bt::mixed_request& r) { return py::bytes(r.body); })
      .def("__repr__", [](const bt::mixed_request& r) {
        std::string s = "MixedRequest(" + r.axon.ip + ":" + std::to_string(r.axon.port) + ", '" +
                        dialect_name(r.dialect) + "'";
        if (r.dialect != bt::wire_dialect::synapse) s += ", '" + r.method + " " + r.path + "'";
        return s + ")";
      });
}

}  // namespace btpy
