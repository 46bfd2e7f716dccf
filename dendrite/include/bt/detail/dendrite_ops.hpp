// Internals of bt::dendrite that its templates and its benchmark need: the type-erased view of a
// caller's synapse, the completion wrapper that hands a typed result back through
// any_completion_handler, and the per-call codec (request encoding, response merge) that runs
// without any socket. Not a stable interface.
#pragma once

#include <bt/axon_info.hpp>
#include <bt/dendrite_error.hpp>
#include <bt/detail/uuid.hpp>  // make_uuid1, the dendrite's instance id
#include <bt/dynamic_synapse.hpp>
#include <bt/epistula.hpp>
#include <bt/keypair.hpp>
#include <bt/synapse.hpp>

#include <boost/asio/associator.hpp>
#include <boost/beast/http/fields.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace bt::detail {

/// Owning pointer to a synapse of some derived type (synapse has no virtual destructor, so the
/// deleter is the derived type's).
using owned_synapse = std::unique_ptr<synapse, void (*)(synapse*)>;

/// A caller's synapse seen through its descriptor. `object` must outlive the call.
struct synapse_ref {
  synapse* object = nullptr;
  const synapse_descriptor* descriptor = nullptr;
  /// A default object of the same type as `like`, for validating a response body into it
  /// before anything is copied into `object`.
  owned_synapse (*make_blank)(const synapse& like) = nullptr;
};

template <class T>
owned_synapse make_blank_of(const synapse& like) {
  if constexpr (std::is_base_of_v<dynamic_synapse, T>) {
    return owned_synapse(new T(static_cast<const T&>(like).type),
                         [](synapse* p) { delete static_cast<T*>(p); });
  } else {
    (void)like;
    return owned_synapse(new T(), [](synapse* p) { delete static_cast<T*>(p); });
  }
}

template <class T>
synapse_ref make_synapse_ref(T& s) {
  static_assert(std::is_base_of_v<synapse, T>, "a synapse type derives from bt::synapse");
  static_assert(std::is_default_constructible_v<T> || std::is_base_of_v<dynamic_synapse, T>,
                "a synapse type used with the dendrite must be default-constructible");
  return synapse_ref{&s, &descriptor_for(s), &make_blank_of<T>};
}

/// Completion wrapper: owns the typed result while the type-erased operation runs and passes it
/// to the user's handler on completion. Forwards every associated characteristic (executor,
/// allocator, cancellation slot) of the wrapped handler, so coroutines resume where they were.
template <class Result, class Handler>
struct result_handler {
  Handler handler_;
  std::unique_ptr<Result> result_;

  void operator()() {
    Result r = std::move(*result_);
    result_.reset();
    std::move(handler_)(std::move(r));
  }
};

// ---- the per-call codec (no sockets; benchmarked on its own) ----

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

/// Why an Epistula call's method or path cannot be sent (empty when both can): the method must
/// be an HTTP token, the path start with '/' and hold no spaces or control characters.
std::string epistula_target_problem(std::string_view method, std::string_view path);

/// The HTTP/1.1 head of an Epistula request (PROTOCOL 12): request line, Host,
/// Content-Type application/json, Content-Length `body_bytes`, the Epistula headers of `h`
/// (Signed-For only when not empty), blank line. `head` is cleared first.
void encode_epistula_head(std::string_view method, std::string_view path, std::string_view host,
                          const epistula::request_headers& h, std::size_t body_bytes,
                          std::string& head);

/// Whether a Content-Type value is JSON as aiohttp's response.json() accepts it:
/// application/json or application/<something>+json, parameters allowed, case-insensitive.
bool is_json_content_type(std::string_view value) noexcept;

/// "ip:port", with IPv6 literals bracketed (PROTOCOL 4.1 / D19).
std::string host_header(std::string_view ip, std::uint16_t port);

}  // namespace bt::detail

// Forward every associator of the wrapped handler (Boost.Asio 1.81 `associator`), as
// executor_binder does.
template <template <class, class> class Associator, class Result, class Handler,
          class DefaultCandidate>
struct boost::asio::associator<Associator, bt::detail::result_handler<Result, Handler>,
                               DefaultCandidate> {
  using type = typename Associator<Handler, DefaultCandidate>::type;

  static type get(const bt::detail::result_handler<Result, Handler>& h) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.handler_);
  }
  static auto get(const bt::detail::result_handler<Result, Handler>& h,
                  const DefaultCandidate& c) noexcept
      -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler_, c)) {
    return Associator<Handler, DefaultCandidate>::get(h.handler_, c);
  }
};
