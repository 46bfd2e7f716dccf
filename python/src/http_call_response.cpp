// bittensor_cpp.HttpCallResponse over bt::http_call_response: the answer of a request by method
// and path (Dendrite.epistula_call, btauth_call, the plain targets of a mixed fan-out).
// EpistulaResponse, its first name, stays the same class, as in C++.
#include "call_args.hpp"

#include <bt/detail/text.hpp>

#include <pybind11/stl.h>

#include <optional>
#include <string>

namespace btpy {
namespace {

/// The name of a client-side failure, as in bt::dendrite_errc (docs/dendrite.md's table).
const char* dendrite_errc_name(bt::dendrite_errc e) {
  switch (e) {
    case bt::dendrite_errc::connect_failed:
      return "connect_failed";
    case bt::dendrite_errc::timeout:
      return "timeout";
    case bt::dendrite_errc::disconnected:
      return "disconnected";
    case bt::dendrite_errc::payload_incomplete:
      return "payload_incomplete";
    case bt::dendrite_errc::response_too_large:
      return "response_too_large";
    case bt::dendrite_errc::malformed_response:
      return "malformed_response";
    case bt::dendrite_errc::invalid_address:
      return "invalid_address";
    case bt::dendrite_errc::cancelled:
      return "cancelled";
    case bt::dendrite_errc::response_unauthenticated:
      return "response_unauthenticated";
  }
  return "unknown";
}

}  // namespace

void init_http_call_response(py::module_& m) {
  using response = bt::http_call_response;
  py::class_<response>(
      m, "HttpCallResponse",
      "The answer to Dendrite.epistula_call, btauth_call and a mixed fan-out's plain targets: "
      "the HTTP status, headers and body, or a client-side failure (error set, status from "
      "docs/dendrite.md's table). EpistulaResponse is the same class.")
      .def_readonly("status", &response::status)
      .def_readonly("status_message", &response::status_message)
      .def_property_readonly("error",
                             [](const response& r) -> std::optional<std::string> {
                               if (!r.error) return std::nullopt;
                               return std::string(dendrite_errc_name(*r.error));
                             })
      .def_readonly("headers", &response::headers)
      .def_property_readonly("body", [](const response& r) { return py::bytes(r.body); })
      .def_readonly("process_time", &response::process_time)
      .def_readonly("verified", &response::response_verified)
      .def_readonly("uuid", &response::uuid)
      .def_readonly("nonce", &response::nonce)
      .def(
          "header",
          [](const response& r, std::string_view name) -> std::optional<std::string> {
            const std::string lower = bt::detail::to_lower(name);
            for (const auto& [k, v] : r.headers)
              if (bt::detail::iequals(k, lower)) return v;
            return std::nullopt;
          },
          py::arg("name"), "The first header of that name (case-insensitive), or None.")
      .def(
          "json",
          [](const response& r) {
            return py::module_::import("json").attr("loads")(py::bytes(r.body));
          },
          "The body parsed by json.loads (ValueError if it is not JSON).")
      .def("__repr__", [](const response& r) {
        return "HttpCallResponse(status=" + std::to_string(r.status) + ", error=" +
               (r.error ? std::string("'") + dendrite_errc_name(*r.error) + "'"
                        : std::string("None")) +
               ", verified=" + (r.response_verified ? "True" : "False") + ")";
      });
  m.attr("EpistulaResponse") = m.attr("HttpCallResponse");
}

}  // namespace btpy
