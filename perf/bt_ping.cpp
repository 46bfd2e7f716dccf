// bt-ping: the ping benchmark. The original Bittensor measurement, in C++:
//
//   for each query i: response = dendrite.call(target_axon=axon.info(), synapse=Synapse(),
//   timeout=5)
//                     times.append(response.dendrite.process_time)
//   print count, average, standard deviation
//
// against an axon in this process (default), a bt-axon spawned as a separate process
// (--cross-process) or a running one (--target IP:PORT:HOTKEY); plus the floor of the same run
// (--baseline, alternated with the pings in rounds with --rounds), CPU per request (both ends
// where visible), throughput (--concurrency), payloads (--payload), sessions (--session), plain
// JSON requests to /echo signed with Epistula (--epistula) or btauth/1 (--btauth),
// framework overhead without crypto (--no-crypto), the axon's CPU per request (--axon-cpu) and its
// memory (--memory).
#include "bare_echo.hpp"
#include "floor.hpp"
#include "payload_synapse.hpp"
#include "ping_driver.hpp"
#include "ping_modes.hpp"
#include "proc.hpp"
#include "report.hpp"
#include "stats.hpp"

#include <bt/axon.hpp>
#include <bt/dendrite.hpp>
#include <bt/examples/echo_route.hpp>
#include <bt/keypair.hpp>

#include <bt_cli.hpp>
#include <heap_policy.hpp>

#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

using namespace bt::perf;

namespace {

int run(const ping_config& cfg) {
  // --- the axon: in this process, a spawned bt-axon, or a running one ---
  std::optional<bt::axon> local;
  std::optional<bt::perf::child_process> child;
  bt::axon_info target;
  if (!cfg.target.empty()) {
    target = parse_target(cfg.target);
  } else if (cfg.cross_process) {
    child.emplace(spawn_axon(cfg, target));
  } else {
    local.emplace(bt::keypair::from_uri(cfg.axon_uri), in_process_axon_options(cfg));
    if (cfg.payload > 0) attach_payload_route(*local);
    // bt-axon's /echo: Epistula and btauth/1.
    if (plain_pings(cfg))
      bt::examples::attach_echo_route(*local,
                                      {.auth = bt::auth_mode::epistula | bt::auth_mode::btauth});
    local->start();
    target = local->info();
  }
  if (cfg.no_crypto) warn_no_crypto(target);

  if (cfg.memory) return run_memory_mode(cfg, target, child->pid());

  const bt::keypair key = dendrite_key(cfg);
  caller_set callers(key, cfg.concurrency, cfg.dendrite_threads, dendrite_options_for(cfg));

  const bool on_terminal = ::isatty(STDOUT_FILENO) == 1;
  drive_options opt{.count = cfg.count,
                    .concurrency = cfg.concurrency,
                    .timeout = cfg.timeout,
                    .verbose = cfg.verbose ? &std::cout : nullptr,
                    .progress = on_terminal && !cfg.verbose && cfg.count >= 1000};

  if (cfg.warmup > 0) {
    drive_options w = opt;
    w.count = cfg.warmup;
    w.verbose = nullptr;
    w.progress = false;
    drive_any(cfg, callers, target, w);
  }

  if (cfg.axon_cpu_seconds > 0) return run_cpu_mode(cfg, callers, target, key, child->pid(), opt);

  const pid_t axon_pid = child ? child->pid() : 0;
  std::optional<measured_with_floor> alternated;
  if (cfg.baseline && cfg.rounds > 1)
    alternated = measure_alternated(cfg, callers, target, key, opt, axon_pid);
  const ping_run result =
      alternated ? alternated->run : drive_measured(cfg, callers, target, opt, axon_pid);
  const summary s = summarize(result.latency_us);
  print_summary(std::cout, result, s);

  std::optional<baseline_figures> base;
  const summary& ratio_ping = alternated ? alternated->ping : s;
  if (cfg.baseline && ratio_ping.count == 0) {
    std::cerr << "bt-ping: --baseline: no call succeeded, so there is no ratio to give\n";
  } else if (cfg.baseline) {
    base = alternated ? alternated->floor : measure_baseline(cfg, key, target);
    print_baseline(std::cout, ratio_ping, *base, result);
  }
  if (!cfg.json_file.empty()) {
    bt::json extra = bt::json::object();
    extra["mode"] = mode_name(cfg);
    extra["payload_bytes"] = cfg.payload;
    std::ofstream(cfg.json_file) << to_json(result, s, base ? &*base : nullptr, extra, &ratio_ping)
                                        .dump(2, ' ', false, bt::json::error_handler_t::replace)
                                 << "\n";
  }
  if (!cfg.histogram_file.empty()) {
    std::ofstream(cfg.histogram_file) << histogram_svg(result.latency_us, histogram_title(cfg, s));
  }
  if (local) local->stop();
  if (child) child->stop();
  // 1 when any call failed (the failures are listed above), so a script cannot take a run
  // that measured nothing, or a partly failed one, for a measurement.
  return result.failed() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  bt::cli::keep_freed_heap_memory();  // before any thread: see heap_policy.hpp
  ping_config cfg;
  CLI::App app{
      "bt-ping: the Bittensor ping benchmark (sequential dendrite calls of the base Synapse)"};
  app.add_option("--count", cfg.count, "Number of queries (default 10000)")
      ->check(bt::cli::positive<std::size_t>());
  app.add_option("--target", cfg.target,
                 "A running axon, IP:PORT:HOTKEY (default: an axon in this process)");
  app.add_flag("--cross-process", cfg.cross_process,
               "Spawn bt-axon as a separate process and ping it");
  app.add_option("--axon-binary", cfg.axon_binary,
                 "bt-axon to spawn (default: the one built with bt-ping)");
  bt::cli::add_key_flags(app, cfg.key);  // the dendrite's hotkey; none given: //Alice
  app.add_option("--axon-uri", cfg.axon_uri,
                 "Secret URI of a spawned or in-process axon's hotkey (default //Bob)");
  app.add_option("--timeout", cfg.timeout, "Per-call timeout in seconds (default 5)")
      ->check(bt::cli::positive<double>());
  app.add_option("--warmup", cfg.warmup,
                 "Untimed calls before the measurement (default 0, as the original)");
  app.add_option("--concurrency", cfg.concurrency, "Calls in flight at once (default 1)")
      ->check(bt::cli::positive<std::size_t>());
  app.add_option("--payload", cfg.payload,
                 "Send a synapse with a required, hashed string field of this many bytes "
                 "(in-process axon only)");
  app.add_flag(
      "--no-crypto", cfg.no_crypto,
      "Axon verification, dendrite signing and the answers' signatures off (loopback only): "
      "framework overhead alone");
  app.add_flag("--no-response-signatures", cfg.no_response_signatures,
               "The in-process axon does not sign its answers and the dendrite does not check "
               "them (a spawned or running bt-axon still signs)");
  app.add_flag("--epistula", cfg.epistula,
               "Epistula-signed POST /echo (PROTOCOL 12) instead of the signed Synapse ping; the "
               "in-process axon serves bt-axon's /echo");
  app.add_flag("--btauth", cfg.btauth,
               "btauth/1-signed POST /echo (PROTOCOL 14, Bittensor SDK v11) instead of the signed "
               "Synapse ping; the in-process axon serves bt-axon's /echo");
  app.add_flag("--session", cfg.session,
               "Sessions (PROTOCOL 13): the dendrite offers one per connection and the in-process "
               "axon accepts (a spawned bt-axon accepts by default); with --baseline the floor is "
               "the bare round trip of a session-shaped exchange");
  app.add_flag("--baseline", cfg.baseline,
               "Also measure the floor: bare Beast round trip, sign, verify");
  app.add_option("--rounds", cfg.rounds,
                 "With --baseline: split --count into this many ping rounds alternated with as "
                 "many floor rounds (floor first); the ratio is best ping round / best floor round "
                 "(default 1: all pings, then the floor)")
      ->check(bt::cli::positive<std::size_t>());
  app.add_option("--json", cfg.json_file, "Write the figures as JSON to this file");
  app.add_option("--histogram", cfg.histogram_file, "Write a latency histogram (SVG) to this file");
  app.add_flag("--verbose", cfg.verbose, "One line per query");
  app.add_option(
      "--axon-cpu", cfg.axon_cpu_seconds,
      "Axon CPU mode: drive a spawned bt-axon at --concurrency for this many seconds and "
      "report its CPU time (user+sys) per request");
  app.add_flag("--memory", cfg.memory,
               "Memory mode: RSS of a spawned bt-axon idle and with --connections idle keep-alive "
               "connections");
  app.add_option("--connections", cfg.connections,
                 "Idle keep-alive connections for --memory (default 10000)");
  app.add_option("--axon-threads", cfg.axon_threads,
                 "I/O threads of an in-process axon (default 2)");
  app.add_option("--dendrite-threads", cfg.dendrite_threads,
                 "I/O threads of the dendrite (default 1)");
  // Bad usage exits 2 with a message naming the flag, as every tool does (bt_cli.hpp).
  if (const auto rc = bt::cli::parse(app, argc, argv)) return *rc;
  // Output files are checked before a run that may take minutes, not after it: opened for
  // appending (created if missing, written over at the end).
  for (const auto& [flag, path] :
       {std::pair{"--json", &cfg.json_file}, std::pair{"--histogram", &cfg.histogram_file}}) {
    if (path->empty()) continue;
    std::FILE* f = std::fopen(path->c_str(), "ab");
    if (!f) {
      std::cerr << "bt-ping: " << flag << ": cannot write " << *path << ": " << std::strerror(errno)
                << "\n";
      return 2;
    }
    std::fclose(f);
  }

  // A bad --target is bad usage (exit 2), found before any axon or dendrite is set up.
  if (!cfg.target.empty()) {
    try {
      bt::init_crypto();  // ss58::decode hashes with libsodium
      (void)parse_target(cfg.target);
    } catch (const std::invalid_argument& e) {
      std::cerr << "bt-ping: " << e.what() << "\n";
      return 2;
    }
  }
  if (cfg.axon_cpu_seconds > 0 || cfg.memory) {
    if (!cfg.target.empty()) {
      std::cerr << "bt-ping: --axon-cpu and --memory measure a bt-axon process they spawn; drop "
                   "--target\n";
      return 2;
    }
    cfg.cross_process = true;
  }
  if (cfg.payload > 0 && (cfg.cross_process || !cfg.target.empty())) {
    std::cerr
        << "bt-ping: --payload needs the Payload route, which only the in-process axon serves\n";
    return 2;
  }
  if (cfg.epistula && cfg.btauth) {
    std::cerr << "bt-ping: --epistula and --btauth each choose how /echo is signed; give one\n";
    return 2;
  }
  if (plain_pings(cfg) && (cfg.baseline || cfg.session || cfg.no_crypto)) {
    std::cerr << "bt-ping: --epistula and --btauth measure calls as they are signed and checked; "
                 "--baseline, --session and --no-crypto apply to the Synapse ping only\n";
    return 2;
  }
  if (cfg.rounds > 1 && (!cfg.baseline || cfg.count < cfg.rounds)) {
    std::cerr << "bt-ping: --rounds alternates ping and floor rounds: it needs --baseline and a "
                 "--count of at least one call per round\n";
    return 2;
  }
  if (cfg.no_crypto && cfg.session) {
    std::cerr << "bt-ping: --session needs signing (its offer is signed); drop --no-crypto\n";
    return 2;
  }
  if (cfg.no_crypto && !cfg.target.empty() && !is_loopback_target(cfg.target)) {
    std::cerr << "bt-ping: --no-crypto is refused for a non-loopback target (" << cfg.target
              << ")\n";
    return 2;
  }
  try {
    return run(cfg);
  } catch (const std::exception& e) {
    std::cerr << "bt-ping: " << e.what() << "\n";
    return 1;
  }
}
