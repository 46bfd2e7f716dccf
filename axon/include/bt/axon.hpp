// bt::axon: the HTTP server a miner runs, wire-compatible with Python validators (PROTOCOL 5).
//
//   bt::axon ax(bt::keypair::from_uri("//Bob"), {.port = 8091});
//   ax.attach<my_synapse>([](my_synapse& s, const bt::request_context& caller) {
//     s.output = s.input * 2;                          // runs on the worker pool
//   }, {.blacklist = [](const bt::synapse&, const bt::request_context& caller) {
//         return caller.hotkey == banned ? bt::verdict::deny("banned") : bt::verdict::allow();
//       },
//       .priority = [](const bt::synapse&, const bt::request_context& caller) { return
//       stake(caller.hotkey); }});
//   ax.start();                                        // listening; ax.info() is the AxonInfo
//   ...
//   ax.stop();                                         // drains in-flight requests
//
// Every request passes, in this order and before its body is read where possible: header limits,
// exact route match, header parse, signature + nonce verification against this axon's hotkey,
// blacklist (on the verified caller), priority admission to a bounded queue, body read (size
// limit), body hash check, forward (worker pool or coroutine) under the request's deadline, and
// the response. See axon/src/pipeline/pipeline.cpp and docs/axon.md.
#pragma once

#include <bt/axon_info.hpp>
#include <bt/axon_options.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>
#include <bt/metrics.hpp>
#include <bt/request_context.hpp>
#include <bt/stream_writer.hpp>
#include <bt/synapse.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace bt {

/// The answer of a blacklist or custom verify function.
struct verdict {
  bool allowed = true;
  std::string reason{};  ///< shown to the client when denied

  static verdict allow() { return {}; }
  static verdict deny(std::string reason) { return {false, std::move(reason)}; }
};

/// How a route's requests are authenticated (docs/axon.md "Plain JSON routes"; PROTOCOL 12, 14):
/// the SET of schemes the route accepts, one bit each: bittensor's signed synapse headers
/// (PROTOCOL 5.5; a session's MAC, PROTOCOL 13, is part of it), Epistula v2's signed headers over
/// the exact body bytes (PROTOCOL 12), btauth/1's X-Bittensor-* headers over the method, the
/// request target and the body (Bittensor SDK v11's http_auth, PROTOCOL 14). `either` names the
/// set {bittensor, epistula}. Sets combine with `|`; each request is authenticated by the one
/// scheme whose headers it carries. A synapse route accepts a non-empty subset of `either`; a
/// plain route (axon::route) a non-empty subset of {epistula, btauth}; anything else is refused.
enum class auth_mode : unsigned {
  bittensor = 1U,
  epistula = 2U,
  either = bittensor | epistula,
  btauth = 4U,
};

constexpr auth_mode operator|(auth_mode a, auth_mode b) noexcept {
  return static_cast<auth_mode>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
/// Whether the set `accepted` holds every scheme of `scheme`.
constexpr bool accepts(auth_mode accepted, auth_mode scheme) noexcept {
  return (static_cast<unsigned>(accepted) & static_cast<unsigned>(scheme)) ==
         static_cast<unsigned>(scheme);
}

/// Per-route policy. The functions receive the *header view* of the request (base synapse fields
/// as sent in headers; the body has not been read yet) and the verified caller. They run on an
/// I/O thread, possibly concurrently: keep them fast, non-blocking and thread-safe.
struct route_options {
  /// Denied -> 403 `Forbidden. Key is blacklisted: {reason}.` Runs after verification, so the
  /// hotkey it sees is authenticated (Python runs it before, on a claim: D4).
  std::function<verdict(const synapse& headers, const request_context& caller)> blacklist{};
  /// Queue order: higher first, first come first served among equals (Python computes it and then
  /// ignores it: D15). Absent: 0.
  std::function<double(const synapse& headers, const request_context& caller)> priority{};
  /// An extra check after the built-in signature and freshness checks (never instead of them, so
  /// it cannot reopen D1). Denied -> 401 `Not Verified with error: {reason}`.
  std::function<verdict(const synapse& headers, const request_context& caller)> verify{};
  /// `epistula`: the synapse's JSON is the body Epistula signs, and the caller is
  /// Epistula-Signed-By (the body's dendrite.hotkey, when present, must name it). `either`:
  /// Epistula's path when the request carries an Epistula-* field, else bittensor's; one that
  /// carries both an Epistula-* field and bt_header_dendrite_signature is refused 400 (PROTOCOL
  /// 12.4).
  auth_mode auth = auth_mode::bittensor;

  /// The fields that are values (today `auth`), as bt/option_table.hpp's rows: the one list a
  /// front end that sets them walks. `blacklist`, `priority` and `verify` are not rows: they are
  /// code, not values a flag or a keyword can spell, so each front end passes them its own way
  /// (bt-axon's miner policy; the Python Axon.attach's blacklist and priority callables, which no
  /// table could convert). The Python module has no keyword for `auth` (its routes use the
  /// default, bittensor); a keyword added for it is to be made from this table.
  static constexpr auto option_table();
};

constexpr auto route_options::option_table() {
  return std::tuple{
      option_field{"auth", &route_options::auth,
                   "Which signatures the route accepts: bittensor (default), epistula, or either"}};
}

/// What a plain JSON route's handler answers: the HTTP status (100-599; anything else is
/// answered 500) and the JSON body, sent as `application/json`.
struct json_reply {
  int status = 200;
  json body = json::object();
};

/// A plain JSON route's handler: the exact body bytes, the body parsed as JSON (null for an
/// empty body) and the verified caller (request_context::hotkey is the Epistula-Signed-By or
/// X-Bittensor-Hotkey address once its signature was checked; request_context::scheme says
/// which). Runs on the worker pool; may run concurrently with
/// itself (must be thread-safe). May throw bt::forward_error to choose an error status, as a
/// synapse forward does; any other exception is answered 500 `Internal Server Error #<id>`.
using json_handler =
    std::function<json_reply(std::string_view body, const json& parsed, const request_context&)>;

/// Policy of a plain JSON route (axon::route). Blacklist and priority see the verified caller
/// only (there is no synapse), and run after the signature check and the replay store.
struct json_route_options {
  /// The schemes the route accepts: a non-empty subset of {epistula, btauth} (route() throws
  /// std::invalid_argument for anything else: a bittensor signature covers a body only through a
  /// synapse's hash fields). Per request the headers choose: X-Bittensor-* -> btauth/1,
  /// Epistula-* -> Epistula, both -> 400; neither -> the first of the set in that order says what
  /// is missing. The default stays Epistula alone; a route opts into btauth/1 explicitly.
  auth_mode auth = auth_mode::epistula;
  /// Denied -> 403 `Forbidden. Key is blacklisted: {reason}.`
  std::function<verdict(const request_context& caller)> blacklist{};
  /// Queue order, as route_options::priority.
  std::function<double(const request_context& caller)> priority{};
  /// The request's deadline after its head arrived (a plain request carries no timeout): 408
  /// past it. Capped by axon_options::max_request_timeout.
  std::chrono::milliseconds timeout{12'000};
  /// btauth/1 on this route: overrides of axon_options::btauth_max_age, btauth_allowed_skew
  /// (each 0 to 24 hours; route() throws std::invalid_argument otherwise) and
  /// btauth_require_receiver. Unset: the axon's.
  std::optional<std::chrono::milliseconds> btauth_max_age{};
  std::optional<std::chrono::milliseconds> btauth_allowed_skew{};
  std::optional<bool> btauth_require_receiver{};
};

/// Thrown by a forward function to answer with its own status: HTTP `status()` and
/// {"message": what()} with the bt headers (Python's SynapseException with a preset status).
/// Any other exception gives 500 `Internal Server Error #<id>` (details only in the log).
class forward_error : public std::runtime_error {
 public:
  forward_error(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

namespace detail {

/// An owned synapse of a route's concrete type (bt::synapse has no virtual destructor).
using synapse_ptr = std::unique_ptr<synapse, void (*)(synapse*)>;

/// A route with its types erased; built by axon::attach.
struct route_spec {
  std::shared_ptr<const synapse_descriptor> type;
  std::function<synapse_ptr()> make;  ///< a default-constructed object of the route's type
  /// Exactly one of the four is set: a plain forward (worker pool / coroutine), or a streaming
  /// forward (worker pool with blocking sends / coroutine). The pipeline up to the body hash is
  /// the same for all; only the response stage differs.
  std::function<void(synapse&, const request_context&)> forward;
  std::function<boost::asio::awaitable<void>(synapse&, const request_context&)> forward_async;
  std::function<void(synapse&, stream_writer&, const request_context&)> stream;
  std::function<boost::asio::awaitable<void>(synapse&, stream_writer&, const request_context&)>
      stream_async;
  route_options policy;
  /// A plain JSON route (axon::route) instead of a synapse: `type` and the four forwards above
  /// are null, and these describe it.
  json_handler json_forward;
  std::string json_path;  ///< "/echo"
  bool json_get = false;  ///< the route's method is GET (else POST)
  json_route_options json_policy;
  /// Only for the built-in ping, whose forward returns its input: runs on the I/O thread.
  bool run_inline = false;

  bool streaming() const noexcept { return stream || stream_async; }
};

struct axon_access;

template <class>
inline constexpr bool dependent_false = false;

/// Stores `g` (already called with the full argument list) in the slot its result selects.
template <class T, class G>
void bind_plain(route_spec& r, G g) {
  using result = std::invoke_result_t<G&, T&, const request_context&>;
  if constexpr (std::is_same_v<result, boost::asio::awaitable<void>>) {
    r.forward_async = [g](synapse& s, const request_context& c) {
      return g(static_cast<T&>(s), c);
    };
  } else {
    static_assert(std::is_void_v<result>, "a forward function returns void or awaitable<void>");
    r.forward = [g](synapse& s, const request_context& c) { g(static_cast<T&>(s), c); };
  }
}

template <class T, class G>
void bind_streaming(route_spec& r, G g) {
  using result = std::invoke_result_t<G&, T&, stream_writer&, const request_context&>;
  if constexpr (std::is_same_v<result, boost::asio::awaitable<void>>) {
    r.stream_async = [g](synapse& s, stream_writer& w, const request_context& c) {
      return g(static_cast<T&>(s), w, c);
    };
  } else {
    static_assert(std::is_void_v<result>,
                  "a streaming forward function returns void or awaitable<void>");
    r.stream = [g](synapse& s, stream_writer& w, const request_context& c) {
      g(static_cast<T&>(s), w, c);
    };
  }
}

/// Recognises the forward's form by what it can be called with, then by what it returns.
template <class T, class F>
void bind_forward(route_spec& r, F&& f) {
  using fn_type = std::decay_t<F>;
  auto fn = std::make_shared<fn_type>(std::forward<F>(f));
  if constexpr (std::is_invocable_v<fn_type&, T&, stream_writer&, const request_context&>) {
    bind_streaming<T>(
        r, [fn](T& s, stream_writer& w, const request_context& c) { return (*fn)(s, w, c); });
  } else if constexpr (std::is_invocable_v<fn_type&, T&, stream_writer&>) {
    bind_streaming<T>(r,
                      [fn](T& s, stream_writer& w, const request_context&) { return (*fn)(s, w); });
  } else if constexpr (std::is_invocable_v<fn_type&, T&, const request_context&>) {
    bind_plain<T>(r, [fn](T& s, const request_context& c) { return (*fn)(s, c); });
  } else if constexpr (std::is_invocable_v<fn_type&, T&>) {
    bind_plain<T>(r, [fn](T& s, const request_context&) { return (*fn)(s); });
  } else {
    static_assert(dependent_false<F>,
                  "forward must be callable as f(T&, const bt::request_context&) or f(T&), or "
                  "(streaming) as f(T&, bt::stream_writer&, const bt::request_context&) or "
                  "f(T&, bt::stream_writer&); returning void (worker pool) or "
                  "boost::asio::awaitable<void> (coroutine)");
  }
}

}  // namespace detail

class axon {
 public:
  using options = axon_options;

  /// `hotkey` must hold its secret (error responses are signed) unless
  /// options.sign_error_responses is false. The base `Synapse` ping route is attached.
  explicit axon(keypair hotkey, axon_options opts = {});
  /// Stops (as stop()) if still running. With handlers abandoned by stop() still running, the
  /// axon's state is released by the last of them when it returns, not here.
  ~axon();
  axon(const axon&) = delete;
  axon& operator=(const axon&) = delete;

  /// Serves synapse type T at "/" + T's name. `forward` is one of
  ///   void(T&, const request_context&)  or  void(T&)             -- runs on the worker pool
  ///   awaitable<void>(T&, const request_context&) or (T&)         -- a coroutine on the I/O thread
  ///     (must not block; it is told to stop through Asio cancellation at the deadline)
  /// It fills the outputs of the synapse in place; the synapse is then echoed back (PROTOCOL 5.11).
  /// It may set `axon.status_code`/`status_message` or throw bt::forward_error.
  /// A streaming forward (PROTOCOL 7) also takes the chunk writer (bt/stream_writer.hpp):
  ///   void(T&, stream_writer&, const request_context&)  or  void(T&, stream_writer&)
  ///     -- worker pool, writer.send_blocking()
  ///   awaitable<void>(T&, stream_writer&, const request_context&) or (T&, stream_writer&)
  ///     -- coroutine on the I/O thread, co_await writer.send()
  /// T is usually a bt::streaming_synapse, but the axon needs only its synapse part.
  /// Forward functions may run concurrently: they must be thread-safe.
  /// Call before start(). Attaching "Synapse" replaces the built-in ping; attaching another name
  /// twice throws std::logic_error.
  template <class T, class F>
  axon& attach(F&& forward, route_options policy = {}) {
    static_assert(std::is_base_of_v<synapse, T>, "T must derive from bt::synapse");
    static_assert(std::is_default_constructible_v<T>, "T must be default-constructible");
    detail::route_spec r;
    r.type =
        std::shared_ptr<const synapse_descriptor>(std::shared_ptr<void>(), &descriptor_of<T>());
    r.make = [] {
      return detail::synapse_ptr(new T(), [](synapse* p) { delete static_cast<T*>(p); });
    };
    detail::bind_forward<T>(r, std::forward<F>(forward));
    r.policy = std::move(policy);
    add_route(std::move(r));
    return *this;
  }

  /// Serves a synapse type known only at run time (bt::make_dynamic_descriptor), by its name.
  /// The forward receives a bt::dynamic_synapse; otherwise as above.
  template <class F>
  axon& attach(std::shared_ptr<const synapse_descriptor> type, F&& forward,
               route_options policy = {}) {
    if (!type) throw std::invalid_argument("bt::axon::attach: null descriptor");
    detail::route_spec r;
    r.type = type;
    r.make = [type] {
      return detail::synapse_ptr(new dynamic_synapse(type),
                                 [](synapse* p) { delete static_cast<dynamic_synapse*>(p); });
    };
    detail::bind_forward<dynamic_synapse>(r, std::forward<F>(forward));
    r.policy = std::move(policy);
    add_route(std::move(r));
    return *this;
  }

  /// Serves a plain JSON route: `method` "POST" or "GET", `path` an exact path ("/echo"; no
  /// query, not a synapse's path). Every request is authenticated by one scheme of
  /// `options.auth` (Epistula v2 by default: PROTOCOL 12; btauth/1: PROTOCOL 14) before the
  /// handler runs; blacklist, priority, the
  /// request's deadline, the body limit and the worker pool apply as for synapses. The answer
  /// is the handler's status and JSON body. Call before start(); throws std::invalid_argument
  /// for a bad method, path or auth mode, std::logic_error for a path already served or after
  /// start().
  axon& route(std::string_view method, std::string_view path, json_handler handler,
              json_route_options options = {});

  /// Replaces the policy (blacklist, priority, verify) of an attached route, for example the
  /// built-in "Synapse" ping, whose forward stays ours. Call before start(); throws
  /// std::logic_error for an unknown name or after start().
  axon& set_route_options(std::string_view synapse_name, route_options policy);

  /// Binds, listens and starts the I/O threads and the worker pool; returns once listening
  /// (info() then has the real port). Throws std::system_error (bind failure, ...) or
  /// std::invalid_argument (bad options). Not restartable after stop().
  void start();
  void start(std::error_code& ec);

  /// Graceful shutdown: stops accepting, closes idle connections, lets in-flight requests finish
  /// (each answered once) up to options.drain_timeout, then cuts the remaining connections, tells
  /// their handlers to stop (cancelled()) and joins the threads. A plain handler still running
  /// after that (plus a grace period of 1 s once told to stop) is abandoned and logged
  /// (abandoned_handlers()), so stop() never waits for a handler that does not return. Blocks
  /// until done; idempotent.
  /// Must not be called from a handler or an I/O thread (throws std::logic_error).
  void stop();

  /// Serves until SIGINT or SIGTERM, then stop() (the graceful drain above) and returns, so that a
  /// miner needs no signal handling of its own. The signals are caught from the start of the call
  /// (one arriving during start-up drains too) until it returns. Starts the axon unless it is
  /// running (throwing as start() does), then calls `on_listening` if given (e.g. to print or
  /// publish info()). Call from the main thread, not from a handler or an I/O thread.
  void run(const std::function<void(axon&)>& on_listening = {});

  /// True between a successful start() and stop().
  bool running() const noexcept;

  /// After stop(): the route (synapse name) of each plain handler that had not returned by the
  /// drain deadline, which stop() abandoned on its worker thread; empty when every handler
  /// returned. Such a handler runs on; when it returns, its result is dropped, and the axon's
  /// state it may touch stays alive until then (the destructor hands it to that thread).
  std::vector<std::string> abandoned_handlers() const;

  /// AxonInfo as validators should see it (version, ip, port, ip_type, hotkey, coldkey, protocol
  /// 4).
  axon_info info() const;
  /// The port actually bound (0 before start()).
  std::uint16_t port() const noexcept;
  /// The address actually bound ("127.0.0.1", "::", ...), empty before start().
  std::string bound_ip() const;
  /// This axon's hotkey: requests must be signed for its SS58 address.
  const keypair& hotkey() const noexcept;
  /// Synapse names in attach order, "Synapse" first (plain JSON routes are not listed).
  std::vector<std::string> synapse_names() const;
  /// Connections currently open.
  std::size_t connections() const noexcept;
  /// Requests waiting for a worker (0 before start()).
  std::size_t queued_requests() const;
  /// The axon's metrics registry (bt_axon_* families, docs/deployment.md), served by the admin
  /// listener at /metrics. A miner may register its own metrics here, at any time; they live as
  /// long as the axon.
  bt::metrics::registry& metrics() noexcept;
  /// The admin listener's bound port (0 when options.admin_listen is empty or before start()).
  std::uint16_t admin_port() const noexcept;

  struct impl;

 private:
  friend struct detail::axon_access;  // the in-memory session driver (axon/memory/)
  void add_route(detail::route_spec r);
  std::unique_ptr<impl> impl_;
};

}  // namespace bt
