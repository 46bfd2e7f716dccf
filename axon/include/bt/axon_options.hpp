// bt::axon_options: every limit and knob of the axon, with the threat or trade-off behind its
// default. Pass by value: `bt::axon ax(key, {.port = 0, .max_workers = 4});`
#pragma once

#include <bt/nonce_store.hpp>
#include <bt/option_table.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace spdlog {
class logger;
}

namespace bt {

struct axon_options {
  // ---- listening and identity ----

  /// Bind address. "::" (or "[::]", Bittensor's spelling) listens dual-stack: IPv6 plus
  /// IPv4-mapped addresses, falling back to 0.0.0.0 where IPv6 is unavailable. "0.0.0.0" listens
  /// on IPv4 only. Python binds 0.0.0.0 whatever it is told (PROTOCOL D19).
  std::string ip = "::";
  /// TCP port; 0 lets the system pick one (tests; info() reports the real port).
  std::uint16_t port = 8091;
  /// Address published in AxonInfo (what validators dial). Empty: the bind address. Never looked
  /// up on the internet (Python queries public "what is my IP" services).
  std::string external_ip{};
  /// Port published in AxonInfo; 0: the bound port (behind NAT or a proxy they differ).
  std::uint16_t external_port = 0;
  /// SS58 of the owning coldkey, shown in AxonInfo only (the axon never needs its secret).
  std::string coldkey{};
  /// SO_REUSEPORT on the listening socket: several processes (or axons) may listen on the same
  /// address and port, and the kernel spreads new connections between them. Off by default: with
  /// it a second, forgotten process on the port silently takes half the traffic.
  bool reuse_port = false;

  // ---- behind a load balancer (PROXY protocol, bt/proxy_protocol.hpp) ----

  /// Every connection must start with a PROXY protocol header (v1 or v2, as HAProxy's
  /// `send-proxy` / `send-proxy-v2` writes it), and the caller's address and port are taken from
  /// it: request_context, the TerminalInfo ip/port and IP-based policy see the real caller, not
  /// the balancer. A connection from a peer outside `trusted_proxies`, or whose header is missing,
  /// malformed, too large or late, is closed before any request is read (logged at debug, counted
  /// by reason). Off: nothing is read ahead and nothing changes.
  bool proxy_protocol = false;
  /// Peers allowed to send the header, as CIDR blocks ("127.0.0.1/32", "10.0.0.0/8",
  /// "2001:db8::/32"; a bare address is one host). The axon constructor throws
  /// std::invalid_argument naming a malformed entry, and start() refuses proxy_protocol with an
  /// empty list (it would close every connection).
  std::vector<std::string> trusted_proxies{};
  /// From accepting a connection to the end of its PROXY header. A balancer writes the header
  /// with its first packet, so this is short: a peer that stalls instead is cut off early.
  std::chrono::milliseconds proxy_header_timeout{3'000};
  /// Cap on a version 2 header (16 fixed bytes + addresses + TLVs); version 1 is 107 bytes by
  /// specification. Larger headers are refused.
  std::size_t proxy_max_header_bytes = 4096;

  // ---- threads and queueing ----

  /// Threads running the network (accept, parse, verify, respond). 0: hardware threads.
  /// Signature checks run here, so more threads mean more verifications per second.
  std::size_t io_threads = 0;
  /// Signed requests waiting on one network thread at the same time have their sr25519
  /// signatures decided together, up to this many by one batch equation (each still gets its
  /// own verdict; a forged one fails alone). A request with nothing else waiting is verified
  /// alone at once. 1: every signature verified alone as it arrives (no batching). At least 1.
  std::size_t verify_batch_max = 64;
  /// Threads running plain (non-coroutine) forward functions, so a slow handler never blocks
  /// the network. Python's axon.max_workers default; raise it for blocking handlers.
  std::size_t max_workers = 10;
  /// Requests admitted beyond the ones running on a worker: plain handlers waiting for a worker,
  /// and coroutine handlers while they run (they run on the I/O threads, so they need a bound of
  /// their own). A request is admitted once its body has arrived. When full the axon answers 503
  /// with Retry-After instead of queueing without bound (Python's executor queue is unbounded and
  /// silently drops items after 12 s, D15).
  std::size_t max_queued_requests = 1024;

  // ---- limits (each answers a way a client could exhaust the server) ----

  /// Request line + headers. Python requests carry about 1.5 KiB (placeholders keep them small);
  /// larger heads are answered 431 and the connection closed. Beast's default is 8 KiB.
  std::uint32_t max_header_bytes = 32 * 1024;
  /// Request body. Judged from Content-Length before reading (413 and close, nothing read) and
  /// enforced while reading chunked bodies. 64 MiB fits any realistic synapse.
  std::uint64_t max_body_bytes = 64ull * 1024 * 1024;
  /// Open connections. Beyond it new connections are accepted and closed at once (the client
  /// sees a disconnect, which a Python dendrite reports as 503). bt-axon raises its file
  /// descriptor limit to fit.
  std::size_t max_connections = 10'000;
  /// Body buffers (request and response, each 16 KiB to 1 MiB) that idle keep-alive connections
  /// keep for their next request, in total over the axon. A kept buffer takes the next large body
  /// without allocating; a freed one goes back to the allocator, which returns it to the kernel,
  /// and the next body faults its pages in again (docs/performance.md "Payloads"). Beyond the
  /// bound connections free their buffers while idle, so idle memory stays predictable however
  /// many connections there are (docs/performance.md "Axon memory"). 0: never keep.
  std::size_t idle_buffer_bytes = 8 * 1024 * 1024;
  /// From the first byte of a request to the end of its headers, and from accepting a connection
  /// to its first byte: a client dripping bytes (slowloris) is cut off after this.
  std::chrono::milliseconds header_timeout{10'000};
  /// Keep-alive: how long a connection may sit idle between requests. Above aiohttp's 15 s
  /// keep-alive so that the client, not the server, closes idle connections (a server closing
  /// first races with the client's next request; uvicorn's 5 s does).
  std::chrono::milliseconds idle_timeout{30'000};
  /// Writing one response. A client that stops reading is disconnected after this.
  std::chrono::milliseconds write_timeout{10'000};
  /// A request body is due this long after its head, plus one second per `body_min_rate` bytes
  /// received: a client that stalls or trickles its body is answered 408 and closed as soon as
  /// it falls behind, whatever its request's timeout. (It holds no queue slot while it sends:
  /// slots are taken once the body is complete.)
  std::chrono::milliseconds body_timeout{10'000};
  /// Bytes per second a body must keep up after `body_timeout` (see there). 64 KiB/s: a 64 MiB
  /// body may take 17 minutes, where the request's deadline applies first.
  std::uint64_t body_min_rate = 64 * 1024;
  /// Upper bound on the time a request may hold the server, whatever its `timeout` header says.
  /// The request's deadline is min(timeout, this) after its headers arrived; a timeout of 0 or
  /// above this bound means this bound.
  std::chrono::milliseconds max_request_timeout{120'000};

  // ---- verification ----

  /// How far in the future a nonce may be (clock skew between validator and miner). Python has no
  /// bound, so a far-future nonce blocks its endpoint forever (D3).
  std::chrono::milliseconds nonce_future_skew{30'000};
  /// Cap on the request timeout used to widen the freshness window (D2: an attacker replaying a
  /// request can raise its unsigned timeout header).
  std::chrono::milliseconds nonce_max_timeout{60'000};
  /// Where accepted nonces are remembered. Null: a memory_nonce_store with default options
  /// (the anti-replay window per endpoint; Python >= 7.2's rule is
  /// nonce_rule::strictly_increasing).
  std::shared_ptr<nonce_store> nonces{};
  /// Epistula v2 requests (plain routes, PROTOCOL 12): how old an Epistula-Timestamp may be. The
  /// replay store remembers each signer's uuid this long after its timestamp, so the window also
  /// bounds that memory (one record per request; memory_nonce_store's per-hotkey quota then
  /// caps one signer at about max_entries_per_hotkey requests per window).
  std::chrono::milliseconds epistula_past_window{8'000};
  /// How far ahead of this axon's clock an Epistula-Timestamp may be (clock skew). Both windows
  /// must be 0 to 24 hours (start() fails with std::errc::invalid_argument otherwise).
  std::chrono::milliseconds epistula_future_window{2'000};
  /// Refuse an Epistula request without Epistula-Signed-For (the convention makes it optional;
  /// a request signed for no one could be replayed against every miner within the window, so
  /// this axon requires it unless told otherwise). A present Signed-For must always be ours.
  bool epistula_require_signed_for = true;
  /// btauth/1 requests (plain routes that accept it, PROTOCOL 14): how old an X-Bittensor-Nonce
  /// may be. The replay store remembers each sender's nonce this long after it, so the window
  /// also bounds that memory. A route may override it (json_route_options::btauth_max_age).
  std::chrono::milliseconds btauth_max_age{10'000};
  /// How far ahead of this axon's clock an X-Bittensor-Nonce may be (clock skew). Both windows
  /// must be 0 to 24 hours (start() fails with std::errc::invalid_argument otherwise).
  std::chrono::milliseconds btauth_allowed_skew{2'000};
  /// Refuse a btauth/1 request without X-Bittensor-Receiver (401 WrongReceiver): an unbound
  /// request could be replayed against every server within the window. A present receiver must
  /// always be this axon's hotkey.
  bool btauth_require_receiver = true;
  /// Sign every complete answer (success or error, synapse or plain route; a stream in a trailer
  /// over all its chunks) with the axon's hotkey in a bt-response-signature field (PROTOCOL 5.15),
  /// so that a validator can tell it comes unaltered from this axon. One sr25519 signature per
  /// answer (docs/performance.md); Python dendrites ignore the header. Needs the hotkey's secret
  /// (start() fails without it).
  bool sign_responses = true;
  /// Sessions between our own ends (PROTOCOL 13): answer a dendrite's bt-session-offer with a
  /// signed bt-session-accept, then take that connection's later requests with an HMAC instead
  /// of a signature, and answer them with a bt-response-mac instead of a signature. Off: the
  /// offer is ignored (a Python axon's behaviour) and a request carrying only a session MAC is
  /// refused 401 as unsigned. Needs the hotkey's secret (start() fails without it).
  bool accept_sessions = false;
  /// A session's bounds, announced in the accept: the requests it may carry (the opening one
  /// included; the last is answered with `Connection: close`) and its lifetime in seconds.
  /// Each must be at least 1, the lifetime at most 31,622,400 s (366 days); start() fails with
  /// std::errc::invalid_argument otherwise.
  std::uint64_t session_max_requests = 100'000;
  std::uint64_t session_max_seconds = 3600;
  /// Sign error responses with the axon's hotkey (PROTOCOL 5.13). Costs one signature per error;
  /// no reference client checks it.
  bool sign_error_responses = true;
  /// List the registered synapse names in 404 messages, as Python does (D24 calls it a leak).
  bool list_synapses_on_404 = true;
  /// Benchmarks only: skip signature and nonce checks (handlers see `verified == false`).
  /// start() refuses it unless the bind address is loopback, and it is logged loudly.
  bool insecure_skip_verification = false;

  // ---- admin listener (metrics and health) ----

  /// "HOST:PORT" (numeric address; "[::1]:9100" for IPv6; port 0: the system picks, see
  /// axon::admin_port()) of a second, small HTTP server for operators: GET /metrics (Prometheus
  /// text format), /healthz and /readyz. Empty (the default): off. No fixed default port, so two
  /// axons on one host never collide. Bind it to loopback or a private network: it is not
  /// authenticated. start() fails (std::errc::invalid_argument) on a malformed value.
  std::string admin_listen{};
  /// An admin request must arrive whole within this, and its answer be taken within this again
  /// (408 / cut off): a slow client holds an admin connection for a bounded time.
  std::chrono::milliseconds admin_timeout{5'000};
  /// Request line + headers of an admin request; larger ones are answered 431.
  std::uint32_t admin_max_header_bytes = 8 * 1024;
  /// Admin connections open at once; more are closed at accept.
  std::size_t admin_max_connections = 64;

  // ---- shutdown and logging ----

  /// stop(): how long in-flight requests may take to finish before connections are cut.
  std::chrono::milliseconds drain_timeout{10'000};
  /// Where the axon logs: one access line per request at debug, server-side failures at warn.
  /// Null: nothing is logged. Secrets are never logged.
  std::shared_ptr<spdlog::logger> logger{};

  /// Every field above with one line of help and its bt-axon flag (bt/option_table.hpp): the one
  /// list bt-axon's --axon.* flags, the Python Axon's keyword arguments and the docs test walk.
  /// `nonces` and `logger` are objects, not values: front ends build them from flags of their own.
  static constexpr auto option_table();

  /// Preset for tests and in-process benchmarks: 127.0.0.1, a free port, two I/O threads, two
  /// workers, and short header/idle timeouts.
  static axon_options loopback() {
    axon_options o;
    o.ip = "127.0.0.1";
    o.port = 0;
    o.io_threads = 2;
    o.max_workers = 2;
    o.header_timeout = std::chrono::milliseconds(5'000);
    o.idle_timeout = std::chrono::milliseconds(10'000);
    o.drain_timeout = std::chrono::milliseconds(5'000);
    return o;
  }
};

constexpr auto axon_options::option_table() {
  using o = axon_options;
  using u = option_unit;
  constexpr double s = 3600;                              // a duration flag's upper bound, seconds
  constexpr double big = double(std::uint64_t{1} << 40);  // sizes and rates
  return std::tuple{
      option_field{"ip", &o::ip, "Bind address ([::] dual-stack, 0.0.0.0 IPv4 only)", {"axon.ip"}},
      option_field{
          "port", &o::port, "TCP port (0: any free port)", {"axon.port", u::plain, 0, 65535}},
      option_field{"external_ip",
                   &o::external_ip,
                   "Address published in AxonInfo: an IP literal, never resolved (validators "
                   "connect to it without DNS; a name resolved here could give a private "
                   "address) (default: the bind address)",
                   {"axon.external_ip"}},
      option_field{"external_port",
                   &o::external_port,
                   "Port published in AxonInfo (default: the bound port)",
                   {"axon.external_port", u::plain, 0, 65535}},
      option_field{"coldkey", &o::coldkey, "SS58 of the owning coldkey, shown in AxonInfo"},
      option_field{"reuse_port",
                   &o::reuse_port,
                   "SO_REUSEPORT: several processes may listen on the same port (the kernel "
                   "spreads connections)",
                   {"axon.reuse_port", u::flag}},
      option_field{"proxy_protocol",
                   &o::proxy_protocol,
                   "Every connection starts with a PROXY protocol v1/v2 header (HAProxy "
                   "send-proxy-v2) from a trusted proxy; the caller's address is taken from it",
                   {"axon.proxy_protocol", u::flag}},
      option_field{"trusted_proxies",
                   &o::trusted_proxies,
                   "CIDR[,CIDR...]: peers allowed to send the PROXY header (with "
                   "--axon.proxy_protocol)",
                   {"axon.trusted_proxies"}},
      option_field{"proxy_header_timeout",
                   &o::proxy_header_timeout,
                   "From accepting a connection to the end of its PROXY header",
                   {"axon.proxy_header_timeout", u::seconds, 0.01, s}},
      option_field{"proxy_max_header_bytes",
                   &o::proxy_max_header_bytes,
                   "Cap on a PROXY v2 header with its TLVs; larger: refused",
                   {"axon.proxy_max_header_bytes", u::plain, 256, 65551}},
      option_field{"io_threads",
                   &o::io_threads,
                   "Network threads (0: hardware threads)",
                   {"axon.io_threads", u::plain, 0, 1024}},
      option_field{"verify_batch_max",
                   &o::verify_batch_max,
                   "Most request signatures one batch equation decides when several wait on a "
                   "network thread at once (1: each verified alone, no batching)",
                   {"axon.verify_batch_max", u::plain, 1, 4096}},
      option_field{"max_workers",
                   &o::max_workers,
                   "Worker threads for forward functions",
                   {"axon.max_workers", u::plain, 1, 4096}},
      option_field{"max_queued_requests",
                   &o::max_queued_requests,
                   "Admitted requests waiting beyond the running ones; full: 503",
                   {"axon.max_queued_requests", u::plain, 1, 1 << 24}},
      option_field{"max_header_bytes",
                   &o::max_header_bytes,
                   "Request line + headers; larger: 431",
                   {"axon.max_header_bytes", u::plain, 1024, 1 << 24}},
      option_field{"max_body_bytes",
                   &o::max_body_bytes,
                   "Request body; larger: 413",
                   {"axon.max_body_bytes", u::plain, 1, big}},
      option_field{"max_connections",
                   &o::max_connections,
                   "Open connections; beyond: accepted and closed at once",
                   {"axon.max_connections", u::plain, 1, 1 << 24}},
      option_field{"idle_buffer_bytes",
                   &o::idle_buffer_bytes,
                   "Body buffers idle keep-alive connections keep for their next request, in "
                   "total over the axon; 0: never keep",
                   {"axon.idle_buffer_bytes", u::plain, 0, double(std::uint64_t{1} << 34)}},
      option_field{"header_timeout",
                   &o::header_timeout,
                   "From a connection's (or request's) first byte to the end of its headers",
                   {"axon.header_timeout", u::seconds, 0.01, s}},
      option_field{"idle_timeout",
                   &o::idle_timeout,
                   "Keep-alive: how long a connection may sit idle between requests",
                   {"axon.idle_timeout", u::seconds, 0.01, s}},
      option_field{"write_timeout",
                   &o::write_timeout,
                   "Writing one response; a client that stops reading is disconnected after it",
                   {"axon.write_timeout", u::seconds, 0.01, s}},
      option_field{"body_timeout",
                   &o::body_timeout,
                   "How long a request body may take after its head, plus 1 s per body_min_rate "
                   "bytes received; later: 408 and close",
                   {"axon.body_timeout", u::seconds, 0.01, s}},
      option_field{"body_min_rate",
                   &o::body_min_rate,
                   "Bytes per second a request body must keep up after body_timeout",
                   {"axon.body_min_rate", u::plain, 1, big}},
      option_field{"max_request_timeout",
                   &o::max_request_timeout,
                   "Cap on a request's own timeout as its handler deadline",
                   {"axon.max_request_timeout", u::seconds, 0.01, 86400}},
      option_field{"nonce_future_skew",
                   &o::nonce_future_skew,
                   "How far in the future a request's nonce may be (clock skew)",
                   {"axon.nonce_future_skew", u::seconds, 0, s}},
      option_field{"nonce_max_timeout",
                   &o::nonce_max_timeout,
                   "Cap on the request timeout that widens the nonce freshness window",
                   {"axon.nonce_max_timeout", u::seconds, 0, s}},
      option_field{"nonces", &o::nonces, "Where accepted nonces are remembered (an object)"},
      option_field{"epistula_past_window",
                   &o::epistula_past_window,
                   "Epistula requests: how long an Epistula-Timestamp may lie in the past; "
                   "older: 401",
                   {"axon.epistula_past_ms", u::milliseconds, 0, 86'400'000}},
      option_field{"epistula_future_window",
                   &o::epistula_future_window,
                   "Epistula requests: how far an Epistula-Timestamp may lie ahead of this "
                   "axon's clock; further: 401",
                   {"axon.epistula_future_ms", u::milliseconds, 0, 86'400'000}},
      option_field{"epistula_require_signed_for",
                   &o::epistula_require_signed_for,
                   "on: refuse an Epistula request without Epistula-Signed-For (400); off: "
                   "accept it (a present one must still be this axon's hotkey)",
                   {"axon.epistula_require_signed_for", u::on_off}},
      option_field{"btauth_max_age",
                   &o::btauth_max_age,
                   "btauth/1 requests: how long an X-Bittensor-Nonce may lie in the past; older: "
                   "401 StaleRequest",
                   {"axon.btauth_max_age_ms", u::milliseconds, 0, 86'400'000}},
      option_field{"btauth_allowed_skew",
                   &o::btauth_allowed_skew,
                   "btauth/1 requests: how far an X-Bittensor-Nonce may lie ahead of this axon's "
                   "clock; further: 401 StaleRequest",
                   {"axon.btauth_allowed_skew_ms", u::milliseconds, 0, 86'400'000}},
      option_field{"btauth_require_receiver",
                   &o::btauth_require_receiver,
                   "on: refuse a btauth/1 request without X-Bittensor-Receiver (401 "
                   "WrongReceiver); off: accept it (a present one must still be this axon's "
                   "hotkey)",
                   {"axon.btauth_require_receiver", u::on_off}},
      option_field{"sign_responses",
                   &o::sign_responses,
                   "on: sign every answer (bt-response-signature, PROTOCOL 5.15); off: answer "
                   "unsigned, as a Python axon does",
                   {"axon.sign_responses", u::on_off}},
      option_field{"accept_sessions",
                   &o::accept_sessions,
                   "on: answer a dendrite's bt-session-offer and then take MAC'd requests on "
                   "that connection (PROTOCOL 13); off: ignore offers, as a Python axon does",
                   {"axon.sessions", u::on_off}},
      option_field{"session_max_requests",
                   &o::session_max_requests,
                   "Requests one session may carry, the opening one included; the last is "
                   "answered with Connection: close",
                   {"axon.session_max_requests", u::plain, 1, big}},
      option_field{"session_max_seconds",
                   &o::session_max_seconds,
                   "Seconds a session lasts from its accept",
                   {"axon.session_max_seconds", u::plain, 1, 366 * 86400}},
      option_field{"sign_error_responses",
                   &o::sign_error_responses,
                   "on: sign error answers to verified requests (PROTOCOL 5.13); off: unsigned",
                   {"axon.sign_error_responses", u::on_off}},
      option_field{"list_synapses_on_404",
                   &o::list_synapses_on_404,
                   "on: name the registered synapses in 404 messages, as Python does; off: not",
                   {"axon.list_synapses_on_404", u::on_off}},
      option_field{"insecure_skip_verification",
                   &o::insecure_skip_verification,
                   "Benchmarks only: no signature or nonce checks (refused unless --axon.ip is "
                   "loopback)",
                   {"insecure-skip-verification", u::flag}},
      option_field{"admin_listen",
                   &o::admin_listen,
                   "HOST:PORT of the admin listener (GET /metrics, /healthz, /readyz); off unless "
                   "given. Bind it to loopback or a private network: it is not authenticated",
                   {"admin.listen"}},
      option_field{"admin_timeout",
                   &o::admin_timeout,
                   "An admin request must arrive, and its answer be taken, within this",
                   {"admin.timeout", u::seconds, 0.01, s}},
      option_field{"admin_max_header_bytes",
                   &o::admin_max_header_bytes,
                   "Request line + headers of an admin request; larger: 431",
                   {"admin.max_header_bytes", u::plain, 1024, 1 << 20}},
      option_field{"admin_max_connections",
                   &o::admin_max_connections,
                   "Admin connections open at once; more are closed at accept",
                   {"admin.max_connections", u::plain, 1, 1 << 16}},
      option_field{"drain_timeout",
                   &o::drain_timeout,
                   "On SIGINT/SIGTERM: how long in-flight requests may take to finish",
                   {"axon.drain_timeout", u::seconds, 0, s}},
      option_field{"logger", &o::logger, "Where the axon logs (an object)"},
  };
}

}  // namespace bt
