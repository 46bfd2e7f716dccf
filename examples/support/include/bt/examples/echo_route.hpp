// The example plain JSON route POST /echo (docs/axon.md "Plain JSON routes and Epistula"): one
// definition, served by bt-axon and by bt-ping --epistula's in-process axon.
#pragma once

#include <bt/axon.hpp>
#include <bt/json.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace bt::examples {

/// The JSON body back, with the verified signer: an object gets a "signed_by" member (replacing
/// one it had); any other value comes back as {"body": <value>, "signed_by": ...} (an empty body
/// as null).
inline json_reply echo(std::string_view, const json& body, const request_context& caller) {
  json_reply reply;
  reply.body = body.is_object() ? body : json{{"body", body}};
  reply.body["signed_by"] = std::string(caller.hotkey);
  return reply;
}

/// Serves echo() at POST /echo under `options` (Epistula by default). Throws as axon::route.
inline axon& attach_echo_route(axon& ax, json_route_options options = {}) {
  return ax.route("POST", "/echo", echo, std::move(options));
}

}  // namespace bt::examples
