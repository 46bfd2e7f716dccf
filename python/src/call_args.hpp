// A Dendrite call's Python arguments as the C++ call takes them: axons, timeouts, the plain
// requests of epistula_call and btauth_call, and the targets of a mixed fan-out (MixedRequest).
// Everything is converted and checked (TypeError, ValueError) with the GIL held, before the call
// starts; the C++ call then needs no Python object. Internal to the module.
#pragma once

#include "common.hpp"

#include <bt/axon_info.hpp>
#include <bt/dendrite.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace btpy {

/// One AxonInfo from ours, or from anything with ip, port and hotkey attributes (bittensor's
/// AxonInfo, a chain client's record). Wrong types are TypeErrors naming the attribute.
bt::axon_info axon_from_py(py::handle h);

/// (axons, single): a list of axons, or one axon (then the caller gets one answer back).
std::pair<std::vector<bt::axon_info>, bool> axons_from_py(py::handle h);

/// `t` when it is a positive, finite number of seconds; ValueError otherwise.
double check_timeout(double t);

/// A plain request's body: bytes-like objects are sent verbatim, anything else is serialised as
/// JSON (so a str is a JSON string). TypeError/ValueError for what JSON cannot hold.
std::string body_from_py(py::handle v);

/// An Epistula v2 or btauth/1 call (epistula_call, btauth_call and their async forms); start()
/// moves the arguments into the C++ call.
struct plain_call_args {
  bt::wire_dialect dialect = bt::wire_dialect::epistula;
  bt::axon_info target;
  std::string method, path, body;
  double timeout = 0;

  template <class Token>
  void start(bt::dendrite& d, Token&& token) {
    if (dialect == bt::wire_dialect::btauth)
      d.async_btauth_call(std::move(target), std::move(method), std::move(path), std::move(body),
                          timeout, std::forward<Token>(token));
    else
      d.async_epistula_call(std::move(target), std::move(method), std::move(path), std::move(body),
                            timeout, std::forward<Token>(token));
  }
};

plain_call_args plain_call_from_py(bt::wire_dialect dialect, py::handle axon, std::string method,
                                   std::string path, py::handle json_body, double timeout);

/// A mixed fan-out's arguments (query_mixed, forward_mixed): one bt::mixed_request per entry (a
/// MixedRequest, or an axon for a synapse target), the synapse the synapse targets are sent
/// (none when there is no synapse target) and its type, for the answers.
struct mixed_call_args {
  std::vector<bt::mixed_request> requests;
  bt::dynamic_synapse synapse;
  std::shared_ptr<const synapse_type> type;
  double timeout = 0;

  template <class Token>
  void start(bt::dendrite& d, Token&& token) {
    d.async_forward_mixed(std::move(requests), std::move(synapse), timeout,
                          std::forward<Token>(token));
  }
};

/// ValueError when a synapse target has no synapse to be sent, TypeError for an entry that is
/// neither a MixedRequest nor an axon, or a synapse that is not a Synapse.
mixed_call_args mixed_call_from_py(py::handle requests, py::handle synapse, double timeout);

/// One answer per request, in order: the Synapse of a synapse target, else the HttpCallResponse.
py::list mixed_answers_to_py(const std::shared_ptr<const synapse_type>& type,
                             std::vector<bt::mixed_answer<bt::dynamic_synapse>>&& answers);

/// Registers MixedRequest, the target of a mixed fan-out.
void init_mixed_request(py::module_& m);

/// Registers HttpCallResponse (with its first name, EpistulaResponse), the answer of a plain call.
void init_http_call_response(py::module_& m);

}  // namespace btpy
