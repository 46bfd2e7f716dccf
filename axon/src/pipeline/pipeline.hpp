// The request pipeline as stages: each is a function of one request's state (request_state)
// that either lets the request continue (an empty stage_result) or refuses it with a rejection
// naming an axon_errc (axon_errc.hpp: the one table of statuses and texts). Stages do no I/O:
// the connection (session.cpp) reads the head and the body, calls the stages in order, waits for
// the handler and writes the one answer. See the top of pipeline.cpp for the stages and order.
#pragma once

#include "auth/conn_session.hpp"
#include "auth/epistula.hpp"
#include "errors/axon_errc.hpp"
#include "ops/axon_metrics.hpp"
#include "pipeline/response.hpp"
#include "state/verify_batcher.hpp"
#include "state/worker_pool.hpp"
#include "transport/net.hpp"
#include "transport/request_parser.hpp"
#include "transport/stream.hpp"

#include <bt/axon.hpp>
#include <bt/btauth.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace bt::detail {

class request_host;
struct route;

/// A request once it passed verification: owns the header view, the body synapse and the
/// caller's context, which handlers see by reference. Shared by the session and whichever
/// executes the handler (a worker thread or a coroutine), because a handler may outlive the
/// request's answer (after a 408). Holds no I/O objects, so it may die on any thread.
struct request_job final : pool_job, std::enable_shared_from_this<request_job> {
  const route* r = nullptr;
  synapse headers;                     // header view; ctx's strings point into it
  synapse_ptr body{nullptr, nullptr};  // the body synapse handed to the handler
  body_hash_memo request_hash;         // of `body` as checked; the response reuses it
  request_context ctx;
  std::atomic<bool> cancel{false};  // ctx.cancel_flag
  std::exception_ptr error;         // what the handler threw
  bool done = false;                // strand only: the handler finished
  std::weak_ptr<request_host> conn;
  net::cancellation_signal coro_cancel;  // stops a coroutine handler at the deadline
  std::shared_ptr<stream_state> stream;  // streaming routes only (PROTOCOL 7)
  stream_writer writer;                  // handed to a streaming handler; shares `stream`
  worker_pool* slot = nullptr;           // a queue slot this request holds (released at the end)
  axon_metrics* stats = nullptr;         // worker-pool jobs: queue wait and handler time
  std::chrono::steady_clock::time_point queued_at{};  // submitted to the pool
  // Plain JSON routes only (json_pipeline.cpp); ctx's strings point into the first two.
  std::string signer;              // Epistula-Signed-By or X-Bittensor-Hotkey
  std::string request_uuid;        // Epistula-Uuid (btauth/1 has none)
  std::int64_t replay_expiry = 0;  // when the replay store may forget the record (ns)
  std::string raw_body;            // the body bytes the handler gets
  json parsed;                     // the body parsed (null when empty)
  json_reply reply;                // what the handler answered

  request_job() = default;
  request_job(const request_job&) = delete;
  request_job& operator=(const request_job&) = delete;
  ~request_job() override {
    if (slot) slot->release();
  }

  void run() noexcept override;
  void complete(std::shared_ptr<pool_job> self) noexcept override;
  /// On the connection's strand: the handler finished; wake the session if it waits for us.
  void finish_on_strand(request_host& c) noexcept;
};

/// What to answer when a stage refuses the request.
struct rejection {
  axon_errc code;
  int status;           // the table's (handler_error: the forward_error's own)
  std::string message;  // the table's text with the details
  bool close;           // the connection closes after the answer
  int retry_after_s;    // the table's
};

/// Every rejection before the body was read closes the connection (`rejection::close`): an
/// unread body would otherwise have to be drained without bound, and a request refused on its
/// head says nothing good about what else the client has pipelined.
constexpr bool close_early = true;

/// The rejection `e`, with the table's status and text (its `{}` filled with `details`).
template <class... Args>
rejection reject(axon_errc e, bool close, Args&&... details) {
  const errc_entry& row = entry_of(e);
  return {e, row.status, errc_message(e, std::forward<Args>(details)...), close, row.retry_after_s};
}

using stage_result = std::optional<rejection>;
using clock_type = std::chrono::steady_clock;

/// One request as the stages see it. Filled in as the stages pass: `r` by check_request_line,
/// `timeout_s`, `deadline` and `job` by parse_header_synapse, and so on.
struct request_state {
  request_state(axon::impl& c, request_parser& p, synapse& v, std::string_view t,
                std::string_view ip, std::uint16_t port)
      : core(c), parser(p), view(v), target(t), peer_ip(ip), peer_port(port) {}

  axon::impl& core;
  request_parser& parser;  // the head, as read
  synapse& view;           // its header synapse (moved into job->headers by stage 2)
  const std::string_view target;
  const std::string_view peer_ip;
  const std::uint16_t peer_port;
  const clock_type::time_point t0 = clock_type::now();  // the head arrived
  const bool body_pending = !parser.is_done();
  const bool keep_alive = parser.keep_alive();  // what the client asked for

  const route* r = nullptr;
  double timeout_s = 0;               // after the cap
  clock_type::time_point deadline{};  // t0 + timeout_s (D16)
  std::shared_ptr<request_job> job;   // from stage 2 on
  bool verified = false;              // passed stage 3 (D29: error answers signed only then)
  verified_identity identity;  // what answers name (PROTOCOL 5.15): set when a scheme verified
  double priority = 0;         // the route's priority function (D15)
  bool needs_slot = false;     // takes a slot of the bounded queue
  std::size_t body_bytes = 0;  // for the access line
  epistula_claim claim;        // Epistula requests: what the Epistula head decoded
  btauth::claim btauth_claim;  // btauth/1 requests: what the X-Bittensor-* head decoded
  bool epistula = false;       // a synapse route's request under the Epistula scheme
  request_session session;     // its connection's session (PROTOCOL 13)
  // Stage 3 with batch verification (verify_batch_max > 1): verify() checked everything but the
  // sr25519 verify itself and left it here; the session submits it to its loop's
  // verify_batcher and answers the verdict with signature_outcome().
  bool signature_pending = false;
  signature_check pending_signature;
  clock_type::time_point verify_t0{};  // stage 3 began (its duration includes the batch wait)
};

// ---- the stages, in order (pipeline.cpp) ----

/// 1. Method, Host, exact route (D24).
stage_result check_request_line(request_state& st);
// 1b. A synapse route's authentication scheme (route_options::auth; PROTOCOL 12.4) is chosen
// by choose_scheme (auth_scheme.hpp), which also says where its stages run.
/// 2. The header synapse: parse errors, computed_body_hash, timeout; creates the job.
stage_result parse_header_synapse(request_state& st);
/// 3. Signature, freshness and the route's verify function. `scratch`: the signed message.
/// With batch verification on (axon_options::verify_batch_max > 1) it stops before the sr25519
/// verify, leaving st.signature_pending set; the rest of stage 3 is then signature_outcome().
stage_result verify(request_state& st, std::string& scratch);
/// 3 after the batcher decided st.pending_signature (`valid`): a mismatch answers verify()'s
/// 401 text; a valid one finishes stage 3 as verify() would have.
stage_result signature_outcome(request_state& st, bool valid);
/// 3 for a request that a connection's session carries (the session scheme, PROTOCOL 13): its
/// MAC (verify_session_request) in place of the signature, then the same checks as verify().
stage_result verify_session(request_state& st, std::string& scratch);
/// The session scheme's detection: the head carries a bt-session MAC and sessions are on. With
/// sessions off or verification skipped the session fields are ignored, and the bittensor
/// scheme takes the request (a MAC without a signature is then refused as unsigned).
bool carries_session_mac(const request_state& st) noexcept;
/// 3, a request with a bt-session field (opts.accept_sessions; conn_session.cpp): the session
/// named is this connection's, within its bounds, the request's fields canonical and fresh (as
/// for a signature), its hotkeys the session's and this axon's, and its MAC valid. Counts it.
stage_result verify_session_request(request_state& st, std::string& scratch);
/// 3, a signed request with a bt-session-offer (opts.accept_sessions): none yet on this
/// connection, the offer's signature valid; the accept is kept for the answer.
stage_result verify_session_offer(request_state& st);
/// The answer's authentication (in place of sign_response), over `st->identity` (PROTOCOL
/// 5.15: the identity the request was verified under; none when nothing verified it): a session
/// request's answer gets a bt-response-mac; any other is signed as sign_response does, and an
/// answer to a request whose offer verified and whose blacklist passed also carries the
/// bt-session-accept, the connection taking the session at that moment. `st` null: the request
/// could not be read, and the answer is not signed (there is no request to name).
void authenticate_answer(const axon::impl& core, response_buffers& out, int status,
                         request_state* st);
/// 3b. The route's own verify function (part of 3; on Epistula's path after J2-J3).
stage_result check_route_verify(request_state& st);
/// 4. Blacklist on the verified caller (D4).
stage_result check_blacklist(request_state& st);
/// 5. The nonce store's record (after the blacklist: refused callers cannot fill it), for a
/// store that answers inline (nonce_store::answers_inline(); the session checks). A store that
/// needs I/O is asked through start_record_nonce() while the session waits, and its verdict
/// answered by nonce_outcome().
stage_result record_nonce(request_state& st);
/// 5, asynchronous: starts the store's async_record for the request; `done` is called once.
void start_record_nonce(const request_state& st, nonce_completion done) noexcept;
/// 5: the stage's answer for a verdict (accepted: none).
stage_result nonce_outcome(nonce_verdict v);
/// A replay store's verdict as a scheme answers it (accepted: none): `stale` and `replayed`
/// are the scheme's own codes; a full or unavailable store is answered alike by every scheme.
stage_result replay_outcome(nonce_verdict v, axon_errc stale, axon_errc replayed, bool close);
/// 6. Priority, and a look at the queue (nothing taken yet).
stage_result prioritize(request_state& st);
/// 7a. The declared Content-Length against max_body_bytes, before a byte of the body is read.
stage_result check_declared_length(request_state& st);
/// 7b. How the body read ended, when it did not complete (`ec` set or `late`): a rejection, or
/// none when the peer vanished (nothing to answer).
enum class body_lateness { on_time, too_slow, past_deadline };
stage_result body_read_failure(const request_state& st, beast::error_code ec, body_lateness late,
                               std::size_t bytes_read);
/// 7c. Admission proper: the slot is taken now that the body is here.
stage_result admit(request_state& st);
/// 8. The body synapse: parse, caller match (D5), hash; status fields cleared (D23).
stage_result check_body(request_state& st, std::string& body);
/// 9. Starts the handler (inline, coroutine on `c`'s strand, or the worker pool). A streaming
/// route gets its stream_state, which writes through `c` (the connection's narrow face).
stage_result start_forward(request_state& st, request_host& c);
/// 9b. Once the handler finished or the deadline passed (the connection waited): the rejection
/// to answer (408, 500, a forward_error's), or none for the success answer. Tells a handler
/// still running to stop. `close`: the answer closes the connection.
stage_result forward_outcome(request_state& st, bool close);

// ---- a plain JSON route's stages, in order (json_pipeline.cpp; PROTOCOL 12) ----

/// J1. The job and the deadline; the route's method. Then the route's scheme (auth_scheme.hpp's
/// choose_plain_scheme) checks its head, then 7a (check_declared_length) and the body read, as
/// for synapses.
stage_result check_json_head(request_state& st);
/// J1e. The Epistula head (version, timestamp window, Signed-By, Signed-For, uuid, the
/// signature's form), once check_json_head made the job: the Epistula scheme's head check.
stage_result check_epistula_request_head(request_state& st);
/// J1 for a synapse route's Epistula request: check_json_head and check_epistula_request_head,
/// then the header synapse as the blacklist and priority functions see it (its dendrite hotkey,
/// uuid and nonce are the Epistula head's, its address the observed peer's).
stage_result check_synapse_epistula_head(request_state& st);
/// J2. SHA-256 of the body and the sr25519 signature over the signed text. `scratch`: the text.
stage_result verify_epistula(request_state& st, std::string_view body, std::string& scratch);
/// J3. The replay store records (Signed-By, "epistula:" + uuid) until the timestamp leaves the
/// window: inline (stores that answer inline), or started here and answered by
/// epistula_outcome() (the session waits, as for synapse nonces).
stage_result record_epistula(request_state& st);
void start_record_epistula(const request_state& st, nonce_completion done) noexcept;
stage_result epistula_outcome(nonce_verdict v, bool close);
/// J4. Blacklist on the verified signer, priority and a queue slot (admit() follows).
stage_result check_json_policy(request_state& st);
/// J5. The body as JSON (bt::parse_json: depth-limited, no duplicate keys); moves the bytes
/// into the job for the handler. Then start_forward() and forward_outcome() as for synapses.
stage_result parse_json_request(request_state& st, std::string& body);

/// The deadline passed (or the handler's result came too late to count): tells the handler to
/// stop (its cancellation flag, and a coroutine's cancellation while it still runs) and returns
/// the 408.
rejection cancel_at_deadline(request_state& st, bool close);

/// The rejection for what a forward function threw.
rejection forward_failure(axon::impl& core, const route& r, std::exception_ptr error, bool close);

/// One access line per request, at debug. The caller field is `verified_hotkey` (the identity
/// the request was verified under) or, when that is empty, "unverified" followed by what the
/// request claimed (`claimed_hotkey`, quoted and escaped), never a claim shown as the caller.
/// Every text a client chose (the claim, an unknown route's path inside `name`, the message) is
/// escaped so that it cannot add a field (" | ") or a line.
void log_access(const axon::impl& core, std::string_view peer_ip, std::uint16_t peer_port,
                std::size_t body_bytes, std::string_view name, std::string_view verified_hotkey,
                std::string_view claimed_hotkey, int status, std::string_view message,
                double seconds);

/// The access line's escaping, appended to `out`: '|', '\\', control characters and DEL
/// written as \xNN, and for a `claim` (shown between double quotes) '"' and every byte above 0x7f
/// too; at most `max_bytes` of `text`, then "...".
void append_log_text(std::string& out, std::string_view text, std::size_t max_bytes, bool claim);

/// The path of a request-target without its query (absolute-form served by its path).
std::string_view request_path(std::string_view target);

/// The seconds from `t0` to `t1`, and from `t0` to now (one clock read).
double seconds_between(clock_type::time_point t0, clock_type::time_point t1);
double seconds_since(clock_type::time_point t0);

}  // namespace bt::detail
