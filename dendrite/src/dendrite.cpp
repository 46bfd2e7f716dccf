// bt::dendrite: connection pool, one-deadline call operation, fan-out, own I/O threads.
//
// One call is a `call_op` owned by its pending handlers (shared_ptr captured in each), running on
// its own strand: take a pooled connection or connect, encode and sign, write head+body with one
// gather write, read the response with a fresh limited parser (skipping 1xx interim answers;
// the head limit also bounds chunk extensions and trailers, and a connection's read buffer has a
// maximum size, so no peer can grow memory past the limits), merge. A steady_timer armed once
// with the absolute deadline closes the socket when it fires, so no byte a miner drips can
// extend the call; every completion checks the flags before interpreting its error code.
#include <bt/dendrite.hpp>

#include <bt/json_body.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <spdlog/logger.h>

#include <pthread.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
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

/// A keep-alive connection and the buffers it reuses from call to call.
struct pooled_connection {
  tcp::socket socket;
  beast::flat_buffer buffer;  ///< response bytes; empty between calls
  std::string head, body;     ///< request buffers
  std::string scratch;        ///< the signed message
  std::string local_ip;       ///< local address of the socket (default dendrite ip)
  steady::time_point idle_since{};

  explicit pooled_connection(const net::any_io_executor& ex) : socket(ex) {}
};

/// Request buffers are kept between calls, but a one-off huge request or response should not
/// pin its memory for the life of the connection.
constexpr std::size_t keep_buffer_bytes = 1u << 20;

/// A connection's read buffer may hold max_response_header_bytes plus this: Beast's parser needs
/// a whole head, chunk-size line or trailer section in the buffer before parsing it, and reads
/// up to 64 KiB at a time. The cap is what bounds an endless line (the read then fails with
/// http::error::buffer_overflow); body bytes never accumulate in it (they go to the body).
constexpr std::size_t read_buffer_slack = 64u << 10;

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

/// Pooled connections idle longer than this are checked for a FIN before reuse.
constexpr auto peek_after = std::chrono::milliseconds(500);

struct dendrite_endpoint_hash {
  std::size_t operator()(const tcp::endpoint& e) const noexcept {
    return std::hash<tcp::endpoint>()(e);
  }
};

class dendrite_call;
struct dendrite_fanout;

/// What running operations share with the dendrite object; kept alive by them.
struct dendrite_state {
  dendrite_options opt;
  keypair key;
  std::string uuid;
  net::any_io_executor ex;
  bool own_single_thread = false;  ///< one thread runs ex: no strands needed
  std::shared_ptr<spdlog::logger> log;

  std::atomic<std::int64_t> last_nonce{0};
  std::atomic<std::uint64_t> calls{0}, opened{0}, reused{0}, retries{0};

  std::mutex mu;  // guards everything below
  bool stopped = false;
  std::unordered_map<tcp::endpoint, std::vector<std::unique_ptr<pooled_connection>>,
                     dendrite_endpoint_hash>
      idle;
  std::size_t idle_total = 0;
  steady::time_point last_sweep{};
  std::unordered_map<dendrite_call*, std::weak_ptr<dendrite_call>> active;

  dendrite_state(dendrite_options o, keypair k, net::any_io_executor e)
      : opt(std::move(o)),
        key(std::move(k)),
        uuid(make_uuid1()),
        ex(std::move(e)),
        log(opt.logger) {
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

  /// An idle connection to `ep` still usable, or null.
  std::unique_ptr<pooled_connection> take(const tcp::endpoint& ep) {
    const auto now = steady::now();
    for (;;) {
      std::unique_ptr<pooled_connection> c;
      {
        std::lock_guard lk(mu);
        auto it = idle.find(ep);
        if (it == idle.end()) return nullptr;
        c = std::move(it->second.back());
        it->second.pop_back();
        if (it->second.empty()) idle.erase(it);
        --idle_total;
      }
      const auto idle_for = now - c->idle_since;
      if (idle_for >= opt.idle_timeout) continue;
      // Servers close idle connections after seconds (uvicorn 5 s), so a connection idle for
      // less than peek_after is used without the extra system call; the retry covers the rest.
      if (idle_for < peek_after || still_open(*c)) return c;
      // expired or closed by the server: drop it (the destructor closes the descriptor)
    }
  }

  /// A non-blocking peek: the server's FIN (0) or unexpected bytes (> 0) make the connection
  /// unusable; only "would block" means it is idle and open.
  static bool still_open(pooled_connection& c) {
    char b;
    const ssize_t r = ::recv(c.socket.native_handle(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  void put(const tcp::endpoint& ep, std::unique_ptr<pooled_connection> c) {
    const auto now = steady::now();
    c->idle_since = now;
    if (c->body.capacity() > keep_buffer_bytes) std::string().swap(c->body);
    if (c->head.capacity() > keep_buffer_bytes) std::string().swap(c->head);
    if (c->buffer.capacity() > keep_buffer_bytes) c->buffer.shrink_to_fit();
    std::vector<std::unique_ptr<pooled_connection>> expired;  // closed outside the lock
    {
      std::lock_guard lk(mu);
      if (now - last_sweep > std::chrono::seconds(1)) {
        last_sweep = now;
        sweep_locked(now, expired);
      }
      if (stopped || idle_total >= opt.max_idle_total) return;
      auto& v = idle[ep];
      if (v.size() >= opt.max_idle_per_endpoint) return;
      v.push_back(std::move(c));
      ++idle_total;
    }
  }

  void sweep_locked(steady::time_point now, std::vector<std::unique_ptr<pooled_connection>>& out) {
    for (auto it = idle.begin(); it != idle.end();) {
      auto& v = it->second;
      for (std::size_t i = 0; i < v.size();) {
        if (now - v[i]->idle_since >= opt.idle_timeout) {
          out.push_back(std::move(v[i]));
          v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
          --idle_total;
        } else {
          ++i;
        }
      }
      it = v.empty() ? idle.erase(it) : std::next(it);
    }
  }

  void close_idle() {
    decltype(idle) drop;
    {
      std::lock_guard lk(mu);
      drop.swap(idle);
      idle_total = 0;
    }
  }

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

/// One call: its own strand, deadline timer, connection and parser.
class dendrite_call : public std::enable_shared_from_this<dendrite_call> {
 public:
  /// `target` must outlive the op (owned by the op for single calls, by the fan-out otherwise).
  dendrite_call(std::shared_ptr<dendrite_state> st, const axon_info& target, synapse_ref ref,
                double timeout, steady::time_point deadline)
      : st_(std::move(st)),
        exec_(st_->make_op_executor()),
        timer_(st_->ex),
        target_(target),
        ref_(ref),
        timeout_(timeout),
        deadline_(deadline),
        begin_(steady::now()),
        chunk_cb_([this](std::uint64_t, beast::string_view ext, beast::error_code& ec) {
          on_chunk_header(ext, ec);
        }) {}

  std::function<void()> on_done;  // set before start(); runs on the op's executor

  /// Makes this a streaming call (call_stream, PROTOCOL 7): a 200 body goes to `sink` as it
  /// arrives (detail/dendrite_stream.hpp). `sink` must outlive the op. Set before start().
  void set_stream(stream_sink* sink) noexcept { stream_ = sink; }

  const net::any_io_executor& executor() const noexcept { return exec_; }

  /// Begins the call: posts onto the op's executor (never completes inline).
  void start() {
    auto self = shared_from_this();
    if (!st_->register_op(this, self)) {
      net::post(exec_, [self] { self->fail(dendrite_errc::cancelled, "dendrite stopped"); });
      return;
    }
    registered_ = true;
    net::post(exec_, [self] { self->on_start(); });
  }

  /// Thread-safe: ends the call as cancelled (no-op once finished).
  void cancel(std::string reason) {
    auto self = shared_from_this();
    net::post(exec_, [self, reason = std::move(reason)]() mutable {
      if (self->finished_ || self->cancelled_) return;
      self->cancelled_ = true;
      self->cancel_reason_ = std::move(reason);
      if (!self->started_) return;  // on_start sees the flag
      if (self->conn_) {
        beast::error_code ignored;
        self->conn_->socket.close(ignored);  // pending operation completes with an error
      } else {
        self->fail(dendrite_errc::cancelled, self->cancel_reason_);
      }
    });
  }

 private:
  template <class F>
  auto bind(F&& f) {
    return net::bind_executor(exec_, std::forward<F>(f));
  }

  const std::string& name() const { return ref_.descriptor->name(); }

  void on_start() {
    started_ = true;
    synapse& s = *ref_.object;
    const std::string_view ext = st_->opt.external_ip;
    preset_request(s, target_, timeout_, st_->identity(), ext);
    if (cancelled_) return fail(dendrite_errc::cancelled, cancel_reason_);
    if (steady::now() >= deadline_) return fail(dendrite_errc::timeout, {});

    beast::error_code ec;
    auto addr = net::ip::make_address(target_.ip, ec);
    if (ec) {
      return fail(dendrite_errc::invalid_address,
                  "invalid axon address '" + target_.ip + "' (an IP literal is required)");
    }
    // Our own public address: talk to our own miner over loopback (PROTOCOL 4.1, D19).
    if (!ext.empty() && target_.ip == ext) addr = net::ip::make_address_v4("127.0.0.1");
    if (st_->opt.insecure_skip_signing && !addr.is_loopback())
      return fail(dendrite_errc::invalid_address,
                  "insecure_skip_signing refuses the non-loopback axon '" + target_.ip + "'");
    ep_ = tcp::endpoint(addr, target_.port);
    host_ = host_header(target_.ip, target_.port);

    timer_.expires_at(deadline_);
    timer_.async_wait(
        bind([self = shared_from_this()](beast::error_code e) { self->on_deadline(e); }));

    conn_ = st_->take(ep_);
    if (conn_) {
      reused_ = true;
      st_->reused.fetch_add(1, std::memory_order_relaxed);
      send();
    } else {
      connect();
    }
  }

  void on_deadline(beast::error_code ec) {
    if (ec == net::error::operation_aborted || finished_) return;
    timed_out_ = true;
    if (conn_) {
      beast::error_code ignored;
      conn_->socket.close(ignored);  // the pending connect/write/read completes with an error
    }
  }

  void connect() {
    reused_ = false;
    conn_ = std::make_unique<pooled_connection>(st_->ex);
    conn_->buffer.max_size(read_buffer_max(st_->opt));
    st_->opened.fetch_add(1, std::memory_order_relaxed);
    conn_->socket.async_connect(
        ep_, bind([self = shared_from_this()](beast::error_code e) { self->on_connect(e); }));
  }

  void on_connect(beast::error_code ec) {
    if (timed_out_) return fail(dendrite_errc::timeout, {});
    if (cancelled_) return fail(dendrite_errc::cancelled, cancel_reason_);
    if (ec) {
      if (st_->log) st_->log->debug("dendrite | connect {} failed: {}", host_, ec.message());
      return fail(dendrite_errc::connect_failed, ec.message());
    }
    beast::error_code ignored;
    conn_->socket.set_option(tcp::no_delay(true), ignored);
    if (st_->opt.external_ip.empty()) {
      auto local = conn_->socket.local_endpoint(ignored);
      if (!ignored) conn_->local_ip = local.address().to_string();
    }
    send();
  }

  void send() {
    synapse& s = *ref_.object;
    pooled_connection& c = *conn_;
    const std::string_view ip =
        st_->opt.external_ip.empty() ? std::string_view(c.local_ip) : std::string_view();
    encode_request(*ref_.descriptor, s, ip, st_->next_nonce(), st_->identity(), host_, c.scratch,
                   c.head, c.body);
    if (st_->log && st_->log->should_log(spdlog::level::debug)) {
      st_->log->debug("dendrite | --> | {} B | {} | {} | {} | 0 | Success",
                      c.head.size() + c.body.size(), name(), target_.hotkey, host_);
    }
    std::array<net::const_buffer, 2> bufs{net::buffer(c.head), net::buffer(c.body)};
    net::async_write(
        c.socket, bufs,
        bind([self = shared_from_this()](beast::error_code e, std::size_t) { self->on_write(e); }));
  }

  void on_write(beast::error_code ec) {
    if (timed_out_) return fail(dendrite_errc::timeout, {});
    if (cancelled_) return fail(dendrite_errc::cancelled, cancel_reason_);
    if (ec) {
      if (may_retry()) return retry();
      return fail(dendrite_errc::disconnected, ec.message());
    }
    read_response();
  }

  /// Reads one response (the final one, or a 1xx interim one to skip) with a fresh parser. The
  /// head budget max_response_header_bytes is shared by the heads of skipped interim responses,
  /// this head, its chunk extensions and its trailers (on_chunk_header, trailers_fit).
  void read_response() {
    const std::size_t limit = st_->opt.max_response_header_bytes;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(limit - std::min(limit, interim_bytes_), UINT32_MAX)));
    parser_->body_limit(st_->opt.max_response_body_bytes);
    parser_->on_chunk_header(chunk_cb_);
    head_counted_ = false;
    head_fields_bytes_ = 0;
    meta_bytes_ = 0;
    if (stream_) {
      http::async_read_header(conn_->socket, conn_->buffer, *parser_,
                              bind([self = shared_from_this()](beast::error_code e, std::size_t n) {
                                self->on_stream_head(e, n);
                              }));
      return;
    }
    http::async_read(conn_->socket, conn_->buffer, *parser_,
                     bind([self = shared_from_this()](beast::error_code e, std::size_t n) {
                       self->on_read(e, n);
                     }));
  }

  /// Parser callback, once per chunk (the last one too), before its data. Counts the head
  /// (approximately, as fields_bytes) once, then every extension, against the head budget; over
  /// it, the parse stops with header_limit and meta_over_ picks the message.
  void on_chunk_header(beast::string_view ext, beast::error_code& ec) {
    if (!head_counted_) {
      head_counted_ = true;
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

  /// After a complete chunked body: the trailer fields (appended to the head's fields by the
  /// parser) count against the head budget too. Their bytes were already bounded by the read
  /// buffer's cap; this makes the limit exact. Fails the call and returns false when over.
  bool trailers_fit() {
    if (!head_counted_) return true;  // not chunked: no trailers
    const std::size_t all = fields_bytes(parser_->get());
    const std::size_t trailers = all > head_fields_bytes_ ? all - head_fields_bytes_ : 0;
    if (meta_bytes_ + trailers <= st_->opt.max_response_header_bytes) return true;
    meta_over_ = true;
    fail(dendrite_errc::response_too_large, meta_limit_message());
    return false;
  }

  std::string meta_limit_message() const {
    return "response head, chunk extensions and trailers exceed " +
           std::to_string(st_->opt.max_response_header_bytes) + " bytes";
  }

  /// A 1xx interim response (its head only; 1xx has no body) was read: skip it and read the
  /// next response on the same connection (RFC 9112 section 6.1), a bounded number of times.
  void on_interim(std::size_t head_bytes) {
    if (parser_->get().result_int() == 101)
      return fail(dendrite_errc::malformed_response,
                  "unexpected 101 Switching Protocols (no upgrade was requested)");
    interim_bytes_ += head_bytes;
    if (++interim_ > st_->opt.max_interim_responses)
      return fail(dendrite_errc::malformed_response,
                  "more than " + std::to_string(st_->opt.max_interim_responses) +
                      " interim (1xx) responses");
    if (interim_bytes_ >= st_->opt.max_response_header_bytes)
      return fail(
          dendrite_errc::response_too_large,
          "response head exceeds " + std::to_string(st_->opt.max_response_header_bytes) + " bytes");
    read_response();
  }

  /// A pooled connection that fails before any response byte was probably closed by the server
  /// while idle (keep-alive race): retry once, on a fresh connection with a fresh nonce.
  bool may_retry() const {
    return reused_ && !retried_ && !timed_out_ && !cancelled_ && interim_ == 0 &&
           conn_->buffer.size() == 0 && (!parser_ || !parser_->got_some());
  }

  void retry() {
    retried_ = true;
    st_->retries.fetch_add(1, std::memory_order_relaxed);
    parser_.reset();
    conn_.reset();
    connect();
  }

  void on_read(beast::error_code ec, std::size_t n) {
    if (timed_out_) return fail(dendrite_errc::timeout, {});
    if (cancelled_) return fail(dendrite_errc::cancelled, cancel_reason_);
    if (ec) return on_read_error(ec);

    auto& res = parser_->get();
    if (res.result_int() / 100 == 1) return on_interim(n);
    if (!trailers_fit()) return;
    std::string detail;
    if (auto e = apply_response(ref_, res.result_int(), res, res.body(), detail); e)
      return fail(static_cast<dendrite_errc>(e.value()), detail);
    synapse& s = *ref_.object;
    s.dendrite.process_time = std::chrono::duration<double>(steady::now() - begin_).count();
    keep_ = res.keep_alive() && conn_->buffer.size() == 0;
    finish();
  }

  // ---- streaming (call_stream): the head as for call(), then a 200 body read incrementally ----

  void on_stream_head(beast::error_code ec, std::size_t n) {
    if (timed_out_) return fail(dendrite_errc::timeout, {});
    if (cancelled_) return fail(dendrite_errc::cancelled, cancel_reason_);
    if (ec) return on_read_error(ec);
    const int status = parser_->get().result_int();
    if (status / 100 == 1) return on_interim(n);
    if (status != 200) {
      // An ordinary answer (401, 404, 503, ... from stages 1-5): the JSON error path of 6.3.
      http::async_read(conn_->socket, conn_->buffer, *parser_,
                       bind([self = shared_from_this()](beast::error_code e, std::size_t m) {
                         self->on_read(e, m);
                       }));
      return;
    }
    // PROTOCOL 7: the body is an opaque byte stream for the type's parser, whatever its
    // content type says (D17). The parser's body limit counts the whole stream.
    on_stream_read({});
  }

  /// Hands the body bytes parsed so far to the sink, then reads more until the body is complete.
  /// The deadline timer closing the socket ends the loop like any other read.
  void on_stream_read(beast::error_code ec) {
    // Bytes that arrived before a deadline, a cancellation or a close are still delivered.
    std::string& body = parser_->get().body();
    if (!body.empty()) {
      if (!feed_stream(body)) return;
      body.clear();
    }
    if (timed_out_) return fail(dendrite_errc::timeout, {});
    if (cancelled_) return fail(dendrite_errc::cancelled, cancel_reason_);
    if (ec) return on_read_error(ec);
    if (parser_->is_done()) return end_stream();
    http::async_read_some(conn_->socket, conn_->buffer, *parser_,
                          bind([self = shared_from_this()](beast::error_code e, std::size_t) {
                            self->on_stream_read(e);
                          }));
  }

  /// Runs the type's parser (and the caller's on_item); an exception from either ends the call.
  bool feed_stream(std::string_view bytes) {
    try {
      stream_->push(*ref_.object, bytes);
      return true;
    } catch (const std::exception& e) {
      fail(dendrite_errc::malformed_response, std::string("stream parser failed: ") + e.what());
    } catch (...) {
      fail(dendrite_errc::malformed_response, "stream parser failed");
    }
    return false;
  }

  void end_stream() {
    try {
      stream_->end(*ref_.object);
    } catch (const std::exception& e) {
      return fail(dendrite_errc::malformed_response,
                  std::string("stream parser failed: ") + e.what());
    } catch (...) {
      return fail(dendrite_errc::malformed_response, "stream parser failed");
    }
    if (!trailers_fit()) return;
    auto& res = parser_->get();
    std::string detail;
    synapse& s = *ref_.object;
    if (auto e = apply_stream_headers(s, res, detail); e)
      return fail(static_cast<dendrite_errc>(e.value()), detail);
    s.dendrite.process_time = std::chrono::duration<double>(steady::now() - begin_).count();
    keep_ = res.keep_alive() && conn_->buffer.size() == 0;
    finish();
  }

  /// A failed read of the response (head or body): the failure table of docs/dendrite.md.
  void on_read_error(beast::error_code ec) {
    if (may_retry()) return retry();
    if (ec == http::error::body_limit)
      return fail(
          dendrite_errc::response_too_large,
          "response body exceeds " + std::to_string(st_->opt.max_response_body_bytes) + " bytes");
    // An extension or the trailers over the head budget, or a single line (chunk size,
    // trailer) longer than the read buffer's cap: the peer's metadata is too large.
    if ((ec == http::error::header_limit && meta_over_) || ec == http::error::buffer_overflow)
      return fail(dendrite_errc::response_too_large, meta_limit_message());
    if (ec == http::error::header_limit)
      return fail(
          dendrite_errc::response_too_large,
          "response head exceeds " + std::to_string(st_->opt.max_response_header_bytes) + " bytes");
    const bool closed = ec == http::error::end_of_stream || ec == http::error::partial_message ||
                        ec == net::error::eof || ec == net::error::connection_reset ||
                        ec == net::error::connection_aborted || ec == net::error::broken_pipe;
    if (closed && parser_->is_header_done()) return fail(dendrite_errc::payload_incomplete, {});
    if (closed) {
      const bool eof = ec == http::error::end_of_stream || ec == http::error::partial_message ||
                       ec == net::error::eof;
      return fail(dendrite_errc::disconnected, eof ? std::string() : ec.message());
    }
    if (&ec.category() == &http::make_error_code(http::error::bad_field).category())
      return fail(dendrite_errc::malformed_response, "invalid HTTP response: " + ec.message());
    return fail(dendrite_errc::disconnected, ec.message());
  }

  void fail(dendrite_errc e, std::string_view detail) {
    if (finished_) return;
    set_dendrite_failure(*ref_.object, name(), e, detail);
    keep_ = false;
    finish();
  }

  void finish() {
    finished_ = true;
    timer_.cancel();
    parser_.reset();
    if (conn_) {
      if (keep_ && !timed_out_ && !cancelled_)
        st_->put(ep_, std::move(conn_));
      else
        conn_.reset();
    }
    if (registered_) st_->unregister_op(this);
    st_->calls.fetch_add(1, std::memory_order_relaxed);
    if (st_->log && st_->log->should_log(spdlog::level::debug)) {
      const synapse& s = *ref_.object;
      st_->log->debug("dendrite | <-- | {} | {} | {} | {} | {}", name(), target_.hotkey, host_,
                      s.dendrite.status_code.value_or(0), s.dendrite.status_message.value_or(""));
    }
    auto done = std::move(on_done);
    on_done = nullptr;
    if (done) done();
  }

  std::shared_ptr<dendrite_state> st_;
  net::any_io_executor exec_;
  net::steady_timer timer_;
  const axon_info& target_;
  synapse_ref ref_;
  double timeout_;
  steady::time_point deadline_;
  steady::time_point begin_;

  tcp::endpoint ep_;
  std::string host_;
  std::unique_ptr<pooled_connection> conn_;
  std::optional<http::response_parser<http::string_body>> parser_;
  /// The parser's chunk-header callback (Beast keeps a reference: it lives as long as the op).
  std::function<void(std::uint64_t, beast::string_view, beast::error_code&)> chunk_cb_;
  std::size_t interim_ = 0;            ///< 1xx interim responses skipped
  std::size_t interim_bytes_ = 0;      ///< their heads' bytes (count against the head limit)
  std::size_t head_fields_bytes_ = 0;  ///< fields_bytes of the final head, before trailers
  std::size_t meta_bytes_ = 0;         ///< head + chunk extensions so far (chunked bodies)
  bool head_counted_ = false;          ///< the first chunk header has been seen
  bool meta_over_ = false;             ///< header_limit came from extensions or trailers
  stream_sink* stream_ = nullptr;      ///< set: a streaming call
  std::string cancel_reason_;
  bool registered_ = false;
  bool started_ = false;
  bool reused_ = false;
  bool retried_ = false;
  bool timed_out_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
  bool keep_ = false;
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
  close_idle();
}

/// Completes a type-erased handler on its own executor, keeping that executor's work count up
/// while the operation runs (so a caller's io_context.run() does not return early), and
/// clearing the handler's cancellation slot before it runs (Asio's rule).
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
    if (slot.is_connected()) slot.clear();
    auto h = std::move(handler);
    auto ex = std::move(work);
    net::dispatch(ex, std::move(h));
  }
};

/// A single call: the op plus the caller's handler and the target it copied.
struct dendrite_single_call {
  axon_info target;
  std::optional<dendrite_completion> done;
  stream_sink stream;  ///< call_stream's parser (unused by call)
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
      if (cancelled)
        for (auto& op : start) op->cancel("cancelled by the caller");
    }
    for (auto& op : start) op->start();
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

/// The io_context and threads of a dendrite that owns them.
struct dendrite_runner {
  net::io_context ioc;
  net::executor_work_guard<net::io_context::executor_type> guard;
  std::vector<std::thread> threads;

  explicit dendrite_runner(unsigned n)
      : ioc(static_cast<int>(n == 0 ? 1 : n)), guard(ioc.get_executor()) {
    for (unsigned i = 0; i < (n == 0 ? 1 : n); ++i)
      threads.emplace_back([this] {
        pthread_setname_np(pthread_self(), "bt-dendrite");  // visible in top, perf, gdb
        ioc.run();
      });
  }
  void join() {
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
  state_->close_idle();
}

dendrite_stats dendrite::stats() const {
  dendrite_stats s;
  s.calls = state_->calls.load();
  s.connections_opened = state_->opened.load();
  s.connections_reused = state_->reused.load();
  s.retries = state_->retries.load();
  std::lock_guard lk(state_->mu);
  s.idle_connections = state_->idle_total;
  s.in_flight = state_->active.size();
  return s;
}

void dendrite::check_blocking_allowed() const {
  if (runner_ && runner_->ioc.get_executor().running_in_this_thread())
    throw std::logic_error("bt::dendrite: blocking call from one of the dendrite's own threads");
}

void dendrite::async_call_impl(axon_info target, detail::synapse_ref ref, double timeout,
                               net::any_completion_handler<void()> handler) {
  auto call = std::make_shared<detail::dendrite_single_call>();
  call->target = std::move(target);
  call->done.emplace(std::move(handler), state_->ex);
  auto op = std::make_shared<detail::dendrite_call>(state_, call->target, ref, timeout,
                                                    detail::dendrite_deadline_after(timeout));
  if (call->done->slot.is_connected()) {
    call->done->slot.assign([w = std::weak_ptr<detail::dendrite_call>(op)](net::cancellation_type) {
      if (auto sp = w.lock()) sp->cancel("cancelled by the caller");
    });
  }
  op->on_done = [call] { call->done->complete(); };
  op->start();
}

void dendrite::async_call_stream_impl(axon_info target, detail::synapse_ref ref, double timeout,
                                      detail::stream_sink sink,
                                      net::any_completion_handler<void()> handler) {
  auto call = std::make_shared<detail::dendrite_single_call>();
  call->target = std::move(target);
  call->stream = std::move(sink);
  call->done.emplace(std::move(handler), state_->ex);
  auto op = std::make_shared<detail::dendrite_call>(state_, call->target, ref, timeout,
                                                    detail::dendrite_deadline_after(timeout));
  op->set_stream(&call->stream);
  if (call->done->slot.is_connected()) {
    call->done->slot.assign([w = std::weak_ptr<detail::dendrite_call>(op)](net::cancellation_type) {
      if (auto sp = w.lock()) sp->cancel("cancelled by the caller");
    });
  }
  op->on_done = [call] { call->done->complete(); };
  op->start();
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
