#include "ping_modes.hpp"

#include "bare_echo.hpp"
#include "floor.hpp"
#include "payload_synapse.hpp"
#include "stats.hpp"

// bt-axon's text log formatter (escapes outside text so that a message is one line).
#include <log_setup.hpp>

#include <bt/json.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <boost/asio/awaitable.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <thread>

namespace bt::perf {

namespace {

bool is_loopback_ip(const std::string& ip) {
  return ip.rfind("127.", 0) == 0 || ip == "::1" || ip == "localhost" || ip == "::ffff:127.0.0.1";
}

/// Finds the bt-axon to spawn: --axon-binary, the one built alongside (compile-time path, then
/// next to this executable's build folder), else "bt-axon" from PATH.
std::string axon_binary(const ping_config& cfg) {
  if (!cfg.axon_binary.empty()) return cfg.axon_binary;
#ifdef BT_AXON_BINARY
  if (std::filesystem::exists(BT_AXON_BINARY)) return BT_AXON_BINARY;
#endif
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& rel : {"../tools/bt-axon/bt-axon", "bt-axon"}) {
      const auto p = self.parent_path() / rel;
      if (std::filesystem::exists(p)) return p.lexically_normal().string();
    }
  }
  return "bt-axon";
}

std::size_t count_fds(pid_t pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

double mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

}  // namespace

keypair dendrite_key(const ping_config& cfg) {
  cli::key_flags flags = cfg.key;
  if (flags.uri.empty() && flags.wallet_path.empty() && flags.wallet_name.empty() &&
      flags.wallet_hotkey.empty())
    flags.uri = "//Alice";
  return cli::signing_hotkey(flags);
}

axon_info parse_target(const std::string& text) {
  return axon_info::parse(text, "--target");
}

bool is_loopback_target(const std::string& text) {
  try {
    return is_loopback_ip(parse_target(text).ip);
  } catch (const std::exception&) {
    return false;
  }
}

axon_options in_process_axon_options(const ping_config& cfg) {
  axon_options o = axon_options::loopback();
  o.io_threads = cfg.axon_threads;
  o.insecure_skip_verification = cfg.no_crypto;
  o.sign_responses = answers_signed(cfg);
  if (plain_pings(cfg)) {
    // One signer sends every ping, each Epistula or btauth/1 request one replay record for as
    // long as its freshness window lasts: the default
    // per-hotkey quota (1,024 records) would refuse all but the first ~1,000 of a window (503).
    memory_nonce_store::options store;
    store.max_entries_per_hotkey = 0;
    o.nonces = std::make_shared<memory_nonce_store>(store);
  }
  o.accept_sessions = cfg.session;
  // Failures and the --no-crypto warning go to stderr; the access log (debug) stays off.
  auto logger = spdlog::get("axon");
  if (!logger) {
    logger = spdlog::stderr_color_mt("axon");
    logger->set_formatter(std::make_unique<bt::miner::text_log_formatter>());  // one line per call
  }
  logger->set_level(spdlog::level::warn);
  o.logger = logger;
  return o;
}

void attach_payload_route(axon& ax) {
  ax.attach<payload_synapse>([](payload_synapse&) -> boost::asio::awaitable<void> { co_return; });
}

child_process spawn_axon(const ping_config& cfg, axon_info& info) {
  std::vector<std::string> argv = {axon_binary(cfg), "--uri",       cfg.axon_uri, "--axon.ip",
                                   "127.0.0.1",      "--axon.port", "0"};
  if (cfg.no_crypto) {
    argv.push_back("--insecure-skip-verification");
    argv.insert(argv.end(), {"--axon.sign_responses", "off"});
  }
  // --memory: one hotkey stands for every caller (each a dendrite with its own uuid), and the
  // replay store's per-hotkey quota (1,024 records) would refuse all but the first ~1,000 (503).
  if (cfg.memory) argv.insert(argv.end(), {"--axon.nonce_max_records_per_hotkey", "0"});
  child_process child = child_process::spawn(argv);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    auto line = child.read_line(std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()));
    if (!line) break;
    const json j = json::parse(*line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("port"))
      continue;  // not the AxonInfo line
    const error err = axon_info_from_json(j, info);
    if (err) throw std::runtime_error("bt-axon printed a bad AxonInfo line: " + err.message());
    return child;
  }
  throw std::runtime_error("bt-axon (" + argv[0] + ") did not print its AxonInfo line within 20 s");
}

void warn_no_crypto(const axon_info& target) {
  auto logger = spdlog::get("bt-ping");
  if (!logger) {
    logger = spdlog::stderr_color_mt("bt-ping");
    logger->set_formatter(std::make_unique<bt::miner::text_log_formatter>());  // one line per call
  }
  logger->warn(
      "--no-crypto: axon signature/nonce verification, dendrite signing and the answers' "
      "signatures are OFF for {}:{}. This measures framework overhead only; never run an axon "
      "like this on a network.",
      target.ip, target.port);
}

dendrite_options dendrite_options_for(const ping_config& cfg) {
  dendrite_options o;
  o.threads = std::max(1u, cfg.dendrite_threads);
  o.insecure_skip_signing = cfg.no_crypto;  // --no-crypto: no signature (loopback only)
  if (!answers_signed(cfg)) o.verify_responses = response_verification::off;
  o.session = cfg.session;
  return o;
}

ping_run drive_any(const ping_config& cfg, caller_set& callers, const axon_info& target,
                   const drive_options& opt) {
  if (plain_pings(cfg)) {
    plain_ping e;
    e.dialect = cfg.btauth ? wire_dialect::btauth : wire_dialect::epistula;
    if (cfg.payload > 0) e.body = json{{"data", std::string(cfg.payload, 'x')}}.dump();
    return drive(callers, target, e, opt);
  }
  if (cfg.payload > 0) {
    payload_synapse p;
    p.data.assign(cfg.payload, 'x');
    return drive(callers, target, p, opt);
  }
  return drive(callers, target, synapse{}, opt);
}

ping_run drive_measured(const ping_config& cfg, caller_set& callers, const axon_info& target,
                        const drive_options& opt, pid_t axon_pid) {
  const auto axon_cpu = [&] {
    return axon_pid > 0 ? process_cpu_times(axon_pid).value_or(cpu_times{}) : cpu_times{};
  };
  const cpu_times self0 = self_cpu_times(), axon0 = axon_cpu();
  ping_run run = drive_any(cfg, callers, target, opt);
  const cpu_times self1 = self_cpu_times(), axon1 = axon_cpu();
  run.cpu = (self1 - self0) + (axon1 - axon0);
  run.cpu_both_ends = cfg.target.empty();
  run.cpu_scope = axon_pid > 0         ? "bt-ping (dendrite) + the spawned bt-axon"
                  : cfg.target.empty() ? "axon and dendrite, this process"
                                       : "dendrite only, this process";
  return run;
}

namespace {

/// The exchange the floor replays: the sizes and header counts of this configuration's ping.
http_exchange floor_exchange(const ping_config& cfg, const keypair& key, const axon_info& target) {
  http_exchange ex;
  if (cfg.payload > 0) {
    payload_synapse p;
    p.data.assign(cfg.payload, 'x');
    ex = make_signed_exchange(descriptor_of<payload_synapse>(), p, key, target.hotkey, target.port,
                              !cfg.no_crypto && !cfg.session);
  } else {
    synapse s;
    ex = make_signed_exchange(descriptor_of<synapse>(), s, key, target.hotkey, target.port,
                              !cfg.no_crypto && !cfg.session);
  }
  if (cfg.session) make_session_shaped(ex);
  return ex;
}

/// The bare round trip's figures of one floor round into `b`.
void set_bare(baseline_figures& b, const bare_echo_result& bare) {
  b.bare = summarize(bare.rtt_us);
  b.request_bytes = bare.request_bytes;
  b.response_bytes = bare.response_bytes;
  const double n = static_cast<double>(std::max<std::size_t>(1, bare.rtt_us.size()));
  b.bare_cpu_us = {.user = bare.cpu.user * 1e6 / n, .sys = bare.cpu.sys * 1e6 / n};
}

}  // namespace

baseline_figures measure_baseline(const ping_config& cfg, const keypair& key,
                                  const axon_info& target) {
  baseline_figures b;
  set_bare(b, run_bare_echo(floor_exchange(cfg, key, target),
                            std::clamp<std::size_t>(cfg.count, 200, 20'000)));
  b.crypto = measure_crypto(key, 2000);
  b.signed_ping = !cfg.no_crypto;
  b.session = cfg.session;
  b.payload_bytes = cfg.payload;
  return b;
}

measured_with_floor measure_alternated(const ping_config& cfg, caller_set& callers,
                                       const axon_info& target, const keypair& key,
                                       const drive_options& opt, pid_t axon_pid) {
  const std::size_t rounds = std::max<std::size_t>(1, cfg.rounds);
  const std::size_t per_round = std::max<std::size_t>(1, opt.count / rounds);
  const http_exchange ex = floor_exchange(cfg, key, target);
  drive_options round_opt = opt;
  round_opt.count = per_round;
  round_opt.progress = false;

  measured_with_floor m;
  m.run.concurrency = opt.concurrency;
  cpu_times bare_cpu;
  std::size_t bare_trips = 0;
  std::optional<bare_echo_result> best_bare;
  for (std::size_t r = 0; r < rounds; ++r) {
    // The floor first, then the ping, so that neither always runs on a machine the other warmed.
    bare_echo_result bare = run_bare_echo(ex, per_round);
    const summary floor_round = summarize(bare.rtt_us);
    m.floor.rounds.floor_means.push_back(floor_round.mean);
    bare_cpu = bare_cpu + bare.cpu;
    bare_trips += bare.rtt_us.size();
    if (!best_bare || floor_round.mean < summarize(best_bare->rtt_us).mean)
      best_bare = std::move(bare);

    const ping_run ping = drive_measured(cfg, callers, target, round_opt, axon_pid);
    const summary ping_round = summarize(ping.latency_us);
    m.floor.rounds.ping_means.push_back(ping_round.mean);
    if (ping_round.count > 0 && (m.ping.count == 0 || ping_round.mean < m.ping.mean))
      m.ping = ping_round;
    m.run.merge(ping);
  }
  m.floor.rounds.calls_per_round = per_round;
  set_bare(m.floor, *best_bare);
  // CPU per round trip over every floor round, as the pings' CPU is over every ping round.
  const double n = static_cast<double>(std::max<std::size_t>(1, bare_trips));
  m.floor.bare_cpu_us = {.user = bare_cpu.user * 1e6 / n, .sys = bare_cpu.sys * 1e6 / n};
  m.floor.crypto = measure_crypto(key, 2000);
  m.floor.signed_ping = !cfg.no_crypto;
  m.floor.session = cfg.session;
  m.floor.payload_bytes = cfg.payload;
  return m;
}

int run_cpu_mode(const ping_config& cfg, caller_set& callers, const axon_info& target,
                 const keypair& key, pid_t axon_pid, drive_options opt) {
  // Open the connections and warm both ends before the window.
  drive_options warm = opt;
  warm.duration = std::chrono::duration<double>(0.5);
  warm.verbose = nullptr;
  warm.progress = false;
  drive_any(cfg, callers, target, warm);

  opt.duration = std::chrono::duration<double>(cfg.axon_cpu_seconds);
  opt.progress = false;
  const auto times0 = process_cpu_times(axon_pid);
  const ping_run run = drive_any(cfg, callers, target, opt);
  const auto times1 = process_cpu_times(axon_pid);
  if (!times0 || !times1) throw std::runtime_error("could not read the axon's CPU time from /proc");
  const double user_s = times1->user - times0->user;
  const double sys_s = times1->sys - times0->sys;

  const summary s = summarize(run.latency_us);
  print_summary(std::cout, run, s);
  // Every request the axon handled costs CPU, answered 200 or not.
  const double n = static_cast<double>(run.calls);
  const double cpu_us = (user_s + sys_s) * 1e6 / std::max(1.0, n);
  const crypto_timings c = measure_crypto(key, 2000);
  const double goal = cfg.no_crypto ? 15.0 : 1.15 * (c.verify_us + c.sign_us) + 15.0;
  std::cout << "Axon CPU: " << format_figure("%.1f", cpu_us) << " us per request (user+sys "
            << format_figure("%.2f", user_s + sys_s) << " s over " << run.calls << " requests in "
            << format_figure("%.1f", run.wall_seconds) << " s at concurrency " << run.concurrency
            << "; user " << format_figure("%.1f", user_s * 1e6 / std::max(1.0, n)) << " us + sys "
            << format_figure("%.1f", sys_s * 1e6 / std::max(1.0, n)) << " us)\n";
  if (cfg.no_crypto)
    std::cout << "Axon CPU goal: <= 15.0 us per request without crypto\n";
  else
    std::cout << "Axon CPU goal: <= " << format_figure("%.1f", goal) << " us = 1.15 x (verify "
              << format_figure("%.1f", c.verify_us) << " + sign "
              << format_figure("%.1f", c.sign_us) << ") + 15 us; ratio "
              << format_figure("%.3f", cpu_us / goal) << "\n";
  if (!cfg.json_file.empty()) {
    json extra = json::object();
    extra["mode"] = mode_name(cfg);
    extra["axon_cpu_us_per_request"] = cpu_us;
    extra["axon_cpu_seconds"] = user_s + sys_s;
    extra["axon_user_us_per_request"] = user_s * 1e6 / std::max(1.0, n);
    extra["axon_sys_us_per_request"] = sys_s * 1e6 / std::max(1.0, n);
    extra["axon_cpu_goal_us"] = goal;
    extra["sign_us"] = c.sign_us;
    extra["verify_us"] = c.verify_us;
    std::ofstream(cfg.json_file)
        << to_json(run, s, nullptr, extra).dump(2, ' ', false, bt::json::error_handler_t::replace)
        << "\n";
  }
  return run.failed() == 0 ? 0 : 1;
}

int run_memory_mode(const ping_config& cfg, const axon_info& target, pid_t axon_pid) {
  using namespace std::chrono_literals;
  std::this_thread::sleep_for(300ms);
  const auto rss_start = process_rss_bytes(axon_pid).value_or(0);

  const keypair key = dendrite_key(cfg);
  {
    // A few pings so that everything lazily built (descriptors, pools, tables) exists.
    caller_set warm(key, 1, 1, dendrite_options_for(cfg));
    drive_any(cfg, warm, target, {.count = 200, .timeout = cfg.timeout});
  }
  std::this_thread::sleep_for(300ms);
  const auto rss_idle = process_rss_bytes(axon_pid).value_or(0);
  const std::size_t fds_idle = count_fds(axon_pid);

  // Our side needs one descriptor per connection too.
  const std::uint64_t limit = raise_fd_limit(cfg.connections + 512);
  if (limit < cfg.connections + 64)
    std::cerr << "bt-ping: warning: the file-descriptor limit is " << limit << ", fewer than "
              << cfg.connections << " connections will open\n";

  // One caller (a dendrite with its own uuid, as many validators) per connection, all calling at
  // once; each keeps its connection idle in its pool afterwards.
  caller_set many(key, cfg.connections, 1, dendrite_options_for(cfg));
  const ping_run opened = drive(many, target, synapse{},
                                {.count = cfg.connections,
                                 .concurrency = cfg.connections,
                                 .timeout = std::max(cfg.timeout, 60.0)});
  std::map<std::int64_t, std::size_t> statuses = opened.failures;
  if (!opened.latency_us.empty()) statuses[200] = opened.latency_us.size();
  std::this_thread::sleep_for(500ms);
  const auto rss_conn = process_rss_bytes(axon_pid).value_or(0);
  const std::size_t fds_conn = count_fds(axon_pid);
  std::size_t pooled = 0;
  for (std::size_t i = 0; i < many.size(); ++i) pooled += many.at(i).stats().idle_connections;
  const double open_s = opened.wall_seconds;

  std::cout << "Axon RSS at start: " << format_figure("%.1f", mib(rss_start)) << " MiB\n";
  std::cout << "Axon RSS idle (after 200 pings): " << format_figure("%.1f", mib(rss_idle))
            << " MiB (" << fds_idle << " fds; goal <= 20 MB)\n";
  std::cout << "Axon RSS with " << pooled
            << " idle keep-alive connections: " << format_figure("%.1f", mib(rss_conn)) << " MiB ("
            << fds_conn << " fds; goal <= 80 MB with 10,000), "
            << format_figure("%.2f", static_cast<double>(rss_conn - std::min(rss_conn, rss_idle)) /
                                         1024.0 /
                                         std::max<double>(1.0, static_cast<double>(pooled)))
            << " KiB per connection\n";
  std::cout << "Opening them took " << format_figure("%.2f", open_s) << " s; answers:";
  for (const auto& [status, n] : statuses) std::cout << " " << status << ": " << n;
  std::cout << "\n";
  if (!cfg.json_file.empty()) {
    json j = json::object();
    j["mode"] = "memory";
    j["rss_start_bytes"] = rss_start;
    j["rss_idle_bytes"] = rss_idle;
    j["rss_connections_bytes"] = rss_conn;
    j["connections_requested"] = cfg.connections;
    j["connections_pooled"] = pooled;
    j["axon_fds_idle"] = fds_idle;
    j["axon_fds_connections"] = fds_conn;
    json st = json::object();
    for (const auto& [status, n] : statuses) st[std::to_string(status)] = n;
    j["statuses"] = std::move(st);
    std::ofstream(cfg.json_file) << j.dump(2, ' ', false, bt::json::error_handler_t::replace)
                                 << "\n";
  }
  return statuses.size() == 1 && statuses.count(200) ? 0 : 1;
}

std::string mode_name(const ping_config& cfg) {
  std::string m = !cfg.target.empty() ? "target"
                  : cfg.cross_process ? "cross-process"
                                      : "in-process";
  if (cfg.no_crypto) m += ",no-crypto";
  if (cfg.session) m += ",session";
  if (cfg.epistula) m += ",epistula";
  if (cfg.btauth) m += ",btauth";
  if (cfg.payload > 0) m += ",payload=" + std::to_string(cfg.payload);
  if (cfg.concurrency > 1) m += ",concurrency=" + std::to_string(cfg.concurrency);
  if (cfg.axon_cpu_seconds > 0) m += ",axon-cpu";
  return m;
}

std::string histogram_title(const ping_config& cfg, const summary& s) {
  return "bt-ping latency (" + mode_name(cfg) + "), " + std::to_string(s.count) + " queries";
}

}  // namespace bt::perf
