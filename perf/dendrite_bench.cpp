// Dendrite benchmarks (figures in docs/performance.md, "Dendrite"):
//
//  * BM_dendrite_sign_reference      one sr25519 signature of a request-sized message: the unit
//                                    the client overhead goal is stated in;
//  * BM_dendrite_client_overhead     everything the client does per call except the network:
//                                    preset + nonce + body hash + sign + JSON body + header block
//                                    + parsing a 5.11-shaped response with Beast + merge (D6);
//  * BM_dendrite_client_no_sign      the same minus the signature (a fixed fake), i.e. the "5 us"
//                                    part of the goal "overhead <= 1.2 x (sign + 5 us)";
//  * BM_dendrite_fanout_warm/N/S/T   forward() to N loopback endpoints that answer instantly (a
//    BM_dendrite_fanout_cold/N/S/T   raw Beast responder on its own thread, no verification),
//                                    over pooled keep-alive connections (warm) or new ones
//                                    (cold), with signing_threads = S (0: the default, 1: no
//                                    pool) and T I/O threads (0: one per core); CPU per axon as
//                                    counters, against one signature measured in the same run,
//                                    and against the floor below, measured between the
//                                    fan-outs (dendrite_over_floor_vs_sign: what the dendrite
//                                    adds to a bare client's round trip, in signatures);
//  * BM_bare_fanout_warm/N/T         the floor of those: a bare Beast client sending the same
//    BM_bare_fanout_cold/N/T         request bytes to the same responders (no signature, no
//                                    synapse), with T I/O threads: what any client pays per
//                                    axon for its round trip on this machine's TCP.
//
//   build-*/perf/bt-bench --benchmark_filter=dendrite
//
// Instruction counts (stable on a loaded machine; docs/performance.md): each of the four
// per-call benchmarks also runs with a fixed 200 iterations, e.g.
//   valgrind --tool=callgrind --toggle-collect='*BM_dendrite_client_overhead*'
//            build-*/perf/bt-bench --benchmark_filter='BM_dendrite_client_overhead/iterations:200'
// and the collected total / 200 is the count per call.
#include <bt/dendrite.hpp>
#include <bt/detail/dendrite_ops.hpp>  // the per-call codec (bt_dendrite_internal)

#include <bt/examples/dummy.hpp>
#include <bt/header_codec.hpp>
#include <bt/json_body.hpp>

#include <benchmark/benchmark.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using bt::examples::dummy;

const bt::keypair& bench_alice() {
  static const bt::keypair k = bt::keypair::from_uri("//Alice");
  return k;
}
const bt::keypair& bench_bob() {
  static const bt::keypair k = bt::keypair::from_uri("//Bob");
  return k;
}

bt::axon_info bench_target(std::uint16_t port = 8091) {
  bt::axon_info a;
  a.ip = "127.0.0.1";
  a.port = port;
  a.hotkey = bench_bob().ss58_address();
  return a;
}

/// Keys, descriptors and libsodium are set up before any benchmark runs, so that fixed-count runs
/// measured with callgrind do not include one-time initialisation.
[[maybe_unused]] const bool warmed_up = [] {
  bench_alice();
  bench_bob();
  bt::descriptor_of<dummy>();
  bt::detail::make_uuid1();
  return true;
}();

/// A response as our axon (and a Python axon, 5.11) sends it for a Dummy request.
std::string canned_response(const dummy& request) {
  dummy d = request;
  d.dummy_output = d.dummy_input * 2;
  d.axon.status_code = 200;
  d.axon.status_message = "Success";
  d.axon.process_time = 0.000123;
  std::string body;
  bt::write_json_body(bt::descriptor_of<dummy>(), d, body, bt::json_style::compact);
  std::string r =
      "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " +
      std::to_string(body.size()) +
      "\r\nname: Dummy\r\ntimeout: 12.0\r\nbt_header_axon_status_code: 200\r\n"
      "bt_header_axon_status_message: Success\r\nbt_header_axon_process_time: 0.000123\r\n"
      "bt_header_axon_ip: 127.0.0.1\r\nbt_header_axon_port: 8091\r\nbt_header_axon_hotkey: " +
      bench_bob().ss58_address() + "\r\nbt_header_dendrite_ip: 127.0.0.1\r\n" +
      "bt_header_dendrite_version: 10002000\r\nbt_header_dendrite_nonce: " +
      std::to_string(*request.dendrite.nonce) +
      "\r\nbt_header_dendrite_uuid: " + *request.dendrite.uuid +
      "\r\nbt_header_dendrite_hotkey: " + *request.dendrite.hotkey +
      "\r\nbt_header_dendrite_signature: " + *request.dendrite.signature +
      "\r\nbt_header_input_obj_dummy_input: MA==\r\nheader_size: 600\r\ntotal_size: 1400\r\n"
      "computed_body_hash: "
      "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a\r\n\r\n" +
      body;
  return r;
}

void BM_dendrite_sign_reference(benchmark::State& state) {
  const std::string msg = "1700000000123456789." + bench_alice().ss58_address() + "." +
                          bench_bob().ss58_address() +
                          ".5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a."
                          "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";
  for (auto _ : state) benchmark::DoNotOptimize(bench_alice().sign(msg));
}
BENCHMARK(BM_dendrite_sign_reference);
// Fixed count, for instruction counts: valgrind --tool=callgrind
// --toggle-collect='*BM_dendrite_sign_reference*'
BENCHMARK(BM_dendrite_sign_reference)->Iterations(200);

/// One call's client work; `sign` false replaces the key with a stub that is not called.
void client_call(benchmark::State& state, bool sign) {
  const bt::keypair& key = bench_alice();
  const std::string uuid = bt::detail::make_uuid1();
  const bt::detail::request_identity id{
      .key = &key, .hotkey = key.ss58_address(), .uuid = uuid, .version = bt::version_as_int};
  const bt::axon_info target = bench_target();
  const std::string host = bt::detail::host_header(target.ip, target.port);
  std::string scratch, head, body, detail;
  // The response bytes for a typical request (built once; the nonce in it does not matter).
  dummy proto;
  proto.dummy_input = 21;
  bt::detail::preset_request(proto, target, 12.0, id, {});
  bt::detail::encode_request(bt::descriptor_of<dummy>(), proto, "127.0.0.1", 1, id, host, scratch,
                             head, body);
  const std::string response = canned_response(proto);
  std::int64_t nonce = 1700000000000000000;
  for (auto _ : state) {
    dummy s;
    s.dummy_input = 21;
    bt::detail::preset_request(s, target, 12.0, id, {});
    if (sign) {
      bt::detail::encode_request(bt::descriptor_of<dummy>(), s, "127.0.0.1", ++nonce, id, host,
                                 scratch, head, body);
    } else {
      // Same work minus the signature: the body and headers with a fixed signature.
      s.dendrite.ip = "127.0.0.1";
      s.dendrite.nonce = ++nonce;
      s.dendrite.signature = *proto.dendrite.signature;
      body.clear();
      bt::write_json_body(bt::descriptor_of<dummy>(), s, body, bt::json_style::python_dumps);
      head.clear();
      head.append("POST /Dummy HTTP/1.1\r\nHost: ").append(host);
      head.append("\r\nContent-Type: application/json\r\nContent-Length: ");
      head.append(std::to_string(body.size())).append("\r\n");
      struct sink final : bt::header_sink {
        std::string& o;
        explicit sink(std::string& x) : o(x) {}
        void add(std::string_view n, std::string_view v) override {
          o.append(n).append(": ").append(v).append("\r\n");
        }
      } hs(head);
      bt::to_headers(bt::descriptor_of<dummy>(), s, hs, {.body_bytes = body.size()});
      head.append("\r\n");
    }
    benchmark::DoNotOptimize(head.data());
    benchmark::DoNotOptimize(body.data());
    http::response_parser<http::string_body> p;
    p.eager(true);
    boost::beast::error_code ec;
    p.put(net::buffer(response), ec);
    auto& res = p.get();
    const auto merged = bt::detail::apply_response(bt::detail::make_synapse_ref(s),
                                                   res.result_int(), res, res.body(), detail);
    if (ec || merged || s.dummy_output != 42) state.SkipWithError("bad response handling");
  }
}

void BM_dendrite_client_overhead(benchmark::State& state) {
  client_call(state, true);
}
BENCHMARK(BM_dendrite_client_overhead);
// Fixed count, for instruction counts: valgrind --tool=callgrind
// --toggle-collect='*BM_dendrite_client_overhead*'
BENCHMARK(BM_dendrite_client_overhead)->Iterations(200);

void BM_dendrite_client_no_sign(benchmark::State& state) {
  client_call(state, false);
}
BENCHMARK(BM_dendrite_client_no_sign);
// Fixed count, for instruction counts: valgrind --tool=callgrind
// --toggle-collect='*BM_dendrite_client_no_sign*'
BENCHMARK(BM_dendrite_client_no_sign)->Iterations(200);

/// The parts of the per-call work, to see where the non-signature time goes.
struct client_fixture {
  const bt::keypair& key = bench_alice();
  std::string uuid = bt::detail::make_uuid1();
  bt::detail::request_identity id{
      .key = &key, .hotkey = key.ss58_address(), .uuid = uuid, .version = bt::version_as_int};
  bt::axon_info target = bench_target();
  std::string host = bt::detail::host_header(target.ip, target.port);
  std::string scratch, head, body, detail;
  dummy proto;
  std::string response;
  client_fixture() {
    proto.dummy_input = 21;
    bt::detail::preset_request(proto, target, 12.0, id, {});
    bt::detail::encode_request(bt::descriptor_of<dummy>(), proto, "127.0.0.1", 1, id, host, scratch,
                               head, body);
    response = canned_response(proto);
  }
};

void BM_dendrite_part_body_write(benchmark::State& state) {
  client_fixture f;
  for (auto _ : state) {
    f.body.clear();
    bt::write_json_body(bt::descriptor_of<dummy>(), f.proto, f.body, bt::json_style::python_dumps);
    benchmark::DoNotOptimize(f.body.data());
  }
}
BENCHMARK(BM_dendrite_part_body_write);

void BM_dendrite_part_http_parse(benchmark::State& state) {
  client_fixture f;
  for (auto _ : state) {
    http::response_parser<http::string_body> p;
    p.eager(true);
    boost::beast::error_code ec;
    p.put(net::buffer(f.response), ec);
    benchmark::DoNotOptimize(p.get().body().data());
  }
}
BENCHMARK(BM_dendrite_part_http_parse);

void BM_dendrite_part_merge(benchmark::State& state) {
  client_fixture f;
  http::response_parser<http::string_body> p;
  p.eager(true);
  boost::beast::error_code ec;
  p.put(net::buffer(f.response), ec);
  const auto& res = p.get();
  for (auto _ : state) {
    dummy s = f.proto;
    auto e = bt::detail::apply_response(bt::detail::make_synapse_ref(s), res.result_int(), res,
                                        res.body(), f.detail);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_dendrite_part_merge);

void BM_dendrite_part_body_read(benchmark::State& state) {
  client_fixture f;
  const std::string body = f.response.substr(f.response.find("\r\n\r\n") + 4);
  for (auto _ : state) {
    dummy s;
    auto e = bt::read_json_body(bt::descriptor_of<dummy>(), body, s);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_dendrite_part_body_read);
// Fixed count, for instruction counts: valgrind --tool=callgrind
// --toggle-collect='*BM_dendrite_part_body_read*'
BENCHMARK(BM_dendrite_part_body_read)->Iterations(200);

/// N listeners on one thread answering every Dummy request at once with the canned response.
class instant_axons {
 public:
  explicit instant_axons(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      acceptors_.emplace_back(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
      ports_.push_back(acceptors_.back().local_endpoint().port());
    }
    for (auto& a : acceptors_) net::co_spawn(ioc_, accept(a), net::detached);
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~instant_axons() {
    ioc_.stop();
    thread_.join();
  }
  const std::vector<std::uint16_t>& ports() const { return ports_; }
  /// CPU time (s) the responder thread has used so far.
  double cpu_seconds() {
    clockid_t cid;
    timespec ts{};
    if (pthread_getcpuclockid(thread_.native_handle(), &cid) != 0 || clock_gettime(cid, &ts) != 0)
      return 0;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }

 private:
  net::awaitable<void> accept(tcp::acceptor& a) {
    for (;;) {
      auto [ec, s] = co_await a.async_accept(net::as_tuple(net::use_awaitable));
      if (ec) co_return;
      net::co_spawn(ioc_, serve(std::move(s)), net::detached);
    }
  }
  static net::awaitable<void> serve(tcp::socket s) {
    boost::beast::flat_buffer buf;
    for (;;) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
      if (ec) co_return;
      dummy d;
      if (bt::read_json_body(bt::descriptor_of<dummy>(), req.body(), d)) co_return;
      const std::string r = canned_response(d);
      auto [wec, wn] =
          co_await net::async_write(s, net::buffer(r), net::as_tuple(net::use_awaitable));
      if (wec) co_return;
      (void)n;
      (void)wn;
    }
  }

  net::io_context ioc_;
  std::vector<tcp::acceptor> acceptors_;
  std::vector<std::uint16_t> ports_;
  std::thread thread_;
};

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/// CPU seconds one sr25519 signature of a request-sized message takes on this thread: the unit
/// of the fan-out goal ("dendrite CPU per axon <= 1.5 x one signature"), measured in the same
/// run as the fan-out it is compared with.
double one_signature_cpu_seconds() {
  const std::string msg = "1700000000123456789." + bench_alice().ss58_address() + "." +
                          bench_bob().ss58_address() +
                          ".5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a."
                          "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";
  constexpr int n = 400;
  timespec a{}, b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  for (int i = 0; i < n; ++i) benchmark::DoNotOptimize(bench_alice().sign(msg));
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return (static_cast<double>(b.tv_sec - a.tv_sec) +
          static_cast<double>(b.tv_nsec - a.tv_nsec) * 1e-9) /
         n;
}

double wall_seconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// I/O threads for a benchmark argument: 0 is one per core.
unsigned io_threads_arg(std::int64_t t) {
  return t > 0 ? static_cast<unsigned>(t) : std::max(1u, std::thread::hardware_concurrency());
}

/// The CPU and wall time of fan-outs, split between the client (the whole process minus the
/// responder thread) and the responders, reported per axon against one signature measured in
/// the same run.
struct fanout_meter {
  instant_axons& srv;
  double proc = 0, server = 0, wall = 0;
  double proc0 = 0, srv0 = 0, wall0 = 0;

  void start() { proc0 = process_cpu_seconds(), srv0 = srv.cpu_seconds(), wall0 = wall_seconds(); }
  void stop() {
    wall += wall_seconds() - wall0;
    proc += process_cpu_seconds() - proc0;
    server += srv.cpu_seconds() - srv0;
  }
  /// Counters: `client`_cpu_per_axon_us, its ratio to one signature, the responders' CPU, the
  /// wall time per axon, and the wall time against the CPU-bound time (client + responders) /
  /// cores (goal <= 1.2). Returns the client's CPU per axon and one signature's, in seconds.
  std::pair<double, double> report(benchmark::State& state, std::size_t n,
                                   const std::string& client) const {
    const double calls = static_cast<double>(n) * static_cast<double>(state.iterations());
    const double client_cpu = (proc - server) / calls, responder_cpu = server / calls;
    const double sign = one_signature_cpu_seconds();
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    state.counters[client + "_cpu_per_axon_us"] = client_cpu * 1e6;
    state.counters["responder_cpu_per_axon_us"] = responder_cpu * 1e6;
    state.counters["sign_us"] = sign * 1e6;
    state.counters[client + "_cpu_vs_sign"] = client_cpu / sign;
    state.counters["wall_per_axon_us"] = wall / calls * 1e6;
    state.counters["wall_vs_cpu_bound"] = (wall / calls) / ((client_cpu + responder_cpu) / cores);
    return {client_cpu, sign};
  }
};

void raise_descriptor_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

/// A bare Beast client sending one fixed request to each of N endpoints, at most 256 in flight
/// (as the dendrite's max_concurrency above), on `threads` I/O threads: no signing, no synapse,
/// no pool bookkeeping, no timers. What is left is what any client over TCP pays per axon.
class bare_fanout_client {
 public:
  bare_fanout_client(const std::vector<std::uint16_t>& ports, unsigned threads, std::string request)
      : request_(std::move(request)), work_(net::make_work_guard(ioc_)) {
    for (auto p : ports)
      peers_.push_back(peer{tcp::endpoint(net::ip::make_address("127.0.0.1"), p)});
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }
  ~bare_fanout_client() {
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
  }
  bare_fanout_client(const bare_fanout_client&) = delete;
  bare_fanout_client& operator=(const bare_fanout_client&) = delete;

  /// One round trip to every endpoint (connecting those without an open connection); returns
  /// how many failed.
  std::size_t round() {
    next_ = 0;
    failures_ = 0;
    const std::size_t workers = std::min<std::size_t>(256, peers_.size());
    active_ = workers;
    std::promise<void> all;
    done_ = &all;
    auto finished = all.get_future();
    for (std::size_t w = 0; w < workers; ++w) net::co_spawn(ioc_, worker(), net::detached);
    finished.wait();
    return failures_;
  }
  /// Closes every connection (the next round connects anew).
  void close_all() {
    for (auto& p : peers_) p.socket.reset();
  }

 private:
  struct peer {
    tcp::endpoint ep;
    std::optional<tcp::socket> socket{};
    boost::beast::flat_buffer buffer{};
  };

  net::awaitable<void> worker() {
    for (;;) {
      const std::size_t i = next_++;
      if (i >= peers_.size()) break;
      if (!co_await round_trip(peers_[i])) ++failures_;
    }
    if (--active_ == 0) done_->set_value();
  }
  net::awaitable<bool> round_trip(peer& p) {
    if (!p.socket) {
      p.socket.emplace(ioc_);
      boost::system::error_code ec;
      p.socket->open(tcp::v4(), ec);
      if (!ec) p.socket->set_option(tcp::no_delay(true), ec);
      if (ec) co_return false;
      auto [cec] = co_await p.socket->async_connect(p.ep, net::as_tuple(net::use_awaitable));
      if (cec) co_return false;
    }
    auto [wec, wn] = co_await net::async_write(*p.socket, net::buffer(request_),
                                               net::as_tuple(net::use_awaitable));
    if (wec) co_return false;
    http::response_parser<http::string_body> res;
    auto [rec, rn] =
        co_await http::async_read(*p.socket, p.buffer, res, net::as_tuple(net::use_awaitable));
    (void)wn;
    (void)rn;
    co_return !rec && res.get().result_int() == 200;
  }

  net::io_context ioc_;
  std::string request_;
  std::vector<peer> peers_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> next_{0}, failures_{0}, active_{0};
  std::promise<void>* done_ = nullptr;
};

/// forward() of a Dummy to N instant loopback responders (one thread serving all of them), with
/// the dendrite's signing_threads = state.range(1) (0: the default; 1: no pool, the I/O thread
/// signs) and threads = state.range(2) (0: one per core). `cold`: every fan-out opens new
/// connections (the pool is emptied between fan-outs, outside the measurement); warm: every
/// fan-out reuses the pooled keep-alive connections of the last one. The dendrite's CPU is the
/// whole process minus the responder thread: its I/O threads, the signing pool and the waiting
/// benchmark thread.
void fanout(benchmark::State& state, bool cold) {
  raise_descriptor_limit();
  const auto n = static_cast<std::size_t>(state.range(0));
  instant_axons srv(n);
  std::vector<bt::axon_info> axons;
  for (auto p : srv.ports()) axons.push_back(bench_target(p));
  bt::dendrite d(bench_alice(), {.threads = io_threads_arg(state.range(2)),
                                 .signing_threads = static_cast<unsigned>(state.range(1)),
                                 .max_concurrency = 256,
                                 .max_idle_total = 4096});
  dummy q;
  q.dummy_input = 21;
  d.forward(axons, q, 30.0);  // warm-up: the responders' coroutines, the pool, the allocator
  // The floor, measured between the dendrite's fan-outs (so both see the same load): a bare
  // client's round trips of the same request bytes to the same responders, as many I/O threads.
  client_fixture f;
  bare_fanout_client bare(srv.ports(), io_threads_arg(state.range(2)), f.head + f.body);
  std::size_t failures = bare.round(), bare_failures = 0;
  fanout_meter m{srv}, floor{srv};
  for (auto _ : state) {
    state.PauseTiming();
    if (cold) {
      d.close_idle();
      bare.close_all();
    }
    floor.start();
    bare_failures += bare.round();
    floor.stop();
    state.ResumeTiming();
    m.start();
    auto rs = d.forward(axons, q, 30.0);
    m.stop();
    for (auto& x : rs) failures += !x.is_success();
  }
  if (failures || bare_failures) state.SkipWithError("some calls failed");
  const auto [dendrite_cpu, sign] = m.report(state, n, "dendrite");
  const double floor_cpu = (floor.proc - floor.server) /
                           (static_cast<double>(n) * static_cast<double>(state.iterations()));
  state.counters["floor_cpu_per_axon_us"] = floor_cpu * 1e6;
  state.counters["dendrite_over_floor_vs_sign"] = (dendrite_cpu - floor_cpu) / sign;
}

void BM_dendrite_fanout_warm(benchmark::State& state) {
  fanout(state, false);
}
void BM_dendrite_fanout_cold(benchmark::State& state) {
  fanout(state, true);
}

/// The floor of BM_dendrite_fanout: the same N responders and the bytes of one signed Dummy
/// request, sent by bare_fanout_client with threads = state.range(1) (0: one per core).
void bare_fanout(benchmark::State& state, bool cold) {
  raise_descriptor_limit();
  const auto n = static_cast<std::size_t>(state.range(0));
  instant_axons srv(n);
  client_fixture f;
  bare_fanout_client c(srv.ports(), io_threads_arg(state.range(1)), f.head + f.body);
  std::size_t failures = c.round();  // warm-up, as the dendrite's
  fanout_meter m{srv};
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      c.close_all();
      state.ResumeTiming();
    }
    m.start();
    failures += c.round();
    m.stop();
  }
  if (failures) state.SkipWithError("some round trips failed");
  m.report(state, n, "bare_client");
}

void BM_bare_fanout_warm(benchmark::State& state) {
  bare_fanout(state, false);
}
void BM_bare_fanout_cold(benchmark::State& state) {
  bare_fanout(state, true);
}

/// Sequential calls to one instant responder over a kept connection: the client's whole CPU
/// cost per call including its system calls, next to BM_dendrite_client_overhead.
void BM_dendrite_sequential_call(benchmark::State& state) {
  instant_axons srv(1);
  bt::dendrite d(bench_alice());
  const auto target = bench_target(srv.ports()[0]);
  dummy q;
  q.dummy_input = 21;
  d.call(target, q, 5.0);
  std::size_t failures = 0;
  const double proc0 = process_cpu_seconds(), srv0 = srv.cpu_seconds();
  for (auto _ : state) failures += !d.call(target, q, 5.0).is_success();
  const double proc = process_cpu_seconds() - proc0, server = srv.cpu_seconds() - srv0;
  if (failures) state.SkipWithError("some calls failed");
  const double calls = static_cast<double>(state.iterations());
  state.counters["dendrite_cpu_per_call_us"] = (proc - server) / calls * 1e6;
  state.counters["responder_cpu_per_call_us"] = server / calls * 1e6;
}
BENCHMARK(BM_dendrite_sequential_call)->UseRealTime();

// {N axons, signing_threads, I/O threads}: signing_threads 0 = the default (a pool of one thread
// per core while the dendrite has fewer I/O threads than cores), 1 = no pool; I/O threads 0 = one
// per core.
BENCHMARK(BM_dendrite_fanout_warm)
    ->Args({100, 0, 1})
    ->Args({1000, 0, 1})
    ->Args({1000, 1, 1})
    ->Args({1000, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_dendrite_fanout_cold)
    ->Args({1000, 0, 1})
    ->Args({1000, 1, 1})
    ->Args({1000, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// {N axons, I/O threads}
BENCHMARK(BM_bare_fanout_warm)
    ->Args({1000, 1})
    ->Args({1000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_bare_fanout_cold)
    ->Args({1000, 1})
    ->Args({1000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
