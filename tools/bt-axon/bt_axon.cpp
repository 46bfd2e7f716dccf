// bt-axon: a reference miner. Serves the ping route, the subnet template's Dummy synapse
// (dummy_output = dummy_input * 2) and the streaming example WordStream (the words of `text`, one
// chunk each, --stream.delay_ms before each) with an offline access policy, prints its AxonInfo as
// one JSON line on stdout once listening, and drains gracefully on SIGINT/SIGTERM (exit status 0).
//
//   bt-axon --wallet.name miner --wallet.hotkey default --axon.port 8091
//   bt-axon --uri //Bob --axon.ip 127.0.0.1 --axon.port 0          # dev key, any free port
//   bt-axon --uri //Bob --metagraph mg.json --blacklist.force_validator_permit
//   bt-axon --uri //Bob --netuid 1 --subtensor.network finney     # the metagraph from the chain
//   bt-axon --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 --test-routes --axon.max_body_bytes 4096
//
// --test-routes (tests and the soak only) adds routes that misbehave on purpose: Throw (the handler
// throws: 500), Hang (the handler never returns until shutdown, ignoring cancellation: 408 at the
// deadline, then the worker stays taken) and Big (answers `data` of `size` bytes, at most 16 MiB,
// for clients that disconnect mid-response; `size` is a required hash field, for body hash tests).
// The limit flags (--axon.max_*, --axon.header_timeout, --axon.io_threads) map one to one onto
// bt::axon_options.
//
// Flags are named as bittensor names them; each also reads its BT_* environment variable.
// Logs go to stderr; stdout carries only the AxonInfo line, so scripts can wait for it.
#include <bt/axon.hpp>
#include <bt/axon_info.hpp>

#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/examples/echo_route.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/json.hpp>
#include <bt/proxy_protocol.hpp>
#include <bt/redis_nonce_store.hpp>
#include <bt/wallet.hpp>

#include <bt_cli.hpp>

#include <endpoint_flags.hpp>
#include <heap_policy.hpp>

#include <log_setup.hpp>
#include "chain_policy.hpp"
#include "miner_policy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

namespace {

/// Bad usage found after parsing: "bt-axon: <message>" on stderr, exit status 2.
struct usage_error {
  std::string message;
};

/// --axon.ip as an IP literal for bt::axon_options::ip (which takes only literals): a literal
/// ("127.0.0.1", "::1", "[::]") is returned as given; a host name ("localhost") is resolved and
/// its first address returned (`resolved` names it, for the log). Anything else is a usage error
/// naming the flag and what it accepts.
std::string bind_address(const std::string& value, std::string& resolved) {
  std::string bare = value;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']')
    bare = bare.substr(1, bare.size() - 2);
  boost::system::error_code ec;
  boost::asio::ip::make_address(bare, ec);
  if (!ec) return value;
  const std::string accepts =
      "give an IP address such as 127.0.0.1, 0.0.0.0 (all IPv4) or [::] (all, dual-stack), or a "
      "host name that resolves";
  const bool name_like = !bare.empty() && bare.size() <= 253 &&
                         bare.find_first_not_of(
                             "abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789-.") == std::string::npos;
  if (!name_like)
    throw usage_error{"--axon.ip '" + value + "': not an IP address or a host name; " + accepts};
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::resolver resolver(ioc);
  const auto results =
      resolver.resolve(bare, "", boost::asio::ip::resolver_base::numeric_service, ec);
  if (ec || results.empty())
    throw usage_error{"--axon.ip '" + value + "': the host name does not resolve (" +
                      (ec ? ec.message() : std::string("no address")) + "); " + accepts};
  const auto address = results.begin()->endpoint().address();
  resolved = address.to_string();
  return address.is_v6() ? "[" + resolved + "]" : resolved;
}

/// Raises the soft file-descriptor limit so that max_connections sockets fit.
void raise_fd_limit(std::size_t connections, spdlog::logger& log) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  const rlim_t want = static_cast<rlim_t>(connections) + 256;  // listeners, logs, wallet files
  if (rl.rlim_cur >= want) return;
  const rlim_t target = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
  rlimit raised = rl;
  raised.rlim_cur = target;
  if (setrlimit(RLIMIT_NOFILE, &raised) != 0 || target < want) {
    log.warn("file descriptor limit is {} (hard limit {}); fewer than {} connections will fit",
             static_cast<unsigned long long>(target), static_cast<unsigned long long>(rl.rlim_max),
             connections);
  } else {
    log.debug("file descriptor limit raised from {} to {}",
              static_cast<unsigned long long>(rl.rlim_cur),
              static_cast<unsigned long long>(target));
  }
}

/// The streaming example: each word of `text` as one chunk, "word\n", after waiting
/// `delay` before each. A coroutine on the I/O thread: a timer waits, no thread is held per stream.
/// Memory: the text it was given plus one chunk. The next word is found as the stream goes
/// (word_stream::next_word), never an index of every word first: for a body of one-letter words
/// such an index costs 8x the body, held for the whole deadline.
auto word_streamer(std::chrono::milliseconds delay) {
  namespace net = boost::asio;
  return [delay](bt::examples::word_stream& s, bt::stream_writer& out) -> net::awaitable<void> {
    net::steady_timer timer(co_await net::this_coro::executor);
    std::string chunk;
    // `word` views s.text, which outlives the handler; the position advances past each word.
    for (std::size_t pos = 0;
         const auto word = bt::examples::word_stream::next_word(s.text, pos);) {
      if (delay.count() > 0) {
        timer.expires_after(delay);
        auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
        if (ec) co_return;  // the deadline passed or the axon is stopping
      }
      chunk.assign(*word);
      chunk.push_back('\n');
      if (!co_await out.send(chunk)) co_return;  // client gone, deadline, or stopping
    }
  };
}

/// "HOST:PORT" with a numeric host ("[::1]:9100" for IPv6) and a port 0-65535, for
/// --admin.listen; otherwise the reason (CLI11 check).
std::string check_host_port(const std::string& v) {
  const auto colon = v.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == v.size())
    return "expected HOST:PORT, e.g. 127.0.0.1:9100";
  std::string host = v.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  if (ec) return "the host must be a numeric IP address (e.g. 127.0.0.1 or [::1])";
  const std::string port = v.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return "the port must be a number from 0 to 65535";
  return {};
}

/// Counts of `before` not in `after` (removed) and of `after` not in `before` (added).
template <class Set>
std::pair<std::size_t, std::size_t> added_removed(const Set& before, const Set& after) {
  std::size_t added = 0, removed = 0;
  for (const auto& k : after)
    if (!before.count(k)) ++added;
  for (const auto& k : before)
    if (!after.count(k)) ++removed;
  return {added, removed};
}

/// What a new policy metagraph changes against the current one (none before: all added).
struct metagraph_change {
  std::size_t size = 0, added = 0, removed = 0, changed = 0;  // changed: stake or permit
  bool any() const { return added + removed + changed > 0; }
  std::string describe() const {
    return fmt::format("{} neurons (+{} -{}, {} changed)", size, added, removed, changed);
  }
};

metagraph_change metagraph_changes(const std::optional<bt::miner::neuron_map>& current,
                                   const bt::miner::neuron_map& next) {
  std::unordered_set<std::string> before, after;
  metagraph_change c;
  c.size = next.size();
  if (current)
    for (const auto& [k, n] : *current) before.insert(k);
  for (const auto& [k, n] : next) {
    after.insert(k);
    if (current) {
      const auto it = current->find(k);
      if (it != current->end() &&
          (it->second.stake != n.stake || it->second.validator_permit != n.validator_permit))
        ++c.changed;
    }
  }
  std::tie(c.added, c.removed) = added_removed(before, after);
  return c;
}

/// SIGHUP: re-reads the deny list and metagraph files and swaps in the new policy whole
/// (policy_holder::update); logs what changed. A file that cannot be used leaves the current
/// policy in place (logged).
void reload_policy(bt::miner::policy_holder& policy, const std::string& deny_file,
                   const std::string& metagraph_file, spdlog::logger& log) {
  if (deny_file.empty() && metagraph_file.empty()) {
    log.info("SIGHUP: no --blacklist.hotkeys or --metagraph file to reload");
    return;
  }
  try {
    // Both files are read (and may fail) before anything changes; the swap then edits the
    // current snapshot under policy_holder's writer lock, so a chain refresh running meanwhile
    // (--netuid) is neither lost nor overwritten.
    std::optional<std::unordered_set<std::string>> denied;
    std::optional<bt::miner::neuron_map> metagraph;
    if (!deny_file.empty()) denied = bt::miner::load_deny_list(deny_file);
    if (!metagraph_file.empty()) metagraph = bt::miner::load_metagraph(metagraph_file);
    std::string changes;
    policy.update([&](bt::miner::access_policy& current) {
      if (denied) {
        const auto [added, removed] = added_removed(current.denied, *denied);
        changes += fmt::format("deny list {}: {} hotkeys (+{} -{})", deny_file, denied->size(),
                               added, removed);
        current.denied = std::move(*denied);
      }
      if (metagraph) {
        if (!changes.empty()) changes += "; ";
        changes += fmt::format("metagraph {}: {}", metagraph_file,
                               metagraph_changes(current.metagraph, *metagraph).describe());
        current.metagraph = std::move(*metagraph);
      }
    });
    log.info("SIGHUP: policy reloaded: {}", changes);
  } catch (const std::exception& e) {
    log.error("SIGHUP: reload failed, keeping the current policy: {}", e.what());
  }
}

/// Set once shutdown begins: releases the Hang test route's handlers.
std::atomic<bool> g_stopping{false};

std::shared_ptr<const bt::synapse_descriptor> test_descriptor(
    std::string name, const std::vector<bt::dynamic_field_spec>& fields,
    const std::vector<std::string>& hash_fields = {}) {
  bt::error err;
  auto d = bt::make_dynamic_descriptor(std::move(name), fields, hash_fields, err);
  if (err) throw std::runtime_error("test route descriptor: " + err.message());
  return d;
}

/// --test-routes: Throw, Hang and Big (see the top of this file).
void attach_test_routes(bt::axon& ax) {
  ax.attach(test_descriptor("Throw", {}), [](bt::dynamic_synapse&, const bt::request_context&) {
    throw std::runtime_error("bt-axon --test-routes: Throw always throws");
  });
  ax.attach(test_descriptor("Hang", {}), [](bt::dynamic_synapse&, const bt::request_context&) {
    // Deliberately ignores ctx.cancelled(): a handler stuck for good, until shutdown.
    while (!g_stopping.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  ax.attach(test_descriptor("Big", {{"size", bt::field_kind::required}, {"data"}}, {"size"}),
            [](bt::dynamic_synapse& s, const bt::request_context&) {
              const bt::json* size = s.get("size");
              if (!size || !size->is_number_integer())
                throw bt::forward_error(400, "size must be an integer");
              const auto n = size->get<std::int64_t>();
              if (n < 0 || n > (std::int64_t{16} << 20))
                throw bt::forward_error(400, "size must be between 0 and 16777216");
              *s.get("data") = std::string(static_cast<std::size_t>(n), 'x');
            });
}

}  // namespace

int main(int argc, char** argv) {
  bt::cli::keep_freed_heap_memory();  // before any thread: see heap_policy.hpp
  CLI::App app{"bt-axon: a reference Bittensor miner on the C++ axon (ping, Dummy, WordStream)"};
  bt::wallet_config wcfg = bt::wallet_config::from_env();
  std::string uri;
  std::string ip = "[::]";
  int port = 8091;
  std::string external_ip;
  int external_port = 0;
  std::size_t max_workers = 10;
  bool debug = false;
  std::string deny_file, metagraph_file;
  // --netuid: the policy metagraph from the chain, refreshed (chain_policy.hpp).
  std::uint16_t netuid = 0;
  bt::cli::endpoint_config chain_cfg;
  unsigned refresh_s = 300;
  bool allow_non_registered = false, force_validator_permit = false, insecure = false;
  bool test_routes = false;
  std::string admin_listen;
  bt::miner::log_config log_cfg;
  // The replay store (bt::memory_nonce_store; docs/axon.md "Nonces").
  const bt::memory_nonce_store::options nonce_defaults;
  std::string nonce_rule_name = "window";
  std::string nonce_store_spec = "memory";  // or a redis:// URL (bt::redis_nonce_store)
  // The Redis store's own settings (docs/deployment.md "Replay store in Redis").
  const bt::redis_nonce_store::options redis_defaults;
  std::string redis_key_prefix = redis_defaults.key_prefix;
  unsigned redis_timeout_ms = static_cast<unsigned>(redis_defaults.timeout.count());
  std::size_t redis_connections = redis_defaults.connections;
  std::size_t nonce_window = nonce_defaults.window;
  std::size_t nonce_max_records = nonce_defaults.max_entries;
  std::size_t nonce_max_per_hotkey = nonce_defaults.max_entries_per_hotkey;
  std::size_t nonce_max_kept = nonce_defaults.max_kept_nonces;
  int stream_delay_ms = 0;
  const bt::axon_options defaults;
  std::size_t io_threads = defaults.io_threads;
  std::size_t max_queued = defaults.max_queued_requests;
  std::uint32_t max_header_bytes = defaults.max_header_bytes;
  std::uint64_t max_body_bytes = defaults.max_body_bytes;
  std::size_t idle_buffer_bytes = defaults.idle_buffer_bytes;
  // Epistula requests (docs/protocol.md 12.2): the timestamp window and the Signed-For rule.
  std::uint32_t epistula_past_ms =
      static_cast<std::uint32_t>(defaults.epistula_past_window.count());
  std::uint32_t epistula_future_ms =
      static_cast<std::uint32_t>(defaults.epistula_future_window.count());
  std::string epistula_require_signed_for = defaults.epistula_require_signed_for ? "on" : "off";
  std::size_t max_connections = defaults.max_connections;
  double header_timeout_s = std::chrono::duration<double>(defaults.header_timeout).count();
  double body_timeout_s = std::chrono::duration<double>(defaults.body_timeout).count();
  std::uint64_t body_min_rate = defaults.body_min_rate;
  // Sessions between our own ends (docs/protocol.md section 13): on unless --axon.sessions off.
  std::string sessions = "on";
  // Response signatures (PROTOCOL 5.15): on unless --axon.sign_responses off.
  std::string sign_responses = defaults.sign_responses ? "on" : "off";
  std::uint64_t session_max_requests = defaults.session_max_requests;
  std::uint64_t session_max_seconds = defaults.session_max_seconds;
  // Behind a load balancer (docs/axon.md "Behind a load balancer").
  bool reuse_port = false, proxy_protocol = false;
  std::string trusted_proxies_text;

  app.add_option("--wallet.path", wcfg.path, "Wallet directory")
      ->envname("BT_WALLET_PATH")
      ->capture_default_str();
  app.add_option("--wallet.name", wcfg.name, "Wallet name")
      ->envname("BT_WALLET_NAME")
      ->capture_default_str();
  app.add_option("--wallet.hotkey", wcfg.hotkey, "Hotkey name")
      ->envname("BT_WALLET_HOTKEY")
      ->capture_default_str();
  app.add_option("--uri", uri,
                 "Serve with the key of this secret URI instead of a wallet (e.g. //Bob)");
  app.add_option("--axon.ip", ip, "Bind address ([::] dual-stack, 0.0.0.0 IPv4 only)")
      ->envname("BT_AXON_IP")
      ->capture_default_str();
  app.add_option("--axon.port", port, "TCP port (0: any free port)")
      ->envname("BT_AXON_PORT")
      ->check(bt::cli::in_range(0, 65535))
      ->capture_default_str();
  app.add_option("--axon.external_ip", external_ip,
                 "Address published in AxonInfo: an IP literal, never resolved (validators "
                 "connect to it without DNS; a name resolved here could give a private address) "
                 "(default: the bind address)")
      ->envname("BT_AXON_EXTERNAL_IP");
  app.add_option("--axon.external_port", external_port,
                 "Port published in AxonInfo (default: the bound port)")
      ->envname("BT_AXON_EXTERNAL_PORT")
      ->check(bt::cli::in_range(0, 65535));
  app.add_option("--axon.max_workers", max_workers, "Worker threads for forward functions")
      ->envname("BT_AXON_MAX_WORKERS")
      ->check(bt::cli::in_range<std::size_t>(1, 4096))
      ->capture_default_str();
  app.add_option("--axon.io_threads", io_threads, "Network threads (0: hardware threads)")
      ->check(bt::cli::in_range<std::size_t>(0, 1024))
      ->capture_default_str();
  app.add_option("--axon.max_queued_requests", max_queued,
                 "Admitted requests waiting beyond the running ones; full: 503")
      ->check(bt::cli::in_range<std::size_t>(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--axon.max_header_bytes", max_header_bytes, "Request line + headers; larger: 431")
      ->check(bt::cli::in_range<std::uint32_t>(1024, 1 << 24))
      ->capture_default_str();
  app.add_option("--axon.max_body_bytes", max_body_bytes, "Request body; larger: 413")
      ->check(bt::cli::in_range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--axon.idle_buffer_bytes", idle_buffer_bytes,
                 "Body buffers idle keep-alive connections keep for their next request, in total "
                 "over the axon; 0: never keep")
      ->check(bt::cli::in_range(std::size_t{0}, std::size_t{1} << 34))
      ->capture_default_str();
  app.add_option("--axon.epistula_past_ms", epistula_past_ms,
                 "Epistula requests: milliseconds an Epistula-Timestamp may lie in the past; "
                 "older: 401")
      ->check(bt::cli::in_range(0u, 86'400'000u))
      ->capture_default_str();
  app.add_option("--axon.epistula_future_ms", epistula_future_ms,
                 "Epistula requests: milliseconds an Epistula-Timestamp may lie ahead of this "
                 "axon's clock; further: 401")
      ->check(bt::cli::in_range(0u, 86'400'000u))
      ->capture_default_str();
  app.add_option("--axon.epistula_require_signed_for", epistula_require_signed_for,
                 "on: refuse an Epistula request without Epistula-Signed-For (400); off: accept "
                 "it (a present one must still be this axon's hotkey)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--axon.nonce_rule", nonce_rule_name,
                 "Replay rule per (hotkey, uuid): window (reordering tolerated), "
                 "strictly_increasing (Python's), unique")
      ->check(CLI::IsMember({"window", "strictly_increasing", "unique"}))
      ->capture_default_str();
  app.add_option("--nonce_store", nonce_store_spec,
                 "Replay store: memory (this process), or redis://[:password@]host:port/db shared "
                 "by a fleet (password also from BT_REDIS_PASSWORD; fails closed: 503 while Redis "
                 "is unreachable)")
      ->check([](const std::string& v) -> std::string {
        if (v == "memory") return {};
        try {
          (void)bt::redis_nonce_store::parse_url(v);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      })
      ->capture_default_str();
  // Meaningful only with a redis:// store; given with `memory`, a usage error after parsing.
  CLI::Option* redis_prefix_flag =
      app.add_option("--nonce_store.key_prefix", redis_key_prefix,
                     "With a redis:// --nonce_store: prefix of the replay keys (at most 64 "
                     "printable ASCII characters, no spaces; fleets sharing one Redis database "
                     "need the same one, other users of it a different one)")
          ->check([](const std::string& v) -> std::string {
            if (v.size() > 64) return "at most 64 bytes, got " + std::to_string(v.size());
            for (const char c : v)
              if (c <= ' ' || c > '~')
                return "'" + v + "': only printable ASCII characters without spaces";
            return {};
          })
          ->capture_default_str();
  CLI::Option* redis_timeout_flag =
      app.add_option("--nonce_store.timeout_ms", redis_timeout_ms,
                     "With a redis:// --nonce_store: milliseconds a replay check may wait for "
                     "Redis; later: 503 with Retry-After (the request is not accepted)")
          ->check(bt::cli::in_range(1u, 60'000u))
          ->capture_default_str();
  CLI::Option* redis_connections_flag =
      app.add_option("--nonce_store.connections", redis_connections,
                     "With a redis:// --nonce_store: connections to Redis, spread over the I/O "
                     "threads, at least one each (requests are pipelined on each)")
          ->check(bt::cli::in_range(std::size_t{1}, std::size_t{64}))
          ->capture_default_str();
  app.add_option("--axon.nonce_window", nonce_window,
                 "window rule: nonces kept per caller endpoint (reordering tolerated)")
      ->check(bt::cli::in_range(std::size_t{1}, std::size_t{1} << 16))
      ->capture_default_str();
  app.add_option("--axon.nonce_max_records", nonce_max_records,
                 "Replay records in all; full: new callers get 503 until records expire")
      ->check(bt::cli::in_range(std::size_t{1}, std::size_t{1} << 28))
      ->capture_default_str();
  app.add_option("--axon.nonce_max_records_per_hotkey", nonce_max_per_hotkey,
                 "Replay records one hotkey may hold (0: no quota); beyond: 503 for it")
      ->check(bt::cli::in_range(std::size_t{0}, std::size_t{1} << 28))
      ->capture_default_str();
  app.add_option("--axon.nonce_max_kept", nonce_max_kept,
                 "window rule: nonces (8 bytes each) all windows together may hold")
      ->check(bt::cli::in_range(std::size_t{0}, std::size_t{1} << 30))
      ->capture_default_str();
  app.add_option("--axon.max_connections", max_connections,
                 "Open connections; beyond: accepted and closed at once")
      ->check(bt::cli::in_range<std::size_t>(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--axon.header_timeout", header_timeout_s,
                 "Seconds from a connection's (or request's) first byte to the end of its headers")
      ->check(bt::cli::in_range(0.01, 3600.0))
      ->capture_default_str();
  app.add_option("--axon.body_timeout", body_timeout_s,
                 "Seconds a request body may take after its head, plus 1 s per body_min_rate bytes "
                 "received; later: 408 and close")
      ->check(bt::cli::in_range(0.01, 3600.0))
      ->capture_default_str();
  app.add_option("--axon.body_min_rate", body_min_rate,
                 "Bytes per second a request body must keep up after body_timeout")
      ->check(bt::cli::in_range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--axon.sessions", sessions,
                 "on: answer a dendrite's bt-session-offer and then take MAC'd requests on that "
                 "connection (PROTOCOL 13); off: ignore offers, as a Python axon does")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--axon.sign_responses", sign_responses,
                 "on: sign every answer (bt-response-signature, PROTOCOL 5.15); off: answer "
                 "unsigned, as a Python axon does")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--axon.session_max_requests", session_max_requests,
                 "Requests one session may carry, the opening one included; the last is answered "
                 "with Connection: close")
      ->check(bt::cli::in_range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--axon.session_max_seconds", session_max_seconds,
                 "Seconds a session lasts from its accept")
      ->check(bt::cli::in_range(std::uint64_t{1}, std::uint64_t{366 * 86400}))
      ->capture_default_str();
  app.add_option("--stream.delay_ms", stream_delay_ms,
                 "WordStream: milliseconds to wait before each streamed word")
      ->check(bt::cli::in_range(0, 3'600'000))
      ->capture_default_str();
  app.add_flag("--test-routes", test_routes,
               "Tests only: add the Throw, Hang and Big routes that misbehave on purpose");
  app.add_flag("--logging.debug", debug, "Debug logging (one access line per request) on stderr");
  app.add_option("--logging.format", log_cfg.format,
                 "text, or json: one JSON object per line (ts, level, logger, thread, msg)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--logging.file", log_cfg.file,
                 "Log to this file instead of stderr, rotated by size (--logging.max_bytes, "
                 "--logging.max_files)");
  app.add_option("--logging.max_bytes", log_cfg.max_bytes,
                 "With --logging.file: rotate when the file reaches this size")
      ->check(bt::cli::in_range(std::size_t{4096}, std::size_t{1} << 40))
      ->capture_default_str();
  app.add_option("--logging.max_files", log_cfg.max_files,
                 "With --logging.file: rotated files kept (FILE.1 ... FILE.N)")
      ->check(bt::cli::in_range(std::size_t{1}, std::size_t{1000}))
      ->capture_default_str();
  app.add_option("--admin.listen", admin_listen,
                 "HOST:PORT of the admin listener (GET /metrics, /healthz, /readyz); off unless "
                 "given. Bind it to loopback or a private network: it is not authenticated")
      ->envname("BT_ADMIN_LISTEN")
      ->check(check_host_port);
  app.add_option("--blacklist.hotkeys", deny_file,
                 "Deny list: a file with one SS58 hotkey per line")
      ->check(CLI::ExistingFile);
  app.add_option("--metagraph", metagraph_file,
                 "JSON list of {hotkey, stake, validator_permit}: enables the registration rules, "
                 "priority = stake")
      ->check(CLI::ExistingFile);
  const CLI::Option* netuid_flag = app.add_option(
      "--netuid", netuid,
      "Read the metagraph of this subnet from the chain (--subtensor.*) at start-up and "
      "every --metagraph.refresh_s; instead of --metagraph FILE");
  bt::cli::add_endpoint_flags(&app, chain_cfg, "--subtensor.timeout");
  app.add_option("--metagraph.refresh_s", refresh_s,
                 "With --netuid: seconds between metagraph refreshes")
      ->check(bt::cli::in_range(1u, 86400u))
      ->capture_default_str();
  app.add_flag("--blacklist.allow_non_registered", allow_non_registered,
               "With --metagraph: serve hotkeys that are not in it");
  app.add_flag("--blacklist.force_validator_permit", force_validator_permit,
               "With --metagraph: serve only hotkeys with a validator permit");
  app.add_flag("--axon.reuse_port", reuse_port,
               "SO_REUSEPORT: several processes may listen on the same port (the kernel spreads "
               "connections)");
  app.add_flag("--axon.proxy_protocol", proxy_protocol,
               "Every connection starts with a PROXY protocol v1/v2 header (HAProxy send-proxy-v2) "
               "from a trusted proxy; the caller's address is taken from it");
  app.add_option("--axon.trusted_proxies", trusted_proxies_text,
                 "CIDR[,CIDR...]: peers allowed to send the PROXY header (with "
                 "--axon.proxy_protocol)")
      ->envname("BT_AXON_TRUSTED_PROXIES");
  app.add_flag(
      "--insecure-skip-verification", insecure,
      "Benchmarks only: no signature or nonce checks (refused unless --axon.ip is loopback)");
  // Bad usage exits 2 with a message naming the flag (bt_cli.hpp).
  if (const auto rc = bt::cli::parse(app, argc, argv)) return *rc;
  std::vector<std::string> trusted_proxies;
  try {
    if (!trusted_proxies_text.empty())
      for (const auto& block : bt::proxy_protocol::parse_cidr_list(trusted_proxies_text))
        trusted_proxies.push_back(block.to_string());
  } catch (const std::invalid_argument& e) {
    std::cerr << "bt-axon: --axon.trusted_proxies: " << e.what() << "\n";
    return 2;
  }
  if (proxy_protocol != !trusted_proxies.empty()) {
    std::cerr << "bt-axon: --axon.proxy_protocol and --axon.trusted_proxies CIDR[,CIDR...] go "
                 "together (without trusted proxies every connection would be refused)\n";
    return 2;
  }
  if (nonce_store_spec == "memory")
    for (const CLI::Option* flag : {redis_prefix_flag, redis_timeout_flag, redis_connections_flag})
      if (flag->count() > 0) {
        std::cerr << "bt-axon: " << flag->get_name()
                  << " applies to a redis:// --nonce_store only (the store is 'memory')\n";
        return 2;
      }
  std::string ip_resolved;
  try {
    ip = bind_address(ip, ip_resolved);
  } catch (const usage_error& e) {
    std::cerr << "bt-axon: " << e.message << "\n";
    return 2;
  }
  if (!external_ip.empty()) {
    std::string bare = external_ip;
    if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']')
      bare = bare.substr(1, bare.size() - 2);
    boost::system::error_code ec;
    boost::asio::ip::make_address(bare, ec);
    if (ec) {
      std::cerr << "bt-axon: --axon.external_ip '" << external_ip
                << "': not an IP address; the address published in AxonInfo must be an IP "
                   "literal such as 203.0.113.7 or [2001:db8::1] (validators connect to it "
                   "without DNS)\n";
      return 2;
    }
  }

  std::shared_ptr<spdlog::logger> log;
  try {
    log = bt::miner::make_logger("bt-axon", log_cfg);
  } catch (const spdlog::spdlog_ex& e) {
    std::cerr << "bt-axon: --logging.file '" << log_cfg.file << "': " << e.what() << "\n";
    return 2;
  }
  log->set_level(debug ? spdlog::level::debug : spdlog::level::info);
  if (!ip_resolved.empty()) log->info("--axon.ip: the host name resolved to {}", ip_resolved);

  try {
    // ---- identity ----
    std::optional<bt::keypair> hotkey;
    std::string coldkey;
    if (!uri.empty()) {
      hotkey = bt::keypair::from_uri(uri);
    } else {
      const bt::wallet w(wcfg);
      bt::error err;
      hotkey = w.load_hotkey(err);
      if (!hotkey) {
        log->error("cannot load hotkey {} of wallet {} at {}: {}", wcfg.hotkey, wcfg.name,
                   w.directory().string(), err.message());
        return 1;
      }
      bt::error cerr;
      if (auto ck = w.coldkeypub_ss58(cerr)) {
        coldkey = *ck;
      } else {
        log->warn("no coldkeypub.txt in {} ({}); AxonInfo.coldkey will be empty",
                  w.directory().string(), cerr.message());
      }
    }

    // ---- policy ----
    bt::miner::access_policy initial_policy;
    initial_policy.allow_non_registered = allow_non_registered;
    initial_policy.force_validator_permit = force_validator_permit;
    try {
      if (!deny_file.empty()) initial_policy.denied = bt::miner::load_deny_list(deny_file);
      if (!metagraph_file.empty())
        initial_policy.metagraph = bt::miner::load_metagraph(metagraph_file);
    } catch (const bt::miner::policy_file_error& e) {
      log->error("{}", e.what());
      return 2;
    }
    // --netuid: fail closed. A miner that cannot read its subnet's metagraph at start-up exits 1
    // rather than serve without the registration rules; later failed refreshes keep the last one.
    std::optional<bt::miner::metagraph_refresher> refresher;
    if (netuid_flag->count() > 0) {
      if (!metagraph_file.empty()) {
        std::cerr << "bt-axon: --netuid and --metagraph FILE are exclusive (the chain or a file)\n";
        return 2;
      }
      bt::error eerr;
      const auto ep = bt::cli::resolve(chain_cfg, eerr);
      if (!ep) {
        std::cerr << "bt-axon: " << eerr.message() << "\n";
        return 2;
      }
      refresher.emplace(*ep, bt::cli::client_options(chain_cfg), netuid,
                        std::chrono::seconds(refresh_s), log);
      try {
        const bt::metagraph m = refresher->read_now();
        initial_policy.metagraph = bt::miner::to_neuron_map(m);
        log->info("metagraph of subnet {} from {}: block {}, {} neurons; refreshed every {} s",
                  netuid, ep->url(), m.block, m.neurons.size(), refresh_s);
      } catch (const std::exception& e) {  // bt::subtensor_error, or out of memory
        log->error("cannot read the metagraph of subnet {} from {}: {}", netuid, ep->url(),
                   e.what());
        return 1;
      }
    }
    if (!initial_policy.metagraph && (allow_non_registered || force_validator_permit))
      log->warn("--blacklist.* registration rules need --metagraph; only the deny list applies");
    log->info("policy: {}", initial_policy.describe());
    bt::miner::policy_holder policy(std::move(initial_policy));
    if (refresher) {
      // Off the request path: a refresh swaps in the whole policy with the new metagraph,
      // keeping whatever deny list and rules the current one has. What changed is logged.
      refresher->start([&policy, &log, netuid](const bt::metagraph& m) {
        auto next = bt::miner::to_neuron_map(m);
        metagraph_change change;
        policy.update([&](bt::miner::access_policy& p) {
          change = metagraph_changes(p.metagraph, next);
          p.metagraph = std::move(next);
        });
        if (change.any())
          log->info("policy metagraph of subnet {} from the chain (block {}): {}", netuid, m.block,
                    change.describe());
      });
    }
    // Stops the refresher before `policy` goes, on every way out of this scope.
    struct stop_refresher {
      std::optional<bt::miner::metagraph_refresher>& r;
      ~stop_refresher() {
        if (r) r->stop();
      }
    } const refresher_guard{refresher};

    // ---- axon ----
    bt::axon_options o;
    std::shared_ptr<bt::redis_nonce_store> redis_store;  // with a redis:// --nonce_store
    o.ip = ip;
    o.port = static_cast<std::uint16_t>(port);
    o.external_ip = external_ip;
    o.external_port = static_cast<std::uint16_t>(external_port);
    o.coldkey = coldkey;
    o.max_workers = max_workers;
    o.io_threads = io_threads;
    o.max_queued_requests = max_queued;
    o.max_header_bytes = max_header_bytes;
    o.max_body_bytes = max_body_bytes;
    o.idle_buffer_bytes = idle_buffer_bytes;
    o.epistula_past_window = std::chrono::milliseconds(epistula_past_ms);
    o.epistula_future_window = std::chrono::milliseconds(epistula_future_ms);
    o.epistula_require_signed_for = epistula_require_signed_for == "on";
    o.max_connections = max_connections;
    o.header_timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(header_timeout_s * 1000));
    o.body_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(body_timeout_s * 1000));
    o.body_min_rate = body_min_rate;
    o.accept_sessions = sessions == "on";
    o.sign_responses = sign_responses == "on";
    o.session_max_requests = session_max_requests;
    o.session_max_seconds = session_max_seconds;
    o.insecure_skip_verification = insecure;
    o.reuse_port = reuse_port;
    o.proxy_protocol = proxy_protocol;
    o.trusted_proxies = trusted_proxies;
    {
      bt::memory_nonce_store::options n = nonce_defaults;
      n.rule = nonce_rule_name == "unique"                ? bt::nonce_rule::unique
               : nonce_rule_name == "strictly_increasing" ? bt::nonce_rule::strictly_increasing
                                                          : bt::nonce_rule::window;
      n.window = nonce_window;
      n.max_entries = nonce_max_records;
      n.max_entries_per_hotkey = nonce_max_per_hotkey;
      n.max_kept_nonces = nonce_max_kept;
      if (nonce_store_spec == "memory") {
        o.nonces = std::make_shared<bt::memory_nonce_store>(n);
      } else {
        bt::redis_nonce_store::options r;
        r.url = nonce_store_spec;
        r.rule = n.rule;
        r.window = n.window;
        r.key_prefix = redis_key_prefix;
        r.timeout = std::chrono::milliseconds(redis_timeout_ms);
        r.connections = redis_connections;
        r.logger = log;
        redis_store = std::make_shared<bt::redis_nonce_store>(r);
        o.nonces = redis_store;
      }
    }
    o.admin_listen = admin_listen;
    o.logger = log;
    raise_fd_limit(o.max_connections, *log);

    bt::axon ax(std::move(*hotkey), o);
    const bt::route_options route_policy{
        .blacklist =
            [&policy](const bt::synapse&, const bt::request_context& caller) {
              return policy.current()->blacklist(caller.hotkey);
            },
        .priority =
            [&policy](const bt::synapse&, const bt::request_context& caller) {
              return policy.current()->priority(caller.hotkey);
            },
        .verify = {}};
    ax.set_route_options("Synapse", route_policy);  // the built-in ping, with the policy
    ax.attach<bt::examples::dummy>(
        [](bt::examples::dummy& s) {
          std::int64_t out = 0;
          if (__builtin_mul_overflow(s.dummy_input, 2, &out))
            throw bt::forward_error(400, "dummy_input * 2 does not fit in 64 bits");
          s.dummy_output = out;
        },
        route_policy);
    ax.attach<bt::examples::word_stream>(word_streamer(std::chrono::milliseconds(stream_delay_ms)),
                                         route_policy);
    // POST /echo, an Epistula route (bt/examples/echo_route.hpp: the JSON body back with the
    // verified signer), under the miner's policy like the synapses.
    bt::examples::attach_echo_route(ax, {.blacklist =
                                             [&policy](const bt::request_context& caller) {
                                               return policy.current()->blacklist(caller.hotkey);
                                             },
                                         .priority =
                                             [&policy](const bt::request_context& caller) {
                                               return policy.current()->priority(caller.hotkey);
                                             }});
    if (test_routes) {
      attach_test_routes(ax);
      log->warn("--test-routes: the Throw, Hang and Big routes are attached (tests only)");
    }

    // Signals are caught from now on (a SIGTERM during start-up also drains).
    boost::asio::io_context signal_ioc(1);
    boost::asio::signal_set signals(signal_ioc, SIGINT, SIGTERM);
    int received = 0;
    // SIGHUP re-reads the policy files, on this (main) thread, and with --netuid asks the
    // refresher for a chain read at once (on its own thread), as often as it comes, until
    // SIGINT or SIGTERM.
    boost::asio::signal_set reload_signal(signal_ioc, SIGHUP);
    std::function<void()> wait_for_reload = [&] {
      reload_signal.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        if (!deny_file.empty() || !metagraph_file.empty() || !refresher)
          reload_policy(policy, deny_file, metagraph_file, *log);
        if (refresher) {
          log->info("SIGHUP: refreshing the metagraph of subnet {} from the chain", netuid);
          refresher->refresh_now();
        }
        wait_for_reload();
      });
    };
    wait_for_reload();
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (!ec) received = sig;
      boost::system::error_code ignored;
      reload_signal.cancel(ignored);
    });

    std::error_code ec;
    ax.start(ec);
    if (ec) {
      // The listener that failed (public or admin) has logged its own line above.
      log->error("cannot start the axon on {}:{}: {}", ip, port, ec.message());
      return 1;
    }
    if (redis_store) {
      // The store connects on the axon's I/O threads, attached by start(). Not fatal: until
      // Redis answers, requests get 503 (fail closed) and the store retries.
      if (!redis_store->wait_ready(std::chrono::seconds(2)))
        log->warn("replay store: redis {} not ready yet ({}); answering 503 until it is",
                  redis_store->where(), redis_store->unavailable_reason());
      else
        log->info("replay store: redis {}", redis_store->where());
    }
    const bt::axon_info info = ax.info();
    // The ready line is AxonInfo's JSON without the two placeholders, plus the admin listener's
    // bound port when there is one (docs/axon.md), so scripts can ask for port 0 on both.
    bt::json line = bt::to_json_value(info);
    line.erase("placeholder1");
    line.erase("placeholder2");
    if (!admin_listen.empty()) line["admin_port"] = ax.admin_port();
    std::cout << line.dump(-1, ' ', false, bt::json::error_handler_t::replace)
              << std::endl;  // flushed: scripts wait for this line

    signal_ioc.run();
    log->info("{}: draining and stopping", received == SIGINT ? "SIGINT" : "SIGTERM");
    g_stopping = true;                 // releases Hang handlers so that the drain can finish
    if (refresher) refresher->stop();  // prompt, even with a chain read in flight
    ax.stop();
    return 0;
  } catch (const std::exception& e) {
    log->error("{}", e.what());
    return 1;
  }
}
