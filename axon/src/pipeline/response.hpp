// Building responses (PROTOCOL 5.11, 5.12, 6.7): the status line, content headers and the bt
// headers from the codec's to_headers, into a response_buffers the connection then writes. No
// I/O here; the status and text of an error answer come from the caller (axon_errc.hpp's table).
#pragma once

#include <bt/axon.hpp>
#include <bt/body_hash.hpp>
#include <bt/sha256.hpp>
#include <bt/synapse.hpp>

#include "auth/epistula.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bt::detail {

struct route;

/// The bytes of one answer, reused from request to request by a connection.
struct response_buffers {
  std::string head;     // status line and headers, through the blank line
  std::string body;     // the body (Content-Length)
  std::string scratch;  // the signed message of an error answer, etc.
};

/// Inserts "name: value\r\n" into a complete head, before the blank line that ends it.
void add_head_field(response_buffers& out, std::string_view name, std::string_view value);

/// The wall clock in nanoseconds since the Unix epoch: the unit of nonces, of request freshness
/// and of the axon nonces of signed answers.
std::int64_t wall_ns();

/// Success (or a status the forward set itself): the body synapse echoed with its outputs, as
/// JSON with Starlette's compact separators, and to_headers() of it. Sets axon.status_code to 200
/// and status_message to "Success" unless the forward chose them, and axon.process_time.
/// Returns the HTTP status used. `request_hash`: the body hash the request was checked with; the
/// computed_body_hash header reuses it when the handler left the hashed fields unchanged.
int build_synapse_response(response_buffers& out, const route& r, synapse& s, double process_time,
                           bool close, body_hash_memo& request_hash);

/// Error: {"message": message} and the bt headers of `headers` (the request's header view, with
/// the axon's stamps of PROTOCOL 5.3 step 5 and its signature of 5.13), or of a fresh base
/// Synapse when the request never got that far (`r` or `headers` null: 400, 404, 405, 431).
/// `verified`: the request passed verification, so the answer may be signed (D29).
/// `retry_after_s` > 0 adds Retry-After.
void build_error_response(const axon::impl& core, response_buffers& out, int status,
                          std::string_view message, const route* r, const synapse* headers,
                          bool verified, double process_time, bool close, int retry_after_s = 0);

/// A plain JSON route's answer (PROTOCOL 12): the status line, `content-type:
/// application/json`, Content-Length of `out.body` (the JSON text, already written there) and
/// Retry-After when `retry_after_s` > 0; no bt headers (there is no synapse).
void build_json_response(response_buffers& out, int status, bool close, int retry_after_s = 0);

/// `{"message": message}` into `out` (raw UTF-8, invalid bytes replaced), the body of every
/// error answer.
void write_message_body(std::string& out, std::string_view message);

/// The head of a streamed answer (PROTOCOL 7, D17) into `out`: HTTP 200 whatever the synapse's
/// status says, `content-type: text/event-stream` first, the bt headers of `s` (axon.status_code
/// 200 and status_message "Success" unless the forward chose them, axon.process_time set here),
/// `transfer-encoding: chunked`, no Content-Length.
/// `signed_trailer`: the head announces the bt-response-signature trailer (build_stream_end).
void build_stream_head(std::string& out, const route& r, synapse& s, double process_time,
                       bool close, bool signed_trailer);

/// What a response signature names of the request it answers (PROTOCOL 5.15): the caller's
/// hotkey and the request id the request was VERIFIED under, both empty when nothing verified it.
/// Views into a verified_identity (below), valid while it lives.
struct response_identity {
  std::string_view caller_hotkey;
  std::string_view request_id;
};

/// The identity a request was verified under (PROTOCOL 5.15), recorded by the scheme whose check
/// succeeded, at that moment: the synapse signature or the session MAC (set_synapse, over the
/// header fields that check covered) and the Epistula signature (set: Signed-By and the uuid).
/// Nothing else ever fills it, so an answer never names what headers its route did not
/// authenticate (an Epistula-* field on a bittensor route, a bt_header_dendrite_* field on
/// Epistula's path) nor what a refused request claimed. Fixed buffers: recording allocates
/// nothing, and the verified forms bound both parts (an SS58 address decodes only up to 50
/// characters; a request id is a non-negative int64 in decimal, '.' and a 36-character uuid, or
/// an Epistula uuid4).
class verified_identity {
 public:
  static constexpr std::size_t max_part = 64;

  /// Records the identity. A part longer than max_part (not reachable after the checks above)
  /// records nothing, so that the answer names no caller rather than a cut one; returns false.
  bool set(std::string_view caller_hotkey, std::string_view request_id) noexcept;
  /// set(dendrite.hotkey, "{dendrite.nonce}.{dendrite.uuid}") of a verified header synapse
  /// (its hotkey, nonce and uuid present, as verification requires; false otherwise).
  bool set_synapse(const terminal_info& dendrite) noexcept;

  bool empty() const noexcept { return hotkey_len_ == 0; }
  response_identity view() const noexcept {
    return {std::string_view(hotkey_.data(), hotkey_len_),
            std::string_view(request_id_.data(), request_id_len_)};
  }

 private:
  std::array<char, max_part> hotkey_{};
  std::array<char, max_part> request_id_{};
  std::uint8_t hotkey_len_ = 0;
  std::uint8_t request_id_len_ = 0;
};

/// Whether this axon signs its answers: opts.sign_responses, and never under
/// insecure_skip_verification, where no request is verified and so no answer could name a
/// caller (PROTOCOL 5.15).
bool answers_signed(const axon::impl& core) noexcept;

/// Adds `bt-response-signature` to the complete answer in `out` (its head through the blank
/// line, its body) when answers_signed(core): one sr25519 signature by the axon's hotkey over
/// the axon nonce (its clock in nanoseconds), `status`, the SHA-256 of out.body and `id`
/// (PROTOCOL 5.15, v2). Streamed answers are signed in a trailer instead (build_stream_end).
void sign_response(const axon::impl& core, response_buffers& out, int status,
                   const response_identity& id);

/// The end of a streamed answer's chunked body (PROTOCOL 5.15): the last chunk, with a
/// `bt-response-signature` trailer field over status 200 and `body_hash` (every chunk's bytes)
/// when answers_signed(core); plain "0\r\n\r\n" otherwise.
std::string build_stream_end(const axon::impl& core, const response_identity& id,
                             const sha256_digest& body_hash);

/// "HTTP/1.1 100 Continue\r\n\r\n"
inline constexpr std::string_view continue_response = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace bt::detail
