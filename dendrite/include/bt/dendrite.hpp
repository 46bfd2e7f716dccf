// bt::dendrite: the client a validator uses to query miners' axons (PROTOCOL sections 4 and 6).
//
//   bt::dendrite d(bt::keypair::from_uri("//Alice"));
//   bt::examples::dummy q; q.dummy_input = 21;
//   auto one = d.call(axon, q, 12.0);                 // blocking
//   auto all = d.forward(metagraph_axons, q, 12.0);   // fan-out, results in the order of axons
//   // from a coroutine, with any completion token:
//   auto r = co_await d.async_call(axon, q, 12.0, boost::asio::use_awaitable);
//   // plain JSON routes, signed with Epistula v2 or btauth/1 (Bittensor SDK v11):
//   auto h = d.btauth_call(axon, "POST", "/forward", R"({"dummy_input": 21})", 12.0);
//   // one query to miners speaking different dialects, answered in order:
//   auto mixed = d.forward_mixed(requests, q, 12.0);
//
// Every call returns the caller's synapse updated with the answer: dendrite.status_code 200 and
// the miner's outputs on success, otherwise the status and message of docs/dendrite.md's table.
// A call never throws and a fan-out never loses a result.
#pragma once

#include <bt/axon_info.hpp>
#include <bt/dendrite_error.hpp>
#include <bt/detail/dendrite_call.hpp>
#include <bt/detail/dendrite_stream.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/epistula.hpp>
#include <bt/keypair.hpp>
#include <bt/metrics.hpp>
#include <bt/option_table.hpp>
#include <bt/streaming_synapse.hpp>
#include <bt/synapse.hpp>
#include <bt/version.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace spdlog {
class logger;
}

namespace bt {

namespace detail {
struct dendrite_state;
struct dendrite_runner;
}  // namespace detail

/// What a dendrite does with an answer's bt-response-signature (PROTOCOL 5.15). It is checked
/// against the hotkey the call addressed (axon_info::hotkey), never one the response names.
enum class response_verification {
  off,         ///< never checked
  if_present,  ///< checked when the header is present; an answer without it is accepted
  required,    ///< an answer without a valid signature fails (response_unauthenticated)
};

/// The names of response_verification's values, as bt-dendrite query's --verify-responses and
/// the Python keyword spell them (an enum option's names, found by bt::cli::add_flags_of).
constexpr std::array<std::pair<std::string_view, response_verification>, 3> option_value_names(
    response_verification) {
  return {{{"off", response_verification::off},
           {"if_present", response_verification::if_present},
           {"required", response_verification::required}}};
}

/// Options of a dendrite; pass by value, e.g. `bt::dendrite_options{.max_concurrency = 64}`.
struct dendrite_options {
  /// Value of bt_header_dendrite_ip. Empty (default): the local address of each connection,
  /// which is what the axon sees on loopback and LAN; nothing is ever looked up on the internet.
  /// When set, an axon whose ip equals it is reached at 127.0.0.1 (our own miner, PROTOCOL 4.1).
  std::string external_ip{};
  /// version_as_int we announce. Python axons apply the nonce freshness rule only to versions
  /// >= 7002000, so keep it at least that.
  std::int64_t version = version_as_int;
  /// I/O threads of a dendrite that owns its io_context. A single call signs (one sr25519
  /// signature) on the I/O thread running it; a fan-out signs in the signing pool
  /// (signing_threads). One thread gives sequential calls the lowest latency (a second costs
  /// each call a hand-off between threads); a validator fanning out to many axons gets its
  /// shortest wall time with one per core (docs/performance.md, "Fan-out: the floor, and the
  /// I/O threads"). 0 is taken as 1.
  unsigned threads = 1;
  /// The signing pool: threads that make a fan-out's request signatures (forward,
  /// forward_mixed's synapse targets), so that N axons are signed on every core while the
  /// I/O stays on the I/O threads. 0 (default): one per CPU core
  /// (std::thread::hardware_concurrency()), unless the dendrite's own I/O threads (`threads`)
  /// already cover the cores: then, as with 1, no pool, each call signs on the I/O thread
  /// running it (as single calls always do). The threads start with the first fan-out. Each
  /// try still gets a fresh nonce, taken just before its signature; a session's MAC'd requests
  /// and unsigned ones (insecure_skip_signing) never wait for the pool.
  unsigned signing_threads = 0;
  /// forward(): calls in flight at once. Each holds a socket (a file descriptor); Linux's
  /// default soft limit is 1024 descriptors. Deadlines count from the forward() call, so a call
  /// still queued at its deadline ends as 408 without a connection.
  std::size_t max_concurrency = 256;
  /// Idle keep-alive connections kept per axon endpoint. Concurrent callers of one axon need one
  /// each; a validator querying each miner once per step needs one.
  std::size_t max_idle_per_endpoint = 4;
  /// Idle connections kept in total: bounds the descriptors a dendrite holds between steps.
  std::size_t max_idle_total = 512;
  /// An idle connection older than this is closed instead of reused (aiohttp keeps 15 s).
  /// Connections the server already closed are detected before reuse, and a reused connection
  /// failing before any response byte is retried once on a fresh one.
  std::chrono::milliseconds idle_timeout{15'000};
  /// Response body limit: a hostile miner cannot make the validator buffer more than this per
  /// call (64 MiB, the axon's default request limit, is far above any honest synapse).
  std::size_t max_response_body_bytes = 64u << 20;
  /// Response head limit (status line + headers). bt headers are short; 64 KiB is generous.
  /// The same budget also covers what a chunked body carries besides data: every chunk
  /// extension and the trailer fields, added to the head's size; and the heads of skipped 1xx
  /// interim responses. A connection's read buffer is capped at this + 64 KiB, so no single
  /// line a peer sends (a chunk-size line, a trailer) can grow memory past it.
  std::size_t max_response_header_bytes = 64u << 10;
  /// 1xx interim responses (100 Continue, 103 Early Hints) skipped before the final answer
  /// (RFC 9112); one more ends the call with 422. 101 Switching Protocols (never requested) is
  /// always refused.
  std::size_t max_interim_responses = 8;
  /// Where per-call lines ("dendrite | --> | ..." at debug) and warnings go; null: nowhere.
  std::shared_ptr<spdlog::logger> logger{};
  /// BENCHMARKS ONLY (bt-ping --no-crypto): send requests without a signature (no
  /// bt_header_dendrite_signature), to measure the framework without the sr25519 cost. Only an
  /// axon running with insecure_skip_verification accepts them. Calls to an axon whose address
  /// is not loopback fail at once (invalid_address) and are never sent; the dendrite logs a
  /// warning when constructed with it.
  bool insecure_skip_signing = false;
  /// Response signatures: a failed check, or a missing header under `required`, ends the call
  /// with 421 (dendrite_errc::response_unauthenticated) and discards the answer's outputs.
  /// Covers every answer: call, an Epistula call, and a stream, whose 200 is checked by its
  /// trailer signature over every chunk once the stream ends (its items were delivered already).
  response_verification verify_responses = response_verification::if_present;
  /// Sessions with our own axons (PROTOCOL 13): the first request on each keep-alive connection
  /// also offers a session (bt-session-offer: one extra sr25519 signature, that request only).
  /// An axon that accepts (bt-session-accept, verified against the hotkey the call addressed)
  /// gets the connection's later requests to that hotkey authenticated by an HMAC-SHA-256
  /// (bt-session) instead of a signature, and answers them with bt-response-mac, which
  /// verify_responses checks as it checks a signature. An axon that ignores the offer (every
  /// Python axon; ours with sessions off) sees exactly today's protocol, and that connection
  /// never offers again. A session ends with its connection, after the axon's request bound,
  /// and 1 s before the lifetime the axon announced; an invalid accept closes the connection.
  /// Not used for Epistula calls, nor with insecure_skip_signing.
  bool session = false;

  /// Every field above with one line of help (bt/option_table.hpp): the list the Python
  /// Dendrite's keyword arguments, bt-dendrite query's flags (where a field names one: the
  /// flag names are bt-dendrite's documented ones) and the docs test walk. `logger` is an
  /// object, not a value.
  static constexpr auto option_table();
};

constexpr auto dendrite_options::option_table() {
  using o = dendrite_options;
  // No upper bound but the type's: a front end reads [1, this] as "a positive integer".
  constexpr double unbounded = double(std::numeric_limits<std::size_t>::max());
  return std::tuple{
      option_field{"external_ip",
                   &o::external_ip,
                   "bt_header_dendrite_ip; empty: the connection's local address",
                   {"external-ip"}},
      option_field{"version", &o::version, "version_as_int announced to axons"},
      option_field{"threads", &o::threads, "I/O threads of a dendrite that owns its io_context"},
      option_field{
          "signing_threads", &o::signing_threads,
          "threads signing a fan-out's requests; 0: one per core unless the I/O threads cover "
          "the cores, 1: none (I/O thread)"},
      option_field{"max_concurrency",
                   &o::max_concurrency,
                   "forward(): calls in flight at once",
                   {"concurrency", option_unit::plain, 1, unbounded}},
      option_field{"max_idle_per_endpoint", &o::max_idle_per_endpoint,
                   "idle keep-alive connections kept per axon endpoint"},
      option_field{"max_idle_total", &o::max_idle_total, "idle connections kept in total"},
      option_field{"idle_timeout", &o::idle_timeout,
                   "an idle connection older than this is closed instead of reused"},
      option_field{"max_response_body_bytes", &o::max_response_body_bytes,
                   "response body limit per call"},
      option_field{"max_response_header_bytes", &o::max_response_header_bytes,
                   "response head limit (with 1xx heads, chunk extensions and trailers)"},
      option_field{"max_interim_responses", &o::max_interim_responses,
                   "1xx interim responses skipped before the final answer"},
      option_field{"logger", &o::logger, "where per-call lines and warnings go (an object)"},
      option_field{"insecure_skip_signing", &o::insecure_skip_signing,
                   "benchmarks only: send requests unsigned (loopback axons only)"},
      option_field{"verify_responses",
                   &o::verify_responses,
                   "response signatures: off, if_present or required",
                   {"verify-responses"}},
      option_field{"session",
                   &o::session,
                   "offer sessions to our own axons (PROTOCOL 13)",
                   {"session", option_unit::flag}},
  };
}

/// The answer to a request by method and path (dendrite::epistula_call, dendrite::btauth_call,
/// and the plain targets of forward_mixed). A call never throws: `error` says when no usable HTTP
/// answer arrived, and then `status` and `status_message` come from docs/dendrite.md's table
/// (408, 503, 421, ...) as for a synapse call.
struct http_call_response {
  int status = 0;                      ///< the HTTP status, or the failure's status
  std::string status_message;          ///< the HTTP reason phrase, or the failure's message
  std::optional<dendrite_errc> error;  ///< set: a client-side failure (the table)
  std::vector<std::pair<std::string, std::string>> headers;  ///< as received (empty on failure)
  std::string body;                                          ///< as received (empty on failure)
  /// Seconds from the call's start to the complete answer (none on failure).
  std::optional<double> process_time;
  /// The answer carried a bt-response-signature that verified (always false when
  /// verify_responses is off).
  bool response_verified = false;
  std::string uuid;   ///< Epistula: the Epistula-Uuid of the request sent (the last attempt's)
  std::string nonce;  ///< btauth/1: the X-Bittensor-Nonce of the request sent (the last attempt's)
};
/// The name epistula_call's answer had first; the same type.
using epistula_response = http_call_response;

/// How a target of a mixed fan-out (dendrite::forward_mixed) is addressed: the dialect its
/// miner speaks.
enum class wire_dialect {
  synapse,   ///< a bittensor synapse, POST /Name (PROTOCOL 4-6), as dendrite::call
  epistula,  ///< method and path signed with Epistula v2 (PROTOCOL 12), as epistula_call
  btauth,    ///< method and path signed with btauth/1 (PROTOCOL 14), as btauth_call
};

/// One target of a mixed fan-out. A synapse target is sent the fan-out's synapse; an Epistula or
/// btauth/1 target is sent `method` `path` (with any ?query) with `body`, verbatim.
struct mixed_request {
  axon_info axon;
  wire_dialect dialect = wire_dialect::synapse;
  std::string method = "POST";  ///< plain dialects only
  std::string path;             ///< plain dialects only
  std::string body;             ///< plain dialects only: the JSON body
};

/// One answer of a mixed fan-out: the synapse (a synapse target) or the HTTP answer.
template <class T>
using mixed_answer = std::variant<T, http_call_response>;

namespace detail {
/// Where one target of a mixed fan-out puts its answer: the synapse `ref` (a synapse target) or
/// `http` (a plain one). Both point into the fan-out's result vector.
struct mixed_slot {
  synapse_ref ref;
  http_call_response* http = nullptr;
};
}  // namespace detail

/// Counters for tests and monitoring (monotonic since construction).
struct dendrite_stats {
  std::uint64_t calls = 0;                 ///< calls completed
  std::uint64_t connections_opened = 0;    ///< TCP connects attempted
  std::uint64_t connections_reused = 0;    ///< calls sent on a pooled connection
  std::uint64_t retries = 0;               ///< reused connections that failed and were retried
  std::uint64_t sessions_offered = 0;      ///< requests that carried a bt-session-offer
  std::uint64_t sessions_established = 0;  ///< offers answered by a valid bt-session-accept
  std::uint64_t sessions_rejected = 0;     ///< invalid accepts (the connection was closed)
  std::uint64_t session_requests = 0;      ///< requests sent with a bt-session MAC
  std::size_t idle_connections = 0;        ///< currently pooled
  std::size_t in_flight = 0;               ///< calls currently running
};

/// The validator's client. Thread safety: every member function may be called from any thread
/// concurrently. Destruction cancels calls still running (they complete with 503
/// "Request cancelled"), closes pooled connections and joins the dendrite's own threads; it must
/// not run on one of those threads.
class dendrite {
 public:
  using options = dendrite_options;
  using executor_type = boost::asio::any_io_executor;

  /// Owns an io_context run by options.threads threads. `hotkey` must hold a secret.
  explicit dendrite(keypair hotkey, options opt = {});
  /// Runs on `ex` (for example the validator's own io_context, run by the caller). Blocking
  /// call()/forward() then need that context to be run by another thread.
  dendrite(executor_type ex, keypair hotkey, options opt = {});
  ~dendrite();
  dendrite(const dendrite&) = delete;
  dendrite& operator=(const dendrite&) = delete;

  executor_type get_executor() const noexcept;
  const keypair& hotkey() const noexcept;
  /// This instance's uuid (uuid1 text), sent as bt_header_dendrite_uuid.
  const std::string& uuid() const noexcept;
  const options& get_options() const noexcept;
  dendrite_stats stats() const;
  /// This dendrite's metrics registry, in the Prometheus text format by render():
  /// bt_dendrite_calls_total{synapse,status} and bt_dendrite_call_duration_seconds{synapse,status}
  /// (status: the dendrite.status_code the call completed with, its own 408/503/... on failures).
  /// A validator may add its own metrics; they live as long as the dendrite.
  bt::metrics::registry& metrics() noexcept;
  /// Closes every pooled idle connection now.
  void close_idle();

  /// Queries one axon. Completion signature `void(T)`: the synapse updated with the answer.
  /// `syn` and `target` are copied/moved into the operation; nothing needs to outlive the call.
  /// `timeout` (seconds) is one total deadline over connect, send and receive.
  /// Cancellation: the handler's cancellation slot (any type) ends the call with 503
  /// "Request cancelled". The handler runs on its associated executor (a coroutine resumes on
  /// its own executor); a handler without one runs on a dendrite I/O thread.
  template <class T, boost::asio::completion_token_for<void(T)> Token>
  requires std::is_base_of_v<synapse, T>
  auto async_call(axon_info target, T syn, double timeout, Token&& token) {
    return boost::asio::async_initiate<Token, void(T)>(
        [this](auto handler, axon_info target, T syn, double timeout) {
          auto result = std::make_unique<T>(std::move(syn));
          const detail::synapse_ref ref = detail::make_synapse_ref(*result);
          async_call_impl(std::move(target), ref, timeout,
                          detail::result_handler<T, std::decay_t<decltype(handler)>>{
                              std::move(handler), std::move(result)});
        },
        token, std::move(target), std::move(syn), timeout);
  }

  /// Queries every axon with its own copy of `syn` (as Python's model_copy()), at most
  /// options.max_concurrency at once. Completion signature `void(std::vector<T>)`: one result
  /// per axon, in the order of `axons`. Cancellation cancels every call still running.
  template <class T, boost::asio::completion_token_for<void(std::vector<T>)> Token>
  requires std::is_base_of_v<synapse, T>
  auto async_forward(std::vector<axon_info> axons, T syn, double timeout, Token&& token) {
    return boost::asio::async_initiate<Token, void(std::vector<T>)>(
        [this](auto handler, std::vector<axon_info> axons, T syn, double timeout) {
          auto results = std::make_unique<std::vector<T>>(axons.size(), syn);
          std::vector<detail::synapse_ref> refs;
          refs.reserve(results->size());
          for (T& r : *results) refs.push_back(detail::make_synapse_ref(r));
          async_forward_impl(
              std::move(axons), std::move(refs), timeout,
              detail::result_handler<std::vector<T>, std::decay_t<decltype(handler)>>{
                  std::move(handler), std::move(results)});
        },
        token, std::move(axons), std::move(syn), timeout);
  }

  /// Blocking async_call. Must not be called from a thread running the dendrite's executor.
  template <class T>
  requires std::is_base_of_v<synapse, T> T call(const axon_info& target, T syn,
                                                double timeout = 12.0) {
    check_blocking_allowed();
    std::promise<T> p;
    auto f = p.get_future();
    async_call(target, std::move(syn), timeout,
               [p = std::move(p)](T r) mutable { p.set_value(std::move(r)); });
    return f.get();
  }

  /// Blocking async_forward. Must not be called from a thread running the dendrite's executor.
  template <class T>
  requires std::is_base_of_v<synapse, T> std::vector<T> forward(const std::vector<axon_info>& axons,
                                                                const T& syn,
                                                                double timeout = 12.0) {
    check_blocking_allowed();
    std::promise<std::vector<T>> p;
    auto f = p.get_future();
    async_forward(axons, syn, timeout,
                  [p = std::move(p)](std::vector<T> r) mutable { p.set_value(std::move(r)); });
    return f.get();
  }

  /// An Epistula v2 request (PROTOCOL 12): `method` `path` with `json_body` as
  /// the exact body bytes (sent and hashed verbatim, Content-Type application/json), signed by
  /// this dendrite's hotkey for `target.hotkey` under a fresh uuid4 and the current time in
  /// milliseconds. The same connection pool, total deadline, limits, cancellation and failure
  /// table as async_call; `method` must be an HTTP token and `path` start with '/' without
  /// spaces or control characters (else invalid_address, nothing sent). Completion signature
  /// `void(http_call_response)`.
  template <boost::asio::completion_token_for<void(http_call_response)> Token>
  auto async_epistula_call(axon_info target, std::string method, std::string path,
                           std::string json_body, double timeout, Token&& token) {
    return async_plain_call(wire_dialect::epistula, std::move(target), std::move(method),
                            std::move(path), std::move(json_body), timeout,
                            std::forward<Token>(token));
  }

  /// Blocking async_epistula_call. Must not be called from a thread running the dendrite's
  /// executor.
  http_call_response epistula_call(const axon_info& target, std::string method, std::string path,
                                   std::string json_body, double timeout = 12.0);

  /// A btauth/1 request (PROTOCOL 14, the signed HTTP requests of Bittensor SDK v11): `method`
  /// `path` (the request target as sent, ?query included) with `json_body` verbatim, signed by
  /// this dendrite's hotkey (sr25519 or ed25519) for `target.hotkey` (X-Bittensor-Receiver)
  /// under a fresh nonce (time in nanoseconds, strictly increasing per dendrite) on every try.
  /// Everything else is async_epistula_call's: pool, deadline, retry, limits, cancellation,
  /// failure table, the response-signature check (over the decimal nonce sent, which the
  /// answer's `nonce` holds). Completion signature `void(http_call_response)`.
  template <boost::asio::completion_token_for<void(http_call_response)> Token>
  auto async_btauth_call(axon_info target, std::string method, std::string path,
                         std::string json_body, double timeout, Token&& token) {
    return async_plain_call(wire_dialect::btauth, std::move(target), std::move(method),
                            std::move(path), std::move(json_body), timeout,
                            std::forward<Token>(token));
  }

  /// Blocking async_btauth_call. Must not be called from a thread running the dendrite's
  /// executor.
  http_call_response btauth_call(const axon_info& target, std::string method, std::string path,
                                 std::string json_body, double timeout = 12.0);

  /// One query to a mixed set of miners, each in the dialect it speaks (mixed_request): synapse
  /// targets get their own copy of `syn`, Epistula and btauth/1 targets their method, path and
  /// body. The fan-out of async_forward (max_concurrency, one deadline for all, cancellation);
  /// completion `void(std::vector<mixed_answer<T>>)`: one answer per request, in its order, the
  /// synapse for a synapse target and the http_call_response otherwise.
  template <class T, boost::asio::completion_token_for<void(std::vector<mixed_answer<T>>)> Token>
  requires std::is_base_of_v<synapse, T>
  auto async_forward_mixed(std::vector<mixed_request> requests, T syn, double timeout,
                           Token&& token) {
    return boost::asio::async_initiate<Token, void(std::vector<mixed_answer<T>>)>(
        [this](auto handler, std::vector<mixed_request> requests, T syn, double timeout) {
          auto results = std::make_unique<std::vector<mixed_answer<T>>>();
          results->reserve(requests.size());  // no reallocation: the slots point into it
          std::vector<detail::mixed_slot> slots(requests.size());
          for (std::size_t i = 0; i < requests.size(); ++i) {
            if (requests[i].dialect == wire_dialect::synapse) {
              slots[i].ref = detail::make_synapse_ref(
                  std::get<0>(results->emplace_back(std::in_place_index<0>, syn)));
            } else {
              slots[i].http = &std::get<1>(results->emplace_back(std::in_place_index<1>));
            }
          }
          async_forward_mixed_impl(
              std::move(requests), std::move(slots), timeout,
              detail::result_handler<std::vector<mixed_answer<T>>, std::decay_t<decltype(handler)>>{
                  std::move(handler), std::move(results)});
        },
        token, std::move(requests), std::move(syn), timeout);
  }

  /// Blocking async_forward_mixed. Must not be called from a thread running the dendrite's
  /// executor.
  template <class T>
  requires std::is_base_of_v<synapse, T> std::vector<mixed_answer<T>> forward_mixed(
      std::vector<mixed_request> requests, const T& syn, double timeout = 12.0) {
    check_blocking_allowed();
    std::promise<std::vector<mixed_answer<T>>> p;
    auto f = p.get_future();
    async_forward_mixed(
        std::move(requests), syn, timeout,
        [p = std::move(p)](std::vector<mixed_answer<T>> r) mutable { p.set_value(std::move(r)); });
    return f.get();
  }

  /// Queries one streaming axon (PROTOCOL 7, Python's call_stream). The request is call()'s. A
  /// 200 answer's body is read as it arrives, under the same total deadline, and handed to T's
  /// parser (process_stream_bytes, then finish_stream at the end of a complete body), which calls
  /// `on_item(std::string_view)` for each item: on a dendrite I/O thread, in order, the view
  /// valid during the call only; keep it short and do not throw (an exception ends the call with
  /// 422). For bt::dynamic_synapse (no parser) the items are the body bytes as received, split
  /// anywhere. Completion `void(T)`: the final synapse, i.e. the fields T's parser set plus the
  /// response headers' axon block (PROTOCOL 6.4) and dendrite.status_code/status_message:
  ///  * 200 when the whole stream arrived and the miner's headers said 200;
  ///  * 408 when the deadline cut the stream (the items before the cut were delivered; the
  ///    partial item T's parser holds is not: finish_stream runs only after a complete body);
  ///  * 422 "response body exceeds N bytes" when the stream passes max_response_body_bytes;
  ///  * 400 when the miner closed inside the stream; the other failures as for call();
  ///  * a non-200 answer (401, 404, 503, ...) is an ordinary JSON error answer, merged as call().
  /// A stream cut for any reason closes its connection (never pooled).
  template <class T, class OnItem, boost::asio::completion_token_for<void(T)> Token>
  requires(streaming_synapse<T> || std::is_base_of_v<dynamic_synapse, T>) &&
      std::invocable<OnItem&, std::string_view> auto async_call_stream(axon_info target, T syn,
                                                                       double timeout,
                                                                       OnItem on_item,
                                                                       Token&& token) {
    return boost::asio::async_initiate<Token, void(T)>(
        [this](auto handler, axon_info target, T syn, double timeout, OnItem on_item) {
          auto result = std::make_unique<T>(std::move(syn));
          const detail::synapse_ref ref = detail::make_synapse_ref(*result);
          async_call_stream_impl(std::move(target), ref, timeout,
                                 detail::make_stream_sink<T>(std::move(on_item)),
                                 detail::result_handler<T, std::decay_t<decltype(handler)>>{
                                     std::move(handler), std::move(result)});
        },
        token, std::move(target), std::move(syn), timeout, std::move(on_item));
  }

  /// Blocking async_call_stream: `on_item` runs on a dendrite I/O thread while this waits.
  /// Must not be called from a thread running the dendrite's executor.
  template <class T, class OnItem>
  requires(streaming_synapse<T> || std::is_base_of_v<dynamic_synapse, T>) &&
      std::invocable<OnItem&, std::string_view> T
      call_stream(const axon_info& target, T syn, double timeout, OnItem on_item) {
    check_blocking_allowed();
    std::promise<T> p;
    auto f = p.get_future();
    async_call_stream(target, std::move(syn), timeout, std::move(on_item),
                      [p = std::move(p)](T r) mutable { p.set_value(std::move(r)); });
    return f.get();
  }

 private:
  void async_call_stream_impl(axon_info target, detail::synapse_ref ref, double timeout,
                              detail::stream_sink sink,
                              boost::asio::any_completion_handler<void()> handler);
  void async_call_impl(axon_info target, detail::synapse_ref ref, double timeout,
                       boost::asio::any_completion_handler<void()> handler);
  /// An Epistula or btauth/1 call (`dialect`), completing `void(http_call_response)`.
  template <class Token>
  auto async_plain_call(wire_dialect dialect, axon_info target, std::string method,
                        std::string path, std::string json_body, double timeout, Token&& token) {
    return boost::asio::async_initiate<Token, void(http_call_response)>(
        [this, dialect](auto handler, axon_info target, std::string method, std::string path,
                        std::string json_body, double timeout) {
          auto result = std::make_unique<http_call_response>();
          http_call_response* out = result.get();
          async_plain_impl(
              dialect, std::move(target), std::move(method), std::move(path), std::move(json_body),
              timeout, out,
              detail::result_handler<http_call_response, std::decay_t<decltype(handler)>>{
                  std::move(handler), std::move(result)});
        },
        token, std::move(target), std::move(method), std::move(path), std::move(json_body),
        timeout);
  }
  /// Blocking async_plain_call.
  http_call_response plain_call(wire_dialect dialect, const axon_info& target, std::string method,
                                std::string path, std::string json_body, double timeout);
  void async_plain_impl(wire_dialect dialect, axon_info target, std::string method,
                        std::string path, std::string body, double timeout, http_call_response* out,
                        boost::asio::any_completion_handler<void()> handler);
  void async_forward_mixed_impl(std::vector<mixed_request> requests,
                                std::vector<detail::mixed_slot> slots, double timeout,
                                boost::asio::any_completion_handler<void()> handler);
  void async_forward_impl(std::vector<axon_info> axons, std::vector<detail::synapse_ref> refs,
                          double timeout, boost::asio::any_completion_handler<void()> handler);
  void check_blocking_allowed() const;

  std::unique_ptr<detail::dendrite_runner> runner_;  // own io_context + threads (may be null)
  std::shared_ptr<detail::dendrite_state> state_;    // shared with running operations
};

}  // namespace bt
