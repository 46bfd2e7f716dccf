// The dendrite's per-call codec (request encoding, response merge), which runs without any
// socket: used by the dendrite's sources, its tests and its benchmark (bt_dendrite_internal), not
// installed. The type-erased call machinery its functions take is in <bt/detail/dendrite_call.hpp>
// (public: the dendrite's templates need it). Not a stable interface.
#pragma once

#include <bt/axon_info.hpp>
#include <bt/btauth.hpp>
#include <bt/dendrite_error.hpp>
#include <bt/detail/dendrite_call.hpp>
#include <bt/detail/uuid.hpp>  // make_uuid1, the dendrite's instance id
#include <bt/dynamic_synapse.hpp>
#include <bt/epistula.hpp>
#include <bt/keypair.hpp>
#include <bt/synapse.hpp>

#include <boost/beast/http/fields.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace bt::detail {

/// What this dendrite puts into every request.
struct request_identity {
  const keypair* key = nullptr;  ///< null: no signature (dendrite_options::insecure_skip_signing)
  std::string_view hotkey;       ///< key->ss58_address()
  std::string_view uuid;         ///< per-instance uuid1 text
  std::int64_t version = 0;      ///< version_as_int announced
};

/// Sets the fields PROTOCOL 4.2 sets before anything is sent and that do not depend on the
/// connection: timeout, a fresh axon block {ip, port, hotkey} and a fresh dendrite block
/// {ip (when known), version, uuid, hotkey}. Failures before sending report against these.
void preset_request(synapse& s, const axon_info& target, double timeout, const request_identity& id,
                    std::string_view dendrite_ip);

/// Completes and encodes one request (PROTOCOL 4.2-4.5): dendrite.ip (when not empty),
/// dendrite.nonce, the signature over "{nonce}.{dendrite_hotkey}.{axon_hotkey}.{uuid}.{body_hash}",
/// then `body` = the JSON body (python_dumps style) and `head` = the HTTP/1.1 request head
/// (POST /Name, Host, Content-Type, Content-Length, the to_headers() lines, blank line).
/// `host` is the Host header value ("ip:port", IPv6 bracketed). Both buffers are cleared first
/// and keep their capacity. `scratch` is a reusable buffer for the signed message.
void encode_request(const synapse_descriptor& d, synapse& s, std::string_view dendrite_ip,
                    std::int64_t nonce, const request_identity& id, std::string_view host,
                    std::string& scratch, std::string& head, std::string& body);

/// encode_request in two halves, so that the signature can be made elsewhere (a fan-out's
/// signing pool) between them. begin_request sets dendrite.ip (when not empty) and
/// dendrite.nonce, clears the signature, writes the message to sign into `scratch` and returns
/// where its body hash begins in it. finish_request sets the signature `sig` (null: none, as
/// with insecure_skip_signing) and writes `body` and `head` as encode_request does, with
/// `signed_message` (what begin_request wrote) and `hash_at` (what it returned).
std::size_t begin_request(const synapse_descriptor& d, synapse& s, std::string_view dendrite_ip,
                          std::int64_t nonce, const request_identity& id, std::string& scratch);
void finish_request(const synapse_descriptor& d, synapse& s, const signature_bytes* sig,
                    std::string_view host, std::string_view signed_message, std::size_t hash_at,
                    std::string& head, std::string& body);

/// Merges one complete HTTP response into `ref.object` (PROTOCOL 6.2-6.5, stricter per D6):
///  * the body must be JSON with a JSON content type (else malformed_response, as Python);
///  * 200: the body is validated as the synapse's type into a blank object; only output fields
///    (neither required nor hash fields) and axon.status_code/status_message/process_time are
///    copied; the caller's inputs, timeout and the target identity stay;
///  * other statuses: axon.status_code = status, axon.status_message = body["message"] (or None);
///  * then the bt_header_axon_* headers merge into the axon block (non-null values win) except
///    ip/port/hotkey (the target identity the caller addressed); the dendrite block keeps the
///    caller's own identity;
///  * dendrite.status_code/status_message := axon's.
/// Nothing is modified when it returns a failure: the whole response is checked first.
/// Returns {} or malformed_response with `detail` set.
std::error_code apply_response(const synapse_ref& ref, unsigned status,
                               const boost::beast::http::fields& headers, std::string_view body,
                               std::string& detail);

/// A copy of peer text that is valid UTF-8: each malformed byte becomes U+FFFD (the rule of
/// PROTOCOL 2.7 for header values), so a reason phrase or header value the dendrite hands on
/// can always be written as JSON or converted to a Python str.
std::string valid_utf8(std::string_view text);

/// Why a plain request's (Epistula, btauth/1) method or path cannot be sent (empty when both
/// can): the method must be an HTTP token, the path start with '/' and hold no spaces or control
/// characters.
std::string plain_target_problem(std::string_view method, std::string_view path);

/// The HTTP/1.1 head of an Epistula request (PROTOCOL 12): request line, Host,
/// Content-Type application/json, Content-Length `body_bytes`, the Epistula headers of `h`
/// (Signed-For only when not empty), blank line. `head` is cleared first.
void encode_epistula_head(std::string_view method, std::string_view path, std::string_view host,
                          const epistula::request_headers& h, std::size_t body_bytes,
                          std::string& head);

/// The HTTP/1.1 head of a btauth/1 request (PROTOCOL 14): request line with `target` (path and
/// ?query, exactly as signed), Host, Content-Type application/json, Content-Length
/// `body_bytes`, the X-Bittensor-* headers of `h` (Crypto and Receiver only when not empty),
/// blank line. `head` is cleared first.
void encode_btauth_head(std::string_view method, std::string_view target, std::string_view host,
                        const btauth::request_headers& h, std::size_t body_bytes,
                        std::string& head);

/// Whether a Content-Type value is JSON as aiohttp's response.json() accepts it:
/// application/json or application/<something>+json, parameters allowed, case-insensitive.
bool is_json_content_type(std::string_view value) noexcept;

/// "ip:port", with IPv6 literals bracketed (PROTOCOL 4.1 / D19).
std::string host_header(std::string_view ip, std::uint16_t port);

/// The final synapse of a streamed HTTP 200 (PROTOCOL 7 and 6.4): the fields the type's parser
/// set stay as they are (there is no JSON body to validate); the bt_header_axon_* headers of the
/// response head merge into the axon block (non-null values win) except ip/port/hotkey (the
/// target the caller addressed); dendrite.status_code/status_message := the axon's. A response
/// without bt_header_axon_status_code leaves the status None (PROTOCOL 6.5: a failure).
/// Every bt header must parse (Python's from_headers); otherwise nothing is merged and the
/// result is malformed_response with `detail` set.
std::error_code apply_stream_headers(synapse& s, const boost::beast::http::fields& headers,
                                     std::string& detail);

}  // namespace bt::detail
