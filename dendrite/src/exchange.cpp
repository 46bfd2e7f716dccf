// The dendrite's exchange (exchange.hpp): one call as I/O, whatever its dialect.
//
// One call is one coroutine (call_exchange::exchange) on the call's own strand: take a pooled
// connection or connect, have the dialect encode the request (a fresh nonce each try), write
// head+body with one gather write, read responses with a fresh limited parser until a final
// (non-1xx) one, then the body: a unary call (and a non-200 streamed answer) reads it whole and
// the dialect merges it; a streamed 200 hands it to the dialect as it arrives. The head limit
// also bounds 1xx heads, chunk extensions and trailers, and a connection's read buffer has a
// maximum size, so no peer can grow memory past the limits.
//
// The deadline and cancellation are one thing, the call's stop: a steady_timer armed once with
// the absolute deadline (a fan-out's calls share the fan-out's, which calls expire()), cancel()
// and the dendrite's shutdown all set it and close the socket, so no byte a miner drips can
// extend the call; the coroutine only suspends in socket operations, and after each one it
// calls throw_if_stopped() before looking at the result
// (after a successful write, only the stop: the read that follows looks at the clock). The
// clock is read once per stage and the reading handed along (pool, session, metrics).
// Failures are thrown as call_failure inside the coroutine and recorded once (by the dialect);
// finish() then pools the connection only after a complete, clean exchange.
#include "exchange.hpp"

#include <bt/detail/write_in_place.hpp>
#include <bt/response_signature.hpp>
#include <bt/sha256.hpp>
#include <bt/ss58.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

namespace bt::detail {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;

namespace {

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

constexpr auto use_ec = net::as_tuple(net::use_awaitable);

/// What to add to a 421 when an error answer (400 or above) was signed, but not by the hotkey
/// the call addressed: the axon answered, so its refusal is probably about that very hotkey (a
/// wrong target hotkey gets the axon's "this axon's hotkey is ..." 401, signed with its own key).
/// The axon's message is quoted from the JSON body ({"message": ...}) when it has one.
std::string refusal_by_another_key(const axon_info& target, int status, std::string_view body) {
  std::string text = "; the axon at ";
  text += target.ip.find(':') == std::string::npos ? target.ip : "[" + target.ip + "]";
  text += ":" + std::to_string(target.port) + " answered " + std::to_string(status);
  const json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    const auto& message = j["message"].get_ref<const std::string&>();
    constexpr std::size_t shown = 300;
    text += " \"" + message.substr(0, shown) + (message.size() > shown ? "...\"" : "\"");
  }
  return text + ", signed by another key than " + target.hotkey +
         ": is the hotkey given for this axon right (bt-dendrite: --axon IP:PORT:HOTKEY)?";
}

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

/// Runs the dialect's stream parser (and the caller's on_item); an exception from either ends
/// the call.
template <class F>
void guard_stream_parser(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    throw call_failure{dendrite_errc::malformed_response,
                       std::string("stream parser failed: ") + e.what()};
  } catch (...) {
    throw call_failure{dendrite_errc::malformed_response, "stream parser failed"};
  }
}

/// Writes `bufs` whole: in place first when the socket is non-blocking
/// (bt/detail/write_in_place.hpp), whatever is left by an asynchronous write.
net::awaitable<beast::error_code> write_whole(tcp::socket& socket,
                                              std::array<net::const_buffer, 2> bufs) {
  beast::error_code ec;
  const auto rest = write_in_place(socket, bufs, ec);
  if (ec || net::buffer_size(rest) == 0) co_return ec;
  auto [wec, wn] = co_await net::async_write(socket, rest, use_ec);
  (void)wn;
  co_return wec;
}

}  // namespace

steady::time_point dendrite_deadline_after(double timeout) {
  // Non-finite or absurd timeouts are clamped: every call must have a deadline.
  double t = timeout;
  if (!(t >= 0)) t = 0;  // NaN, negative
  if (t > 86400.0 * 365) t = 86400.0 * 365;
  return steady::now() +
         std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(t));
}

call_exchange::call_exchange(std::shared_ptr<dendrite_state> st, const axon_info& target,
                             double timeout, steady::time_point deadline, call_dialect& dialect)
    : st_(std::move(st)),
      exec_(st_->make_op_executor()),
      timer_(st_->ex),
      target_(target),
      dialect_(dialect),
      name_(dialect.name()),
      timeout_(timeout),
      deadline_(deadline),
      chunk_cb_([this](std::uint64_t, beast::string_view ext, beast::error_code& ec) {
        on_chunk_header(ext, ec);
      }) {}

void call_exchange::start(std::string cancel_reason) {
  auto self = shared_from_this();
  std::optional<call_failure> stopped;
  registered_ = st_->register_op(active_link_);
  if (!registered_)
    stopped = call_failure{dendrite_errc::cancelled, "dendrite stopped"};
  else if (!cancel_reason.empty())
    stopped = call_failure{dendrite_errc::cancelled, std::move(cancel_reason)};
  // co_spawn never runs its completion handler inside co_spawn itself.
  net::co_spawn(exec_, exchange(std::move(stopped)),
                [self](std::exception_ptr e, bool keep) { self->finish(e, keep); });
}

void call_exchange::cancel(std::string reason) {
  net::post(exec_, [self = shared_from_this(), reason = std::move(reason)]() mutable {
    self->stop(dendrite_errc::cancelled, std::move(reason));
  });
}

void call_exchange::expire() {
  net::post(exec_, [self = shared_from_this()] { self->stop(dendrite_errc::timeout, {}); });
}

/// The deadline timer, cancel() and shutdown end the call here (on the op's executor): the
/// first reason wins, and closing the socket makes the pending socket operation complete.
void call_exchange::stop(dendrite_errc e, std::string detail) {
  if (stop_) return;
  stop_ = call_failure{e, std::move(detail)};
  if (conn_) {
    beast::error_code ignored;
    conn_->socket.close(ignored);
  }
}

/// The one place the deadline and cancellation are checked: at the start and after every
/// socket operation, before its result is looked at (a stop outranks the error the closed
/// socket produced, and an answer that lost the race with the deadline); a successful write
/// only checks stop_, see send(). `now`: the clock as the operation completed (the caller's one
/// reading for its stage).
void call_exchange::throw_if_stopped(steady::time_point now) {
  if (!stop_ && now >= deadline_) stop_ = call_failure{dendrite_errc::timeout, {}};
  if (stop_) throw *stop_;
}

/// A pooled connection to ep_ usable at `now`, skipping (closing) ones whose session can carry
/// no more.
std::unique_ptr<pooled_connection> call_exchange::take_pooled(steady::time_point now) {
  for (;;) {
    auto c = st_->pool.take(ep_, now);
    if (!c || !c->session.spent(now)) return c;
  }
}

/// The request (`problem`: the dialect's objection), the axon's address and hotkey, checked
/// before a connection; sets ep_ and host_.
void call_exchange::check_address(std::string problem) {
  if (!problem.empty()) throw call_failure{dendrite_errc::invalid_address, std::move(problem)};
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
  const std::string_view ext = st_->opt.external_ip;
  if (!ext.empty() && target_.ip == ext) addr = net::ip::make_address_v4("127.0.0.1");
  if (st_->opt.insecure_skip_signing && !addr.is_loopback())
    throw call_failure{dendrite_errc::invalid_address,
                       "insecure_skip_signing refuses the non-loopback axon '" + target_.ip + "'"};
  ep_ = tcp::endpoint(addr, target_.port);
  host_ = host_header(target_.ip, target_.port);
}

/// The whole call (`stopped_before_start`: see start()). Returns whether the connection may be
/// pooled; throws call_failure.
net::awaitable<bool> call_exchange::exchange(std::optional<call_failure> stopped_before_start) {
  const steady::time_point begin = steady::now();
  if (stopped_before_start && !stop_) stop_ = std::move(stopped_before_start);
  std::string problem = dialect_.begin(context());
  // A fan-out call still queued at its deadline ends here, without a connection.
  throw_if_stopped(begin);
  check_address(std::move(problem));

  if (own_timer_) {
    timer_.expires_at(deadline_);
    timer_.async_wait(net::bind_executor(exec_, [self = shared_from_this()](beast::error_code e) {
      if (e != net::error::operation_aborted) self->stop(dendrite_errc::timeout, {});
    }));
  }

  // A pooled connection that fails before any response byte was probably closed by the server
  // while idle (keep-alive race): it is retried once, on a fresh connection with a fresh nonce.
  conn_ = take_pooled(begin);
  bool may_retry = conn_ != nullptr;
  if (conn_)
    st_->reused.fetch_add(1, std::memory_order_relaxed);
  else
    co_await connect();
  for (;;) {
    beast::error_code ec = co_await send();
    if (!ec) ec = co_await read_final_head();
    if (!ec) break;
    if (!std::exchange(may_retry, false) || got_some_response()) throw io_failure(ec);
    st_->retries.fetch_add(1, std::memory_order_relaxed);
    co_await connect();
  }

  auto& res = parser_->get();
  const call_context cx = context();
  close_after_ = dialect_.on_final_head(cx, *conn_, res);
  if (dialect_.streaming() && res.result_int() == 200) {
    co_await read_stream(res);
  } else {
    if (dialect_.streaming()) {
      // A streamed call's non-200 head (401, 404, 503, ... from stages 1-5): an ordinary JSON
      // answer, read whole and merged as call()'s (PROTOCOL 6.3).
      auto [e, n] = co_await http::async_read(conn_->socket, conn_->buffer, *parser_, use_ec);
      throw_if_stopped();
      if (e) throw io_failure(e);
    }
    trailers_fit();
    const bool verified = check_response_signature(res);
    dialect_.merge(cx, res, verified);
  }
  ended_ = steady::now();
  dialect_.set_process_time(std::chrono::duration<double>(ended_ - begin).count());
  co_return res.keep_alive() && conn_->buffer.size() == 0 && !close_after_ &&
      !conn_->session.spent(ended_);
}

/// A streamed 200 (PROTOCOL 7): the body is an opaque byte stream for the dialect's parser,
/// whatever its content type says (D17). The parser's body limit counts the whole stream.
net::awaitable<void> call_exchange::read_stream(http_response& res) {
  while (!parser_->is_done()) {
    auto [e, n] = co_await http::async_read_some(conn_->socket, conn_->buffer, *parser_, use_ec);
    // Bytes that arrived before a deadline, a cancellation or a close are still delivered.
    deliver_stream_bytes();
    throw_if_stopped();
    if (e) throw io_failure(e);
  }
  guard_stream_parser([&] { dialect_.end_stream(); });
  trailers_fit();
  // PROTOCOL 5.15: the trailer's signature over every chunk, checked once the stream ended
  // (the items were delivered as they came; a failed check turns the call into a 421).
  const sha256_digest streamed = stream_hash_.finish();
  check_response_signature(res, &streamed);
  dialect_.merge_stream(context(), res);
}

/// A new connection to ep_ (replacing, and so closing, the current one): non-blocking (for
/// write_whole's write in place) and TCP_NODELAY, see start_connect().
net::awaitable<void> call_exchange::connect() {
  parser_.reset();
  conn_ = std::make_unique<pooled_connection>(st_->ex, read_buffer_max(st_->opt));
  st_->opened.fetch_add(1, std::memory_order_relaxed);
  beast::error_code ec = start_connect(*conn_, ep_);
  if (ec == net::error::in_progress || ec == net::error::would_block) {
    auto [wec] = co_await conn_->socket.async_wait(tcp::socket::wait_write, use_ec);
    ec = wec ? wec : connect_result(*conn_);
  }
  throw_if_stopped();
  if (ec) {
    if (st_->log) st_->log->debug("dendrite | connect {} failed: {}", host_, ec.message());
    throw call_failure{dendrite_errc::connect_failed, ec.message()};
  }
  beast::error_code ignored;
  if (st_->opt.external_ip.empty()) {
    auto local = conn_->socket.local_endpoint(ignored);
    if (!ignored) conn_->local_ip = local.address().to_string();
  }
}

/// Has the dialect encode the request (a fresh nonce each try) and writes it. Returns the
/// write's error.
net::awaitable<beast::error_code> call_exchange::send() {
  pooled_connection& c = *conn_;
  if (signer_) {
    // The signature is made on a pool thread while this strand goes on with other calls; the
    // call resumes here, and a stop that came meanwhile ends it before anything is sent.
    if (const std::string_view message = dialect_.begin_signed_try(context(), c);
        !message.empty()) {
      signature_bytes sig;
      co_await signer_->async_sign(message, sig, net::use_awaitable);
      throw_if_stopped();
      dialect_.set_try_signature(sig);
    }
  }
  // The request id (what a response signature names) is kept in the connection's buffer, which
  // keeps its capacity from call to call.
  const std::string_view body = dialect_.encode_try(context(), c, c.request_id);
  if (st_->log && st_->log->should_log(spdlog::level::debug)) {
    st_->log->debug("dendrite | --> | {} B | {} | {} | {} | 0 | Success",
                    c.head.size() + body.size(), name_, target_.hotkey, host_);
  }
  const beast::error_code ec =
      co_await write_whole(c.socket, {net::buffer(c.head), net::buffer(body)});
  // A written request is followed by the read of its answer, which looks at the clock when it
  // completes; a failed write looks now (the deadline outranks the write's error).
  if (ec)
    throw_if_stopped();
  else if (stop_)
    throw *stop_;
  co_return ec;
}

/// Reads responses on the connection until a final (non-1xx) one, each with a fresh parser:
/// of the final one, the head alone for a streaming call, the whole message otherwise. 1xx
/// interim responses (heads only) are skipped (RFC 9112 section 6.1), a bounded number of
/// times. Returns the read's error; throws when the interim responses pass the limits.
net::awaitable<beast::error_code> call_exchange::read_final_head() {
  for (;;) {
    new_parser();
    conn_->buffer.reserve(std::clamp(conn_->last_answer_bytes, read_room, read_buffer_slack));
    auto [ec, n] =
        dialect_.streaming()
            ? co_await http::async_read_header(conn_->socket, conn_->buffer, *parser_, use_ec)
            : co_await http::async_read(conn_->socket, conn_->buffer, *parser_, use_ec);
    if (!ec) conn_->last_answer_bytes = n;
    throw_if_stopped();
    if (ec || parser_->get().result_int() / 100 != 1) co_return ec;
    skip_interim(n);
  }
}

/// A 1xx interim response of `head_bytes` was read: count it (and its head, against the head
/// budget), or end the call when over a limit.
void call_exchange::skip_interim(std::size_t head_bytes) {
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
bool call_exchange::got_some_response() const {
  return interim_ > 0 || conn_->buffer.size() > 0 || (parser_ && parser_->got_some());
}

/// A fresh response parser with the limits. The head budget max_response_header_bytes is
/// shared by the heads of skipped interim responses, this head, its chunk extensions and its
/// trailers (on_chunk_header, trailers_fit).
void call_exchange::new_parser() {
  const std::size_t limit = st_->opt.max_response_header_bytes;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(
      std::min<std::size_t>(limit - std::min(limit, interim_bytes_), UINT32_MAX)));
  parser_->body_limit(st_->opt.max_response_body_bytes);
  parser_->on_chunk_header(chunk_cb_);
  head_fields_bytes_ = 0;
  meta_bytes_ = 0;
}

/// Checks the answer's bt-response-signature per options.verify_responses (PROTOCOL 5.15)
/// against the hotkey this call addressed and the request it sent.
/// Returns whether a signature verified over this request; throws response_unauthenticated
/// when one is present and wrong, or absent under `required` (the answer is then never
/// merged). An error answer signed over the empty identity (the axon's refusal of a request it
/// could not verify) is accepted, and returns false.
/// An answer to a request a session authenticated (PROTOCOL 13) is checked by its
/// bt-response-mac under the session's key instead (the dialect's check_session_mac), when it
/// carries one; a signature stands in for it otherwise.
/// `streamed`: a streamed answer's body hash (its chunks, hashed as they were delivered); the
/// signature is then a trailer field, and a session's MAC never stands in for it.
bool call_exchange::check_response_signature(const http_response& res,
                                             const sha256_digest* streamed) const {
  const response_verification mode = st_->opt.verify_responses;
  if (mode == response_verification::off) return false;
  session_mac mac = session_mac::not_used;
  if (!streamed) {
    mac = dialect_.check_session_mac(context(), *conn_, conn_->request_id, res);
    if (mac == session_mac::verified) return true;
  }
  const auto [first, last] = res.equal_range(response_signature::header);
  if (first == last) {
    if (mode == response_verification::required)
      throw call_failure{dendrite_errc::response_unauthenticated,
                         streamed ? "no bt-response-signature trailer after the stream"
                         : mac == session_mac::absent
                             ? "no bt-response-mac or bt-response-signature header"
                             : "no bt-response-signature header"};
    return false;
  }
  if (std::next(first) != last)
    throw call_failure{dendrite_errc::response_unauthenticated,
                       "more than one bt-response-signature header"};
  // The body's hash: a streamed answer's was taken as its chunks came in.
  const sha256_digest body_hash = streamed ? *streamed : sha256(res.body());
  const int status = static_cast<int>(res.result_int());
  std::string why =
      response_signature::verify(first->value(), target_.hotkey, st_->key.ss58_address(),
                                 conn_->request_id, status, body_hash, &st_->axon_keys);
  if (!why.empty()) {
    // An axon names no caller and no request in its answer to a request it could not verify
    // (PROTOCOL 5.15). Such an answer, signed over the empty identity, is accepted when its
    // status is an error (400 or above): it is that axon's authentic refusal, and accepting it
    // can only turn the call into an error, which a relay can do anyway by dropping the
    // connection. It is not bound to this request (a relay could replay any such refusal of
    // this axon), so it is not reported verified. A success must name this caller and request.
    if (!streamed && status >= 400 &&
        response_signature::verify(first->value(), target_.hotkey, {}, {}, status, body_hash,
                                   &st_->axon_keys)
            .empty())
      return false;
    if (!streamed && status >= 400) why += refusal_by_another_key(target_, status, res.body());
    throw call_failure{dendrite_errc::response_unauthenticated, std::move(why)};
  }
  return true;
}

/// Parser callback, once per chunk (the last one too), before its data. Counts the head
/// (approximately, as fields_bytes) once, then every extension, against the head budget; over
/// it, the parse stops with header_limit and meta_over_ picks the message.
void call_exchange::on_chunk_header(beast::string_view ext, beast::error_code& ec) {
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
void call_exchange::trailers_fit() {
  if (meta_bytes_ == 0) return;  // not chunked: no trailers
  const std::size_t all = fields_bytes(parser_->get());
  const std::size_t trailers = all > head_fields_bytes_ ? all - head_fields_bytes_ : 0;
  if (meta_bytes_ + trailers > st_->opt.max_response_header_bytes) throw meta_limit_failure();
}

call_failure call_exchange::head_limit_failure() const {
  return {dendrite_errc::response_too_large,
          "response head exceeds " + std::to_string(st_->opt.max_response_header_bytes) + " bytes"};
}

call_failure call_exchange::meta_limit_failure() const {
  return {dendrite_errc::response_too_large,
          "response head, chunk extensions and trailers exceed " +
              std::to_string(st_->opt.max_response_header_bytes) + " bytes"};
}

/// A failed socket operation (write or read of the response): the failure table of
/// docs/dendrite.md.
call_failure call_exchange::io_failure(beast::error_code ec) const {
  if (ec == http::error::body_limit)
    return {dendrite_errc::response_too_large,
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

/// Hands the body bytes parsed so far to the dialect (the type's parser, then the caller's
/// on_item) and clears them, so memory holds one read, not the stream.
void call_exchange::deliver_stream_bytes() {
  std::string& body = parser_->get().body();
  if (body.empty()) return;
  stream_hash_.update(body);
  guard_stream_parser([&] { dialect_.deliver(body); });
  body.clear();
}

/// The coroutine has ended: record the outcome, pool the connection only after a complete,
/// clean exchange (never after a failure, a stop or a partially read body), report.
void call_exchange::finish(std::exception_ptr ep, bool keep) {
  const call_context cx = context();
  // A completed exchange read the clock as it ended; a failed one may have ended at any stage.
  const steady::time_point now = ep ? steady::now() : ended_;
  if (ep) {
    keep = false;
    try {
      std::rethrow_exception(ep);
    } catch (const call_failure& f) {
      dialect_.record_failure(cx, f.code, f.detail);
    } catch (const std::exception& e) {
      // Not a failure of the exchange (e.g. a field the codec cannot encode); the call still
      // completes, as every call must.
      dialect_.record_failure(cx, dendrite_errc::malformed_response,
                              std::string("unexpected error: ") + e.what());
    } catch (...) {
      dialect_.record_failure(cx, dendrite_errc::malformed_response, "unexpected error");
    }
  }
  if (own_timer_) timer_.cancel();
  parser_.reset();
  if (conn_) {
    if (keep)
      st_->pool.put(ep_, std::move(conn_), now);
    else
      conn_.reset();
  }
  if (std::exchange(registered_, false)) st_->unregister_op(active_link_);
  st_->calls.fetch_add(1, std::memory_order_relaxed);
  try {
    const std::string status = std::to_string(dialect_.final_status());
    st_->calls_by.with({name_, status}).inc();
    st_->call_seconds.with({name_, status})
        .observe(std::chrono::duration<double>(now - begun_).count());
  } catch (...) {  // out of memory: the call still completes, uncounted
  }
  if (st_->log && st_->log->should_log(spdlog::level::debug)) {
    st_->log->debug("dendrite | <-- | {} | {} | {} | {} | {}", name_, target_.hotkey, host_,
                    dialect_.final_status(), dialect_.final_message());
  }
  auto done = std::move(on_done);
  on_done = nullptr;
  if (done) done();
}

}  // namespace bt::detail
