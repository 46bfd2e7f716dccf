// One client connection, the only owner of I/O in the axon: a coroutine on its own strand that
// reads requests one after another (keep-alive), runs each through the pipeline's stages
// (pipeline.hpp: pure functions that continue or refuse; the route's authentication scheme's,
// auth_scheme.hpp), reads the body between them, waits for the handler and writes the single
// response (built by response.hpp). session.cpp holds its I/O, session_serve.cpp one request's
// course. The request's handler side sees it only as a request_host (request_host.hpp). It reads
// and writes a byte_stream (byte_stream.hpp), so the same session runs over TCP (the accept loop)
// or in memory (memory_session.hpp: tests and the fuzzer).
#pragma once

#include "pipeline/pipeline.hpp"
#include "pipeline/response.hpp"
#include "state/axon_impl.hpp"
#include "transport/byte_stream.hpp"
#include "transport/net.hpp"
#include "transport/request_host.hpp"

#include <bt/synapse.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

namespace bt::detail {

struct auth_scheme;

class connection : public request_host {
 public:
  /// `stream`'s operations complete on `strand`; `peer_ip`/`peer_port` name the caller (the
  /// observed address that replaces the claimed one, PROTOCOL 5.3 step 6).
  connection(axon::impl& core, strand_t strand, std::unique_ptr<byte_stream> stream,
             std::string peer_ip, std::uint16_t peer_port);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// The session loop. Owns `self` (the coroutine frame keeps the connection alive; nothing else
  /// does). Returns when the peer closes, a limit or timeout is hit, or the axon stops; never
  /// throws (failures are logged). Runs on strand().
  static task<void> run(std::shared_ptr<connection> self);

  /// Between two sessions over the same stream, once run() has returned (so nothing of this
  /// connection is pending): returns every member to its state in a new connection, with the
  /// caller `peer_ip`:`peer_port`; the strings keep their capacity, not their contents, and the
  /// read buffer is freed (reads must come in the pieces they do on a new connection). The
  /// stream's owner resets the stream. Used by memory_session.hpp; a connection of the accept
  /// loop (registered with the axon) is never reused.
  void reuse(std::string peer_ip, std::uint16_t peer_port) noexcept;

  /// On strand(): stop after the current request; an idle connection closes now.
  void notify_stop();
  /// On strand(): the drain deadline passed. Cancels every pending operation and the request in
  /// progress (its handler is told through its cancellation flag); nothing more is written.
  void abort();
  /// The axon's accept loop registered this connection at `pos` (axon::impl's registry); the
  /// destructor unregisters it.
  void registered_at(std::list<std::weak_ptr<connection>>::iterator pos) noexcept {
    registry_pos_ = pos;
    registered_ = true;
  }

  /// Buffers larger than this are freed once used rather than kept for the next request.
  static constexpr std::size_t keep_body_bytes = 1024 * 1024;
  /// Idle buffers smaller than this are freed, not kept: small blocks come back from the
  /// allocator's free lists cheaply, and 10,000 idle connections must not hold one each.
  static constexpr std::size_t keep_idle_from_bytes = 16 * 1024;

 private:
  /// Serves one request whose head `p` was just read: the stages, the body, the handler, the
  /// answer. Writes exactly one response (or none if the connection dies or the axon aborts).
  /// Returns whether the connection may carry another request.
  task<bool> serve(request_parser& p);
  /// Stages J1-J5 of a plain JSON route (json_pipeline.cpp), once stage 1 matched it: the
  /// rejection to answer, if any; `alive` false when the peer vanished during the body.
  task<stage_result> admit_json(request_state& st, bool& alive);
  /// A scheme that signs the body (auth_scheme::verify_body), once body_ is read: the signature,
  /// then the replay record. The rejection to answer, if any.
  task<stage_result> authenticate_body(request_state& st, const auth_scheme& scheme);
  /// The replay store answers inline (or is skipped): auth_scheme::record, no suspension.
  bool replay_answers_inline() const noexcept;
  /// The scheme's replay record through a store that needs I/O, waited for on the strand.
  task<stage_result> await_replay(request_state& st, const auth_scheme& scheme);
  /// The answer's stats and access line.
  void account(const request_state& st, int status, std::string_view message, double elapsed);
  /// opts.proxy_protocol: checks that the peer is a trusted proxy, reads its PROXY header (under
  /// proxy_header_timeout and the size caps) and takes the caller's address from it. Bytes after
  /// the header stay in buffer_ for the first request. False: close (logged and counted).
  task<bool> read_proxy_header();
  /// Writes the answer to a refused request (`st` null: the head could not be parsed).
  task<bool> answer(const rejection& refusal, request_state* st);
  /// Reads the rest of the body under the body watchdog. Returns the rejection to answer, if any;
  /// `alive` false when the peer vanished (nothing to answer).
  task<stage_result> read_body(request_state& st, bool& alive);
  /// Waits until the handler finished or the deadline passed.
  task<void> wait_for_handler(request_state& st);
  /// The end of a streamed answer (PROTOCOL 7).
  task<bool> finish_stream(request_state& st);
  /// Reads once more into buffer_, with room for at least `at_least` bytes (capped at one
  /// read's worth) when the buffer allows. http::error::buffer_overflow when it is full.
  task<beast::error_code> read_more(std::size_t at_least = 0);
  /// Parses from buffer_, reading more as needed, until the head (`header_only`) or the whole
  /// message is complete or fails. Beast's EOF rules: end_of_stream before any byte,
  /// partial_message within a message.
  task<beast::error_code> read_until_done(request_parser& p, bool header_only);
  /// Writes out_.head + out_.body (one gathered write, due by `now` + write_timeout: `now` is the
  /// caller's clock read for the answer, handed along rather than read again). False on failure.
  task<bool> write_response(clock_type::time_point now);
  task<bool> write_continue();
  task<void> close_gracefully();
  /// The lingering close's read and discard (see linger_), in its own frame: its 4 KiB sink is
  /// then allocated only by connections that linger, not by every close.
  task<void> drain_before_close();
  /// Frees the per-request strings before the connection waits for its next request, so that
  /// an idle keep-alive connection holds only its stream, read buffer and coroutine frame (10,000
  /// idle connections: docs/performance.md "Axon memory"). Costs a few allocations per request.
  /// Large body buffers are kept instead while the axon's idle buffer budget allows
  /// (keep_or_free): freeing them made the next large body fault its pages in again.
  void release_request_memory() noexcept;
  /// Keeps `s`, cleared, for the next request when it is large and the axon's idle buffer budget
  /// (axon_options::idle_buffer_bytes) has room for it; frees it otherwise.
  void keep_or_free(std::string& s) noexcept;
  /// Gives back the budget of the buffers keep_or_free kept: they are in use again, or the
  /// connection ends.
  void return_kept_buffers() noexcept;

  std::list<std::weak_ptr<connection>>::iterator registry_pos_;
  bool registered_ = false;
  beast::flat_buffer buffer_;
  // Per request; released while the connection is idle (release_request_memory).
  synapse view_;                // header view of the current request
  std::string target_;          // request-target
  std::string body_;            // request body
  response_buffers out_;        // the answer
  connection_session session_;  // PROTOCOL 13: lives and dies with this connection
  bool idle_ = false;           // waiting for the first byte of the next request
  bool linger_ = false;         // unread input may remain: drain briefly before closing
  std::size_t kept_bytes_ = 0;  // capacity kept while idle, counted in core_.idle_buffer_bytes
  // Bytes read since the connection last went idle: the room the next idle read asks for, so
  // that a request like the last one is read in one system call (Beast's read size alone,
  // max(512, free capacity), took a 1.4 KB ping in three).
  std::size_t bytes_read_ = 0;

  struct body_watchdog;
};

/// A connection over an accepted TCP socket (Nagle off, the peer's address as IPv4 when it is
/// an IPv4-mapped IPv6 one).
std::shared_ptr<connection> make_tcp_connection(axon::impl& core, socket_t socket);

}  // namespace bt::detail
