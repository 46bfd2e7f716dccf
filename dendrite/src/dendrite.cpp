// bt::dendrite: the call (one coroutine per call), fan-out, own I/O threads. The keep-alive
// connection pool is connection_pool.cpp; the codec (request encoding, response merge) is
// dendrite_codec.cpp.
//
// One call is one coroutine (dendrite_call::exchange) on the call's own strand: take a pooled
// connection or connect, encode and sign (or, on a connection with a session, MAC: PROTOCOL 13,
// client_session.hpp), write head+body with one gather write, read responses with a fresh
// limited parser until a final (non-1xx) one, then the body: a unary call (and a non-200
// streamed answer) reads it whole and merges it; a streamed 200 hands it to the stream sink as
// it arrives. The head limit also bounds 1xx heads, chunk extensions and trailers, and a
// connection's read buffer has a maximum size, so no peer can grow memory past the limits.
//
// The deadline and cancellation are one thing, the call's stop: a steady_timer armed once with
// the absolute deadline, cancel() and the dendrite's shutdown all set it and close the socket,
// so no byte a miner drips can extend the call; the coroutine only suspends in socket
// operations, and after each one it calls throw_if_stopped() before looking at the result.
// Failures are thrown as call_failure inside the coroutine and recorded once; finish() then
// pools the connection only after a complete, clean exchange.
#include <bt/dendrite.hpp>
#include <bt/detail/dendrite_ops.hpp>  // the per-call codec (internal/)

#include <bt/detail/text.hpp>
#include <bt/detail/timer_tick.hpp>
#include <bt/detail/write_in_place.hpp>
#include <bt/epistula.hpp>
#include <bt/json_body.hpp>
#include <bt/response_signature.hpp>
#include <bt/session_auth.hpp>
#include <bt/sha256.hpp>
#include <bt/ss58.hpp>

#include "connection_pool.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <spdlog/logger.h>

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace bt {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;

namespace detail {

/// A connection's read buffer may hold max_response_header_bytes plus this: Beast's parser needs
/// a whole head, chunk-size line or trailer section in the buffer before parsing it, and reads
/// up to 64 KiB at a time. The cap is what bounds an endless line (the read then fails with
/// http::error::buffer_overflow); body bytes never accumulate in it (they go to the body).
constexpr std::size_t read_buffer_slack = 64u << 10;

/// The least capacity a connection's read buffer has before a response is read. Beast reads
/// max(512, free capacity) bytes at a time, and the parser moves body bytes out of the buffer
/// as they come, so the buffer stayed small and an answer took a system call per few hundred
/// bytes; with this room an answer of a few KiB (a ping's is ~1.4 KiB) comes in one, and a
/// connection whose last answer was larger asks for that much (up to read_buffer_slack).
constexpr std::size_t read_room = 4u << 10;

std::size_t read_buffer_max(const dendrite_options& o) {
  const std::size_t h = o.max_response_header_bytes;
  return h > SIZE_MAX - read_buffer_slack ? SIZE_MAX : h + read_buffer_slack;
}

/// Bytes of the fields as sent, counting "name: value\r\n" (Beast keeps them trimmed, so this
/// can undercount whitespace slightly; the head itself is bounded exactly by the parser).
std::size_t fields_bytes(const http::fields& f) {
  std::size_t n = 0;
  for (const auto& x : f) n += x.name_string().size() + x.value().size() + 4;
  return n;
}

class dendrite_call;

/// What one request does about sessions (dendrite_options::session, PROTOCOL 13).
enum class session_use {
  none,   ///< an ordinary signed request
  offer,  ///< signed, and offers a session (the first request on a connection)
  mac,    ///< authenticated by the connection's session (bt-session), not signed
};

/// What running operations share with the dendrite object; kept alive by them.
struct dendrite_state {
  dendrite_options opt;
  keypair key;
  std::string uuid;
  net::any_io_executor ex;
  bool own_single_thread = false;  ///< one thread runs ex: no strands needed
  std::shared_ptr<spdlog::logger> log;
  connection_pool pool;

  std::atomic<std::int64_t> last_nonce{0};
  std::atomic<std::uint64_t> calls{0}, opened{0}, reused{0}, retries{0};
  std::atomic<std::uint64_t> sessions_offered{0}, sessions_established{0}, sessions_rejected{0},
      session_requests{0};
  // dendrite::metrics(). A call's children are looked up by (synapse, status) when it completes
  // (the family's mutex and a map lookup: small next to a call's own allocations).
  metrics::registry registry;
  metrics::family<metrics::counter>& calls_by =
      registry.counter("bt_dendrite_calls_total", "Calls completed, by synapse and status code.",
                       {"synapse", "status"});
  metrics::family<metrics::histogram>& call_seconds = registry.histogram(
      "bt_dendrite_call_duration_seconds", "Call durations, by synapse and status code.",
      {"synapse", "status"}, metrics::default_buckets());

  std::mutex mu;  // guards everything below
  bool stopped = false;
  std::unordered_map<dendrite_call*, std::weak_ptr<dendrite_call>> active;

  dendrite_state(dendrite_options o, keypair k, net::any_io_executor e)
      : opt(std::move(o)),
        key(std::move(k)),
        uuid(make_uuid1()),
        ex(std::move(e)),
        log(opt.logger),
        pool(connection_pool_limits{.max_idle_per_endpoint = opt.max_idle_per_endpoint,
                                    .max_idle_total = opt.max_idle_total,
                                    .idle_timeout = opt.idle_timeout}) {
    if (opt.insecure_skip_signing && log)
      log->warn(
          "dendrite: REQUEST SIGNING IS OFF (insecure_skip_signing); benchmarks only, loopback "
          "axons only");
  }

  request_identity identity() const {
    return request_identity{.key = opt.insecure_skip_signing ? nullptr : &key,
                            .hotkey = key.ss58_address(),
                            .uuid = uuid,
                            .version = opt.version};
  }

  /// time.time_ns(), strictly increasing per dendrite (two calls in the same nanosecond, or a
  /// clock stepping back, still get distinct increasing nonces: axons require that per uuid).
  std::int64_t next_nonce() {
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    std::int64_t last = last_nonce.load(std::memory_order_relaxed);
    for (;;) {
      const std::int64_t n = now > last ? now : last + 1;
      if (last_nonce.compare_exchange_weak(last, n, std::memory_order_relaxed)) return n;
    }
  }

  net::any_io_executor make_op_executor() const {
    if (own_single_thread) return ex;
    return net::make_strand(ex);
  }

  /// False once the dendrite is stopping (the call must not start).
  bool register_op(dendrite_call* op, const std::shared_ptr<dendrite_call>& sp) {
    std::lock_guard lk(mu);
    if (stopped) return false;
    active.emplace(op, sp);
    return true;
  }
  void unregister_op(dendrite_call* op) {
    std::lock_guard lk(mu);
    active.erase(op);
  }

  void shutdown();
};

/// Why a call ended without a merged answer: thrown inside the call's coroutine, recorded once.
struct call_failure {
  dendrite_errc code;
  std::string detail;
};

/// An Epistula call's request and where its answer goes (dendrite::epistula_call).
struct epistula_exchange {
  std::string method, path, body;
  std::string name;  ///< the path without its leading '/': messages and metric labels
  epistula_response* out = nullptr;
};

/// One call: its own strand, deadline timer, connection and parser, and the coroutine that runs
/// the exchange on them.
class dendrite_call : public std::enable_shared_from_this<dendrite_call> {
 public:
  /// `target` must outlive the op (owned by the op for single calls, by the fan-out otherwise).
  /// `sink` non-null makes this a streaming call (call_stream, PROTOCOL 7): a 200 body goes to
  /// it as it arrives (detail/dendrite_stream.hpp); it must outlive the op too.
  dendrite_call(std::shared_ptr<dendrite_state> st, const axon_info& target, synapse_ref ref,
                double timeout, steady::time_point deadline, stream_sink* sink = nullptr)
      : dendrite_call(std::move(st), target, ref, nullptr, timeout, deadline, sink) {}
  /// An Epistula call (`epi` outlives the op, as `target`).
  dendrite_call(std::shared_ptr<dendrite_state> st, const axon_info& target, epistula_exchange& epi,
                double timeout, steady::time_point deadline)
      : dendrite_call(std::move(st), target, synapse_ref{}, &epi, timeout, deadline, nullptr) {}

 private:
  dendrite_call(std::shared_ptr<dendrite_state> st, const axon_info& target, synapse_ref ref,
                epistula_exchange* epi, double timeout, steady::time_point deadline,
                stream_sink* sink)
      : st_(std::move(st)),
        exec_(st_->make_op_executor()),
        timer_(st_->ex),
        target_(target),
        ref_(ref),
        epi_(epi),
        timeout_(timeout),
        deadline_(deadline),
        stream_(sink),
        chunk_cb_([this](std::uint64_t, beast::string_view ext, beast::error_code& ec) {
          on_chunk_header(ext, ec);
        }) {}

 public:
  std::function<void()> on_done;  // set before start(); runs on the op's executor

  /// Begins the call; on_done runs when it has completed, never inside start().
  /// `cancel_reason` non-empty: the call is cancelled before it begins (a fan-out cancelled
  /// while this call was queued).
  void start(std::string cancel_reason = {}) {
    auto self = shared_from_this();
    std::optional<call_failure> stopped;
    if (!st_->register_op(this, self))
      stopped = call_failure{dendrite_errc::cancelled, "dendrite stopped"};
    else if (!cancel_reason.empty())
      stopped = call_failure{dendrite_errc::cancelled, std::move(cancel_reason)};
    // co_spawn never runs its completion handler inside co_spawn itself.
    net::co_spawn(exec_, exchange(std::move(stopped)),
                  [self](std::exception_ptr e, bool keep) { self->finish(e, keep); });
  }

  /// Thread-safe: ends the call as cancelled (no effect once it has ended).
  void cancel(std::string reason) {
    net::post(exec_, [self = shared_from_this(), reason = std::move(reason)]() mutable {
      self->stop(dendrite_errc::cancelled, std::move(reason));
    });
  }

 private:
  static constexpr auto use_ec = net::as_tuple(net::use_awaitable);

  /// The synapse's name, or an Epistula call's path without its '/' (messages, metric labels).
  const std::string& name() const { return epi_ ? epi_->name : ref_.descriptor->name(); }

  /// Records a failure in the caller's result (the failure table of docs/dendrite.md).
  void record_failure(dendrite_errc code, std::string_view detail) {
    if (!epi_) {
      set_dendrite_failure(*ref_.object, name(), code, detail);
      return;
    }
    epistula_response& o = *epi_->out;
    o.error = code;
    o.status = dendrite_status(code);
    o.status_message =
        dendrite_status_message(code, target_.ip, target_.port, name(), timeout_, detail);
    o.headers.clear();
    o.body.clear();
    o.process_time.reset();
    o.response_verified = false;
  }

  /// The status the call completed with (for the metrics and the log line).
  int final_status() const {
    return epi_ ? epi_->out->status
                : static_cast<int>(ref_.object->dendrite.status_code.value_or(0));
  }

  /// Checks the answer's bt-response-signature per options.verify_responses (PROTOCOL 5.15)
  /// against the hotkey this call addressed and the request it sent.
  /// Returns whether a signature verified over this request; throws response_unauthenticated
  /// when one is present and wrong, or absent under `required` (the answer is then never
  /// merged). An error answer signed over the empty identity (the axon's refusal of a request it
  /// could not verify) is accepted, and returns false.
  /// An answer to a session request (PROTOCOL 13) is checked by its bt-response-mac under the
  /// session's key instead, when it carries one; a signature stands in for it otherwise.
  /// `streamed`: a streamed answer's body hash (its chunks, hashed as they were delivered); the
  /// signature is then a trailer field, and a session's MAC never stands in for it.
  bool check_response_signature(const http::response<http::string_body>& res,
                                const sha256_digest* streamed = nullptr) const {
    const response_verification mode = st_->opt.verify_responses;
    if (mode == response_verification::off) return false;
    if (!streamed && session_use_ == session_use::mac && check_response_mac(res)) return true;
    const auto [first, last] = res.equal_range(response_signature::header);
    if (first == last) {
      if (mode == response_verification::required)
        throw call_failure{dendrite_errc::response_unauthenticated,
                           streamed ? "no bt-response-signature trailer after the stream"
                           : session_use_ == session_use::mac
                               ? "no bt-response-mac or bt-response-signature header"
                               : "no bt-response-signature header"};
      return false;
    }
    if (std::next(first) != last)
      throw call_failure{dendrite_errc::response_unauthenticated,
                         "more than one bt-response-signature header"};
    std::string why =
        streamed
            ? response_signature::verify(first->value(), target_.hotkey, st_->key.ss58_address(),
                                         request_id_, static_cast<int>(res.result_int()), *streamed)
            : response_signature::verify(first->value(), target_.hotkey, st_->key.ss58_address(),
                                         request_id_, static_cast<int>(res.result_int()),
                                         res.body());
    if (!why.empty()) {
      // An axon names no caller and no request in its answer to a request it could not verify
      // (PROTOCOL 5.15). Such an answer, signed over the empty identity, is accepted when its
      // status is an error (400 or above): it is that axon's authentic refusal, and accepting it
      // can only turn the call into an error, which a relay can do anyway by dropping the
      // connection. It is not bound to this request (a relay could replay any such refusal of
      // this axon), so it is not reported verified. A success must name this caller and request.
      const int status = static_cast<int>(res.result_int());
      if (!streamed && status >= 400 &&
          response_signature::verify(first->value(), target_.hotkey, {}, {}, status, res.body())
              .empty())
        return false;
      throw call_failure{dendrite_errc::response_unauthenticated, std::move(why)};
    }
    return true;
  }

  /// A session answer's bt-response-mac: false when absent; throws when present and wrong.
  bool check_response_mac(const http::response<http::string_body>& res) const {
    const auto [first, last] = res.equal_range(session_auth::response_mac_header);
    if (first == last) return false;
    if (std::next(first) != last)
      throw call_failure{dendrite_errc::response_unauthenticated,
                         "more than one bt-response-mac header"};
    std::string why = session_auth::check_response_mac(
        *conn_->session.keys, first->value(), st_->key.ss58_address(), request_id_,
        static_cast<int>(res.result_int()), res.body(), target_.hotkey);
    if (!why.empty())
      throw call_failure{dendrite_errc::response_unauthenticated, "bt-response-mac: " + why};
    return true;
  }

  /// What the request on the current connection does about sessions (PROTOCOL 13).
  session_use choose_session_use() const {
    if (epi_ || !st_->opt.session || st_->opt.insecure_skip_signing) return session_use::none;
    const client_session& cs = conn_->session;
    if (cs.st == client_session::state::none) return session_use::offer;
    if (cs.usable_for(target_.hotkey, steady::now())) return session_use::mac;
    return session_use::none;  // declined, or a session with another axon hotkey
  }

  /// Adds the session header (an offer, or the request's MAC over the canonical message that
  /// encode_request left in the connection's scratch buffer) to the encoded head.
  void add_session_header(pooled_connection& c, const synapse& s) {
    client_session& cs = c.session;
    std::string_view name;
    std::string value;
    if (session_use_ == session_use::offer) {
      const std::string nonce = std::to_string(*s.dendrite.nonce);
      cs.offer.emplace(st_->key,
                       session_auth::request_identity{.nonce = nonce,
                                                      .dendrite_hotkey = st_->key.ss58_address(),
                                                      .axon_hotkey = target_.hotkey,
                                                      .uuid = st_->uuid});
      cs.st = client_session::state::offered;
      cs.axon_hotkey = target_.hotkey;
      name = session_auth::offer_header;
      value = cs.offer->header_value();
      st_->sessions_offered.fetch_add(1, std::memory_order_relaxed);
    } else {
      ++cs.used;
      name = session_auth::request_header;
      value = session_auth::request_mac(*cs.keys, c.scratch);
      st_->session_requests.fetch_add(1, std::memory_order_relaxed);
    }
    c.head.resize(c.head.size() - 2);  // before the empty line that ends the head
    c.head.append(name).append(": ").append(value).append("\r\n\r\n");
  }

  /// The final head of the answer has arrived. To an offer: a valid bt-session-accept
  /// establishes the session; none (a Python axon, sessions off) declines it for good; an
  /// invalid one closes the connection after this call, whose answer is judged as without
  /// sessions (by its response signature). To a MAC'd request: a 401 means the axon refused the
  /// session (expired by its clock, say), so the connection is closed and the next call starts
  /// afresh on another.
  void settle_session(const http::response<http::string_body>& res) {
    if (session_use_ == session_use::mac && res.result_int() == 401) close_after_ = true;
    if (session_use_ != session_use::offer) return;
    client_session& cs = conn_->session;
    cs.st = client_session::state::declined;
    const auto [first, last] = res.equal_range(session_auth::accept_header);
    if (first == last) {
      cs.offer.reset();
      return;
    }
    std::string why = "more than one bt-session-accept header";
    std::optional<session_auth::session_keys> keys;
    if (std::next(first) == last) keys = std::move(*cs.offer).complete(first->value(), &why);
    cs.offer.reset();
    if (!keys) {
      close_after_ = true;
      st_->sessions_rejected.fetch_add(1, std::memory_order_relaxed);
      if (st_->log) st_->log->warn("dendrite | {} | invalid session accept: {}", host_, why);
      return;
    }
    const session_auth::bounds b = keys->limits();
    cs.keys = std::move(keys);
    cs.st = client_session::state::established;
    cs.used = 1;  // the offer's request counts
    cs.max_requests = b.max_requests;
    // (a lifetime beyond ten years is as good as forever, and keeps the sum inside the clock)
    cs.expires = steady::now() + std::chrono::seconds(std::min<std::uint64_t>(
                                     b.lifetime_s, std::uint64_t{10} * 365 * 86400));
    st_->sessions_established.fetch_add(1, std::memory_order_relaxed);
  }

  /// A pooled connection to ep_, skipping (closing) ones whose session can carry no more.
  std::unique_ptr<pooled_connection> take_pooled() {
    for (;;) {
      auto c = st_->pool.take(ep_);
      if (!c || !c->session.spent(steady::now())) return c;
    }
  }

  /// The deadline timer, cancel() and shutdown end the call here (on the op's executor): the
  /// first reason wins, and closing the socket makes the pending socket operation complete.
  void stop(dendrite_errc e, std::string detail) {
    if (stop_) return;
    stop_ = call_failure{e, std::move(detail)};
    if (conn_) {
      beast::error_code ignored;
      conn_->socket.close(ignored);
    }
  }

  /// The one place the deadline and cancellation are checked: at the start and after every
  /// socket operation, before its result is looked at (a stop outranks the error the closed
  /// socket produced, and an answer that lost the race with the deadline).
  void throw_if_stopped() {
    if (!stop_ && steady::now() >= deadline_) stop_ = call_failure{dendrite_errc::timeout, {}};
    if (stop_) throw *stop_;
  }

  /// The whole call (`stopped_before_start`: see start()). Returns whether the connection may be
  /// pooled; throws call_failure.
  net::awaitable<bool> exchange(std::optional<call_failure> stopped_before_start) {
    const steady::time_point begin = steady::now();
    if (stopped_before_start && !stop_) stop_ = std::move(stopped_before_start);
    synapse* s = ref_.object;  // null for an Epistula call
    const std::string_view ext = st_->opt.external_ip;
    if (s) preset_request(*s, target_, timeout_, st_->identity(), ext);
    // A fan-out call still queued at its deadline ends here, without a connection.
    throw_if_stopped();
    if (epi_) {
      if (std::string why = epistula_target_problem(epi_->method, epi_->path); !why.empty())
        throw call_failure{dendrite_errc::invalid_address, std::move(why)};
    }

    beast::error_code ec;
    auto addr = net::ip::make_address(target_.ip, ec);
    if (ec)
      throw call_failure{dendrite_errc::invalid_address,
                         "invalid axon address '" + target_.ip + "' (an IP literal is required)"};
    // The target's hotkey is part of the signed message: one that is not an SS58 address can
    // only earn the axon's 401 after a round trip, so it is refused here, before a connection,
    // like an address that is not an IP literal.
    if (std::error_code hk; !ss58::decode(target_.hotkey, hk))
      throw call_failure{dendrite_errc::invalid_address,
                         "invalid axon hotkey '" + target_.hotkey +
                             "' (an SS58 address is required: " + hk.message() + ")"};
    // Our own public address: talk to our own miner over loopback (PROTOCOL 4.1, D19).
    if (!ext.empty() && target_.ip == ext) addr = net::ip::make_address_v4("127.0.0.1");
    if (st_->opt.insecure_skip_signing && !addr.is_loopback())
      throw call_failure{
          dendrite_errc::invalid_address,
          "insecure_skip_signing refuses the non-loopback axon '" + target_.ip + "'"};
    ep_ = tcp::endpoint(addr, target_.port);
    host_ = host_header(target_.ip, target_.port);

    timer_.expires_at(deadline_);
    timer_.async_wait(net::bind_executor(exec_, [self = shared_from_this()](beast::error_code e) {
      if (e != net::error::operation_aborted) self->stop(dendrite_errc::timeout, {});
    }));

    // A pooled connection that fails before any response byte was probably closed by the server
    // while idle (keep-alive race): it is retried once, on a fresh connection with a fresh nonce.
    conn_ = take_pooled();
    bool may_retry = conn_ != nullptr;
    if (conn_)
      st_->reused.fetch_add(1, std::memory_order_relaxed);
    else
      co_await connect();
    for (;;) {
      ec = co_await send();
      if (!ec) ec = co_await read_final_head();
      if (!ec) break;
      if (!std::exchange(may_retry, false) || got_some_response()) throw io_failure(ec);
      st_->retries.fetch_add(1, std::memory_order_relaxed);
      co_await connect();
    }

    auto& res = parser_->get();
    settle_session(res);
    if (stream_ && res.result_int() == 200) {
      // PROTOCOL 7: the body is an opaque byte stream for the type's parser, whatever its
      // content type says (D17). The parser's body limit counts the whole stream.
      while (!parser_->is_done()) {
        auto [e, n] =
            co_await http::async_read_some(conn_->socket, conn_->buffer, *parser_, use_ec);
        // Bytes that arrived before a deadline, a cancellation or a close are still delivered.
        deliver_stream_bytes();
        throw_if_stopped();
        if (e) throw io_failure(e);
      }
      guard_stream_parser([&] { stream_->end(*s); });
      trailers_fit();
      // PROTOCOL 5.15: the trailer's signature over every chunk, checked once the stream ended
      // (the items were delivered as they came; a failed check turns the call into a 421).
      const sha256_digest streamed = stream_hash_.finish();
      check_response_signature(res, &streamed);
      std::string detail;
      if (auto e = apply_stream_headers(*s, res, detail); e)
        throw call_failure{static_cast<dendrite_errc>(e.value()), std::move(detail)};
    } else {
      if (stream_) {
        // A streamed call's non-200 head (401, 404, 503, ... from stages 1-5): an ordinary JSON
        // answer, read whole and merged as call()'s (PROTOCOL 6.3).
        auto [e, n] = co_await http::async_read(conn_->socket, conn_->buffer, *parser_, use_ec);
        throw_if_stopped();
        if (e) throw io_failure(e);
      }
      trailers_fit();
      const bool verified = check_response_signature(res);
      if (epi_) {
        epistula_response& o = *epi_->out;
        o.status = static_cast<int>(res.result_int());
        o.status_message = detail::valid_utf8(res.reason());
        o.error.reset();
        o.headers.clear();
        for (const auto& f : res)
          o.headers.emplace_back(f.name_string(), detail::valid_utf8(f.value()));
        o.body = std::move(res.body());
        o.response_verified = verified;
      } else {
        std::string detail;
        if (auto e = apply_response(ref_, res.result_int(), res, res.body(), detail); e)
          throw call_failure{static_cast<dendrite_errc>(e.value()), std::move(detail)};
      }
    }
    const double took = std::chrono::duration<double>(steady::now() - begin).count();
    if (epi_)
      epi_->out->process_time = took;
    else
      s->dendrite.process_time = took;
    co_return res.keep_alive() && conn_->buffer.size() == 0 && !close_after_ &&
        !conn_->session.spent(steady::now());
  }

  /// A new connection to ep_ (replacing, and so closing, the current one).
  net::awaitable<void> connect() {
    parser_.reset();
    conn_ = std::make_unique<pooled_connection>(st_->ex, read_buffer_max(st_->opt));
    st_->opened.fetch_add(1, std::memory_order_relaxed);
    auto [ec] = co_await conn_->socket.async_connect(ep_, use_ec);
    throw_if_stopped();
    if (ec) {
      if (st_->log) st_->log->debug("dendrite | connect {} failed: {}", host_, ec.message());
      throw call_failure{dendrite_errc::connect_failed, ec.message()};
    }
    beast::error_code ignored;
    conn_->socket.set_option(tcp::no_delay(true), ignored);
    conn_->socket.non_blocking(true, ignored);  // for write_whole's write in place
    if (st_->opt.external_ip.empty()) {
      auto local = conn_->socket.local_endpoint(ignored);
      if (!ignored) conn_->local_ip = local.address().to_string();
    }
  }

  /// Encodes, signs (a fresh nonce each time) and writes the request. Returns the write's error.
  net::awaitable<beast::error_code> send() {
    pooled_connection& c = *conn_;
    std::string_view body;
    if (epi_) {
      // Epistula: a fresh uuid4 and timestamp per attempt, signed for the addressed hotkey.
      const auto h =
          epistula::sign_request(st_->key, epi_->body, target_.hotkey, epistula::now_ms());
      encode_epistula_head(epi_->method, epi_->path, host_, h, epi_->body.size(), c.head);
      request_id_ = h.uuid;
      epi_->out->uuid = h.uuid;
      body = epi_->body;
    } else {
      synapse& s = *ref_.object;
      const std::string_view ip =
          st_->opt.external_ip.empty() ? std::string_view(c.local_ip) : std::string_view();
      session_use_ = choose_session_use();
      request_identity id = st_->identity();
      if (session_use_ == session_use::mac) id.key = nullptr;  // the MAC replaces the signature
      encode_request(*ref_.descriptor, s, ip, st_->next_nonce(), id, host_, c.scratch, c.head,
                     c.body);
      if (session_use_ != session_use::none) add_session_header(c, s);
      // The request id a response signature names: "{dendrite.nonce}.{dendrite.uuid}".
      request_id_.clear();
      request_id_.reserve(detail::number_buffer_size + 1 + st_->uuid.size());
      detail::append_int(*s.dendrite.nonce, request_id_);
      request_id_.push_back('.');
      request_id_.append(st_->uuid);
      body = c.body;
    }
    if (st_->log && st_->log->should_log(spdlog::level::debug)) {
      st_->log->debug("dendrite | --> | {} B | {} | {} | {} | 0 | Success",
                      c.head.size() + body.size(), name(), target_.hotkey, host_);
    }
    const beast::error_code ec =
        co_await write_whole(c.socket, {net::buffer(c.head), net::buffer(body)});
    throw_if_stopped();
    co_return ec;
  }

  /// Writes `bufs` whole: in place first when the socket is non-blocking
  /// (bt/detail/write_in_place.hpp), whatever is left by an asynchronous write.
  static net::awaitable<beast::error_code> write_whole(tcp::socket& socket,
                                                       std::array<net::const_buffer, 2> bufs) {
    beast::error_code ec;
    const auto rest = write_in_place(socket, bufs, ec);
    if (ec || net::buffer_size(rest) == 0) co_return ec;
    auto [wec, wn] = co_await net::async_write(socket, rest, use_ec);
    (void)wn;
    co_return wec;
  }

  /// Reads responses on the connection until a final (non-1xx) one, each with a fresh parser:
  /// of the final one, the head alone for a streaming call, the whole message otherwise. 1xx
  /// interim responses (heads only) are skipped (RFC 9112 section 6.1), a bounded number of
  /// times. Returns the read's error; throws when the interim responses pass the limits.
  net::awaitable<beast::error_code> read_final_head() {
    for (;;) {
      new_parser();
      conn_->buffer.reserve(std::clamp(conn_->last_answer_bytes, read_room, read_buffer_slack));
      auto [ec, n] =
          stream_ ? co_await http::async_read_header(conn_->socket, conn_->buffer, *parser_, use_ec)
                  : co_await http::async_read(conn_->socket, conn_->buffer, *parser_, use_ec);
      if (!ec) conn_->last_answer_bytes = n;
      throw_if_stopped();
      if (ec || parser_->get().result_int() / 100 != 1) co_return ec;
      skip_interim(n);
    }
  }

  /// A 1xx interim response of `head_bytes` was read: count it (and its head, against the head
  /// budget), or end the call when over a limit.
  void skip_interim(std::size_t head_bytes) {
    const dendrite_options& o = st_->opt;
    if (parser_->get().result_int() == 101)
      throw call_failure{dendrite_errc::malformed_response,
                         "unexpected 101 Switching Protocols (no upgrade was requested)"};
    interim_bytes_ += head_bytes;
    if (++interim_ > o.max_interim_responses)
      throw call_failure{
          dendrite_errc::malformed_response,
          "more than " + std::to_string(o.max_interim_responses) + " interim (1xx) responses"};
    if (interim_bytes_ >= o.max_response_header_bytes) throw head_limit_failure();
  }

  /// Any byte of a response on this connection (then a failure is not the keep-alive race).
  bool got_some_response() const {
    return interim_ > 0 || conn_->buffer.size() > 0 || (parser_ && parser_->got_some());
  }

  /// A fresh response parser with the limits. The head budget max_response_header_bytes is
  /// shared by the heads of skipped interim responses, this head, its chunk extensions and its
  /// trailers (on_chunk_header, trailers_fit).
  void new_parser() {
    const std::size_t limit = st_->opt.max_response_header_bytes;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(limit - std::min(limit, interim_bytes_), UINT32_MAX)));
    parser_->body_limit(st_->opt.max_response_body_bytes);
    parser_->on_chunk_header(chunk_cb_);
    head_fields_bytes_ = 0;
    meta_bytes_ = 0;
  }

  /// Parser callback, once per chunk (the last one too), before its data. Counts the head
  /// (approximately, as fields_bytes) once, then every extension, against the head budget; over
  /// it, the parse stops with header_limit and meta_over_ picks the message.
  void on_chunk_header(beast::string_view ext, beast::error_code& ec) {
    if (meta_bytes_ == 0) {  // the first chunk: count the head (never 0 bytes) once
      const auto& res = parser_->get();
      head_fields_bytes_ = fields_bytes(res);
      // "HTTP/1.1 200 " + reason + CRLF, the fields, the empty line; plus skipped 1xx heads.
      meta_bytes_ = interim_bytes_ + 15 + res.reason().size() + head_fields_bytes_ + 2;
    }
    meta_bytes_ += ext.size();
    if (meta_bytes_ > st_->opt.max_response_header_bytes) {
      meta_over_ = true;
      ec = http::error::header_limit;
    }
  }

  /// After a complete body: the trailer fields of a chunked body (appended to the head's fields
  /// by the parser) count against the head budget too. Their bytes were already bounded by the
  /// read buffer's cap; this makes the limit exact. Throws when over.
  void trailers_fit() {
    if (meta_bytes_ == 0) return;  // not chunked: no trailers
    const std::size_t all = fields_bytes(parser_->get());
    const std::size_t trailers = all > head_fields_bytes_ ? all - head_fields_bytes_ : 0;
    if (meta_bytes_ + trailers > st_->opt.max_response_header_bytes) throw meta_limit_failure();
  }

  call_failure head_limit_failure() const {
    return {
        dendrite_errc::response_too_large,
        "response head exceeds " + std::to_string(st_->opt.max_response_header_bytes) + " bytes"};
  }
  call_failure meta_limit_failure() const {
    return {dendrite_errc::response_too_large,
            "response head, chunk extensions and trailers exceed " +
                std::to_string(st_->opt.max_response_header_bytes) + " bytes"};
  }

  /// A failed socket operation (write or read of the response): the failure table of
  /// docs/dendrite.md.
  call_failure io_failure(beast::error_code ec) const {
    if (ec == http::error::body_limit)
      return {
          dendrite_errc::response_too_large,
          "response body exceeds " + std::to_string(st_->opt.max_response_body_bytes) + " bytes"};
    // An extension or the trailers over the head budget, or a single line (chunk size,
    // trailer) longer than the read buffer's cap: the peer's metadata is too large.
    if ((ec == http::error::header_limit && meta_over_) || ec == http::error::buffer_overflow)
      return meta_limit_failure();
    if (ec == http::error::header_limit) return head_limit_failure();
    const bool eof = ec == http::error::end_of_stream || ec == http::error::partial_message ||
                     ec == net::error::eof;
    const bool closed = eof || ec == net::error::connection_reset ||
                        ec == net::error::connection_aborted || ec == net::error::broken_pipe;
    if (closed && parser_ && parser_->is_header_done())
      return {dendrite_errc::payload_incomplete, {}};
    if (closed) return {dendrite_errc::disconnected, eof ? std::string() : ec.message()};
    if (&ec.category() == &http::make_error_code(http::error::bad_field).category())
      return {dendrite_errc::malformed_response, "invalid HTTP response: " + ec.message()};
    return {dendrite_errc::disconnected, ec.message()};
  }

  /// Hands the body bytes parsed so far to the stream sink (the type's parser, then the caller's
  /// on_item) and clears them, so memory holds one read, not the stream.
  void deliver_stream_bytes() {
    std::string& body = parser_->get().body();
    if (body.empty()) return;
    stream_hash_.update(body);
    guard_stream_parser([&] { stream_->push(*ref_.object, body); });
    body.clear();
  }

  /// Runs the type's parser (and the caller's on_item); an exception from either ends the call.
  template <class F>
  static void guard_stream_parser(F&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      throw call_failure{dendrite_errc::malformed_response,
                         std::string("stream parser failed: ") + e.what()};
    } catch (...) {
      throw call_failure{dendrite_errc::malformed_response, "stream parser failed"};
    }
  }

  /// The coroutine has ended: record the outcome, pool the connection only after a complete,
  /// clean exchange (never after a failure, a stop or a partially read body), report.
  void finish(std::exception_ptr ep, bool keep) {
    if (ep) {
      keep = false;
      try {
        std::rethrow_exception(ep);
      } catch (const call_failure& f) {
        record_failure(f.code, f.detail);
      } catch (const std::exception& e) {
        // Not a failure of the exchange (e.g. a field the codec cannot encode); the call still
        // completes, as every call must.
        record_failure(dendrite_errc::malformed_response,
                       std::string("unexpected error: ") + e.what());
      } catch (...) {
        record_failure(dendrite_errc::malformed_response, "unexpected error");
      }
    }
    timer_.cancel();
    parser_.reset();
    if (conn_) {
      if (keep)
        st_->pool.put(ep_, std::move(conn_));
      else
        conn_.reset();
    }
    st_->unregister_op(this);
    st_->calls.fetch_add(1, std::memory_order_relaxed);
    try {
      const std::string status = std::to_string(final_status());
      st_->calls_by.with({name(), status}).inc();
      st_->call_seconds.with({name(), status})
          .observe(std::chrono::duration<double>(steady::now() - begun_).count());
    } catch (...) {  // out of memory: the call still completes, uncounted
    }
    if (st_->log && st_->log->should_log(spdlog::level::debug)) {
      std::string_view message;
      if (epi_)
        message = epi_->out->status_message;
      else if (const auto& m = ref_.object->dendrite.status_message)
        message = *m;
      st_->log->debug("dendrite | <-- | {} | {} | {} | {} | {}", name(), target_.hotkey, host_,
                      final_status(), message);
    }
    auto done = std::move(on_done);
    on_done = nullptr;
    if (done) done();
  }

  std::shared_ptr<dendrite_state> st_;
  net::any_io_executor exec_;
  net::steady_timer timer_;
  const axon_info& target_;
  synapse_ref ref_;         ///< a synapse call's synapse (null object for an Epistula call)
  epistula_exchange* epi_;  ///< an Epistula call's request and result (null for a synapse call)
  double timeout_;
  steady::time_point deadline_;
  stream_sink* stream_;                             ///< set: a streaming call
  sha256_hasher stream_hash_;                       ///< a streaming call's body so far
  const steady::time_point begun_ = steady::now();  ///< for the call duration metric

  /// Set once: the deadline passed, or the call was cancelled (see stop()).
  std::optional<call_failure> stop_;
  tcp::endpoint ep_;
  std::string host_;
  /// The request id of the request last sent (what a response signature names).
  std::string request_id_;
  std::unique_ptr<pooled_connection> conn_;
  std::optional<http::response_parser<http::string_body>> parser_;
  /// The parser's chunk-header callback (Beast keeps a reference: it lives as long as the op).
  std::function<void(std::uint64_t, beast::string_view, beast::error_code&)> chunk_cb_;
  std::size_t interim_ = 0;            ///< 1xx interim responses skipped
  std::size_t interim_bytes_ = 0;      ///< their heads' bytes (count against the head limit)
  std::size_t head_fields_bytes_ = 0;  ///< fields_bytes of the final head, before trailers
  std::size_t meta_bytes_ = 0;  ///< chunked bodies: head + chunk extensions so far (0: none yet)
  bool meta_over_ = false;      ///< header_limit came from extensions or trailers
  /// What the request last sent did about sessions (set by send()).
  session_use session_use_ = session_use::none;
  bool close_after_ = false;  ///< never pool this connection (an invalid session accept)
};

void dendrite_state::shutdown() {
  std::vector<std::shared_ptr<dendrite_call>> ops;
  {
    std::lock_guard lk(mu);
    stopped = true;
    for (auto& [p, w] : active)
      if (auto sp = w.lock()) ops.push_back(std::move(sp));
  }
  for (auto& op : ops) op->cancel("dendrite stopped");
  pool.close();
}

/// Completes a type-erased handler on its own executor, keeping that executor's work count up
/// while the operation runs (so a caller's io_context.run() does not return early), and
/// clearing the handler's cancellation slot before it runs (Asio's rule). The slot is cleared on
/// the handler's executor too: a caller that emits the signal there (a strand it bound the
/// handler to) never races the clear, whichever dendrite thread finished the call.
struct dendrite_completion {
  net::any_completion_handler<void()> handler;
  net::any_completion_executor work;
  net::cancellation_slot slot;

  dendrite_completion(net::any_completion_handler<void()> h, const net::any_io_executor& fallback)
      : handler(std::move(h)),
        work(net::prefer(net::get_associated_executor(handler, fallback),
                         net::execution::outstanding_work.tracked)),
        slot(net::get_associated_cancellation_slot(handler)) {}

  void complete() {
    auto ex = std::move(work);
    net::dispatch(ex, [h = std::move(handler), s = slot]() mutable {
      if (s.is_connected()) s.clear();
      std::move(h)();
    });
  }
};

/// A single call: the op plus the caller's handler and the target it copied.
struct dendrite_single_call {
  axon_info target;
  std::optional<dendrite_completion> done;
  stream_sink stream;     ///< call_stream's parser (unused by call)
  epistula_exchange epi;  ///< epistula_call's request (unused otherwise)
};

/// A fan-out: launches calls up to max_concurrency and completes when all have.
struct dendrite_fanout : std::enable_shared_from_this<dendrite_fanout> {
  std::shared_ptr<dendrite_state> st;
  std::vector<axon_info> axons;
  std::vector<synapse_ref> refs;
  double timeout = 12.0;
  steady::time_point deadline;
  std::optional<dendrite_completion> done;

  std::mutex mu;
  std::size_t next = 0, finished = 0, running = 0;
  bool cancelled = false;
  std::vector<std::shared_ptr<dendrite_call>> live;  // by index, while running

  void launch_more() {
    std::vector<std::shared_ptr<dendrite_call>> start;
    bool was_cancelled = false;
    {
      std::lock_guard lk(mu);
      while (next < axons.size() && running < std::max<std::size_t>(1, st->opt.max_concurrency)) {
        const std::size_t i = next++;
        ++running;
        auto op = std::make_shared<dendrite_call>(st, axons[i], refs[i], timeout, deadline);
        op->on_done = [self = shared_from_this(), i] { self->on_call_done(i); };
        live[i] = op;
        start.push_back(std::move(op));
      }
      was_cancelled = cancelled;
    }
    // A call launched after cancel_all() starts cancelled; one cancelled by a cancel_all()
    // racing with this loop is stopped by its posted cancel().
    for (auto& op : start) op->start(was_cancelled ? "cancelled by the caller" : std::string());
  }

  void on_call_done(std::size_t i) {
    bool all = false;
    {
      std::lock_guard lk(mu);
      live[i].reset();
      --running;
      all = ++finished == axons.size();
    }
    if (all) {
      std::optional<dendrite_completion> c;
      {
        std::lock_guard lk(mu);
        c.swap(done);
      }
      if (c) c->complete();
    } else {
      launch_more();
    }
  }

  void cancel_all() {
    std::vector<std::shared_ptr<dendrite_call>> ops;
    {
      std::lock_guard lk(mu);
      cancelled = true;
      for (auto& op : live)
        if (op) ops.push_back(op);
    }
    for (auto& op : ops) op->cancel("cancelled by the caller");
  }
};

/// The io_context and threads of a dendrite that owns them, and its timer_tick (so a call's
/// deadline timer costs no timerfd system call; only here: on a caller's executor a pending tick
/// would keep the caller's io_context.run() from returning).
struct dendrite_runner {
  net::io_context ioc;
  net::executor_work_guard<net::io_context::executor_type> guard;
  timer_tick tick{ioc};
  std::vector<std::thread> threads;

  explicit dendrite_runner(unsigned n)
      : ioc(static_cast<int>(n == 0 ? 1 : n)), guard(ioc.get_executor()) {
    tick.start();
    for (unsigned i = 0; i < (n == 0 ? 1 : n); ++i)
      threads.emplace_back([this] {
        pthread_setname_np(pthread_self(), "bt-dendrite");  // visible in top, perf, gdb
        ioc.run();
      });
  }
  void join() {
    tick.stop();
    guard.reset();
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
  ~dendrite_runner() { join(); }
};

steady::time_point dendrite_deadline_after(double timeout) {
  // Non-finite or absurd timeouts are clamped: every call must have a deadline.
  double t = timeout;
  if (!(t >= 0)) t = 0;  // NaN, negative
  if (t > 86400.0 * 365) t = 86400.0 * 365;
  return steady::now() +
         std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(t));
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------

namespace {
void require_secret(const keypair& k) {
  if (!k.has_secret()) throw std::invalid_argument("bt::dendrite: the hotkey has no secret key");
}
}  // namespace

dendrite::dendrite(keypair hotkey, options opt) {
  require_secret(hotkey);
  const unsigned n = opt.threads == 0 ? 1 : opt.threads;
  runner_ = std::make_unique<detail::dendrite_runner>(n);
  state_ = std::make_shared<detail::dendrite_state>(std::move(opt), std::move(hotkey),
                                                    runner_->ioc.get_executor());
  state_->own_single_thread = n == 1;
}

dendrite::dendrite(executor_type ex, keypair hotkey, options opt) {
  require_secret(hotkey);
  state_ =
      std::make_shared<detail::dendrite_state>(std::move(opt), std::move(hotkey), std::move(ex));
}

dendrite::~dendrite() {
  state_->shutdown();
  if (runner_) {
    runner_->join();  // every cancelled call completes before the threads return
    state_.reset();
    runner_.reset();
  }
}

dendrite::executor_type dendrite::get_executor() const noexcept {
  return state_->ex;
}
const keypair& dendrite::hotkey() const noexcept {
  return state_->key;
}
const std::string& dendrite::uuid() const noexcept {
  return state_->uuid;
}
const dendrite::options& dendrite::get_options() const noexcept {
  return state_->opt;
}
void dendrite::close_idle() {
  state_->pool.close_idle();
}

dendrite_stats dendrite::stats() const {
  dendrite_stats s;
  s.calls = state_->calls.load();
  s.connections_opened = state_->opened.load();
  s.connections_reused = state_->reused.load();
  s.retries = state_->retries.load();
  s.sessions_offered = state_->sessions_offered.load();
  s.sessions_established = state_->sessions_established.load();
  s.sessions_rejected = state_->sessions_rejected.load();
  s.session_requests = state_->session_requests.load();
  s.idle_connections = state_->pool.idle_count();
  std::lock_guard lk(state_->mu);
  s.in_flight = state_->active.size();
  return s;
}

bt::metrics::registry& dendrite::metrics() noexcept {
  return state_->registry;
}

void dendrite::check_blocking_allowed() const {
  if (runner_ && runner_->ioc.get_executor().running_in_this_thread())
    throw std::logic_error("bt::dendrite: blocking call from one of the dendrite's own threads");
}

namespace {
/// A single call (call, call_stream or epistula_call): the op, completing the caller's handler.
/// `epi` set: an Epistula call (`ref` and `sink` unused).
void start_single_call(const std::shared_ptr<detail::dendrite_state>& st, axon_info target,
                       detail::synapse_ref ref, double timeout,
                       std::optional<detail::stream_sink> sink,
                       net::any_completion_handler<void()> handler,
                       std::optional<detail::epistula_exchange> epi = std::nullopt) {
  auto call = std::make_shared<detail::dendrite_single_call>();
  call->target = std::move(target);
  if (sink) call->stream = std::move(*sink);
  call->done.emplace(std::move(handler), st->ex);
  const auto deadline = detail::dendrite_deadline_after(timeout);
  std::shared_ptr<detail::dendrite_call> op;
  if (epi) {
    call->epi = std::move(*epi);
    op = std::make_shared<detail::dendrite_call>(st, call->target, call->epi, timeout, deadline);
  } else {
    op = std::make_shared<detail::dendrite_call>(st, call->target, ref, timeout, deadline,
                                                 sink ? &call->stream : nullptr);
  }
  if (call->done->slot.is_connected()) {
    call->done->slot.assign([w = std::weak_ptr<detail::dendrite_call>(op)](net::cancellation_type) {
      if (auto sp = w.lock()) sp->cancel("cancelled by the caller");
    });
  }
  op->on_done = [call] { call->done->complete(); };
  op->start();
}
}  // namespace

void dendrite::async_call_impl(axon_info target, detail::synapse_ref ref, double timeout,
                               net::any_completion_handler<void()> handler) {
  start_single_call(state_, std::move(target), ref, timeout, std::nullopt, std::move(handler));
}

void dendrite::async_epistula_impl(axon_info target, std::string method, std::string path,
                                   std::string body, double timeout, epistula_response* out,
                                   net::any_completion_handler<void()> handler) {
  detail::epistula_exchange epi;
  epi.name = path.starts_with('/') ? path.substr(1) : path;
  epi.method = std::move(method);
  epi.path = std::move(path);
  epi.body = std::move(body);
  epi.out = out;
  start_single_call(state_, std::move(target), {}, timeout, std::nullopt, std::move(handler),
                    std::move(epi));
}

epistula_response dendrite::epistula_call(const axon_info& target, std::string method,
                                          std::string path, std::string json_body, double timeout) {
  check_blocking_allowed();
  std::promise<epistula_response> p;
  auto f = p.get_future();
  async_epistula_call(
      target, std::move(method), std::move(path), std::move(json_body), timeout,
      [p = std::move(p)](epistula_response r) mutable { p.set_value(std::move(r)); });
  return f.get();
}

void dendrite::async_call_stream_impl(axon_info target, detail::synapse_ref ref, double timeout,
                                      detail::stream_sink sink,
                                      net::any_completion_handler<void()> handler) {
  start_single_call(state_, std::move(target), ref, timeout, std::move(sink), std::move(handler));
}

void dendrite::async_forward_impl(std::vector<axon_info> axons,
                                  std::vector<detail::synapse_ref> refs, double timeout,
                                  net::any_completion_handler<void()> handler) {
  auto f = std::make_shared<detail::dendrite_fanout>();
  f->st = state_;
  f->axons = std::move(axons);
  f->refs = std::move(refs);
  f->timeout = timeout;
  f->deadline = detail::dendrite_deadline_after(timeout);
  f->live.resize(f->axons.size());
  f->done.emplace(std::move(handler), state_->ex);
  if (f->axons.empty()) {
    // Complete through the executor, never inside the initiating function.
    net::post(state_->ex, [f] {
      std::optional<detail::dendrite_completion> c;
      c.swap(f->done);
      c->complete();
    });
    return;
  }
  if (f->done->slot.is_connected()) {
    f->done->slot.assign([w = std::weak_ptr<detail::dendrite_fanout>(f)](net::cancellation_type) {
      if (auto sp = w.lock()) sp->cancel_all();
    });
  }
  f->launch_more();
}

}  // namespace bt
