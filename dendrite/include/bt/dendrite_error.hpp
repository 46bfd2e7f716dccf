// bt::dendrite_errc: why a dendrite call ended without a usable HTTP response, and the one table
// that maps each cause to the status code and message a Python validator would see
// (PROTOCOL 6.1, classified by cause as defect D18 recommends).
//
// A call never throws and never reports these as exceptions: the cause ends up in the returned
// synapse as dendrite.status_code / dendrite.status_message (axon.status_code stays None and
// dendrite.process_time stays None, as in Python). docs/dendrite.md lists the table with examples.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace bt {

struct synapse;

/// Failure kinds, few on purpose (a caller can handle each); each says whether a retry can help.
enum class dendrite_errc {
  /// TCP connect failed (refused, unreachable, no route, out of descriptors).
  /// 503 "Service unavailable at {ip}:{port}/{Name}". The miner is down; retry next step.
  connect_failed = 1,
  /// The total deadline (connect + write + read) passed.
  /// 408 "Request timeout after {timeout} seconds". The miner is slow; do not retry this step.
  timeout,
  /// The peer closed or reset the connection before a complete response head.
  /// 503 "Service disconnected: {detail}". Transient; retry next step.
  disconnected,
  /// The peer closed inside the response body (fewer bytes than Content-Length / chunks).
  /// 400 "Payload error: Response payload is not completed". A broken miner.
  payload_incomplete,
  /// The response head or body exceeds the configured limit (dendrite_options).
  /// 422 "Failed to parse response: {detail}". A broken or hostile miner; never retry.
  response_too_large,
  /// Not HTTP, not JSON, not a JSON object, not the synapse's shape, or an unparsable bt header.
  /// 422 "Failed to parse response: {detail}". A broken miner; never retry.
  malformed_response,
  /// The axon_info cannot be addressed (its ip is not an IP literal, since no DNS is ever used;
  /// or its hotkey, part of the signed message, is not an SS58 address). Nothing is sent.
  /// 422 "Failed to parse response: invalid axon address ...". Fix the metagraph entry.
  invalid_address,
  /// The caller cancelled the operation (cancellation slot) or the dendrite was destroyed.
  /// 503 "Request cancelled". Nothing was learned about the miner.
  cancelled,
  /// The answer's bt-response-signature does not verify against the hotkey the call addressed,
  /// or it is missing under verify_responses = required (docs/protocol.md, "Response
  /// signatures"). 421 "Response not authenticated: {detail}". The answer's outputs are
  /// discarded: it may not come from that miner (a proxy in between, or another process).
  response_unauthenticated,
};

const std::error_category& dendrite_category() noexcept;

inline std::error_code make_error_code(dendrite_errc e) noexcept {
  return {static_cast<int>(e), dendrite_category()};
}

/// The status code each failure kind reports (the table above).
int dendrite_status(dendrite_errc e) noexcept;

/// The status message, shaped like Python's process_error_message:
///   connect_failed      "Service unavailable at {axon_ip}:{axon_port}/{name}"
///   timeout             "Request timeout after {repr(timeout)} seconds"
///   disconnected        "Service disconnected: {detail}"
///   payload_incomplete  "Payload error: {detail}"
///   response_too_large, malformed_response, invalid_address
///                       "Failed to parse response: {detail}"
///   cancelled           "Request cancelled" (+ ": {detail}" when detail is not empty)
///   response_unauthenticated  "Response not authenticated: {detail}"
std::string dendrite_status_message(dendrite_errc e, std::string_view axon_ip,
                                    std::int64_t axon_port, std::string_view name, double timeout,
                                    std::string_view detail);

/// Records a failure in `s` as Python's process_error_message does: sets
/// dendrite.status_code and dendrite.status_message from the table (axon ip/port and timeout
/// are read from `s`, `name` is the synapse type's name) and leaves everything else alone.
void set_dendrite_failure(synapse& s, std::string_view name, dendrite_errc e,
                          std::string_view detail = {});

}  // namespace bt

template <>
struct std::is_error_code_enum<bt::dendrite_errc> : std::true_type {};
