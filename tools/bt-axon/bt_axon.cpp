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
// The --axon.* and --admin.* flags are made from bt::axon_options' table (axon_flags.hpp); the
// whole configuration is miner_config (miner_config.hpp), the routes are in miner_routes.hpp.
//
// Flags are named as bittensor names them; each value flag also reads its BT_* environment
// variable.
// Logs go to stderr; stdout carries only the AxonInfo line, so scripts can wait for it.
#include <bt/axon.hpp>
#include <bt/axon_info.hpp>

#include <bt/json.hpp>
#include <bt/redis_nonce_store.hpp>
#include <bt/wallet.hpp>

#include <bt_cli.hpp>

#include <endpoint_flags.hpp>
#include <heap_policy.hpp>

#include <log_setup.hpp>
#include <signing_key.hpp>
#include "chain_policy.hpp"
#include "miner_config.hpp"
#include "miner_policy.hpp"
#include "miner_routes.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

namespace {

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

/// The hotkey of --uri or of the wallet, and the wallet's coldkey (empty with --uri, or without
/// coldkeypub.txt: a warning). None when the wallet's hotkey cannot be loaded (logged).
std::optional<bt::keypair> load_hotkey(const bt::miner::miner_config& cfg, std::string& coldkey,
                                       spdlog::logger& log) {
  if (!cfg.uri.empty()) return bt::keypair::from_uri(cfg.uri);
  const bt::wallet w(cfg.wallet);
  bt::error err;
  std::optional<bt::keypair> hotkey = w.load_hotkey(err);
  if (!hotkey) {
    log.error("cannot load the hotkey: {}", bt::cli::hotkey_load_failure(w, err));
    return std::nullopt;
  }
  if (const std::string warning = bt::cli::exposure_warning("hotkey", w.hotkey_path());
      !warning.empty())
    log.warn("{}", warning);
  bt::error cerr;
  if (auto ck = w.coldkeypub_ss58(cerr))
    coldkey = *ck;
  else
    log.warn("no coldkeypub.txt in {} ({}); AxonInfo.coldkey will be empty", w.directory().string(),
             cerr.message());
  return hotkey;
}

/// The axon's options: the flags', plus the coldkey, the replay store --nonce_store names
/// (`redis_store` is set when it is Redis) and the logger.
bt::axon_options axon_options_of(const bt::miner::miner_config& cfg, const std::string& coldkey,
                                 const std::shared_ptr<spdlog::logger>& log,
                                 std::shared_ptr<bt::redis_nonce_store>& redis_store) {
  bt::axon_options o = cfg.axon;
  o.coldkey = coldkey;
  if (cfg.nonce_store == "memory") {
    o.nonces = std::make_shared<bt::memory_nonce_store>(cfg.nonces);
  } else {
    bt::redis_nonce_store::options r = cfg.redis;
    r.logger = log;
    redis_store = std::make_shared<bt::redis_nonce_store>(r);
    o.nonces = redis_store;
  }
  o.logger = log;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  bt::cli::keep_freed_heap_memory();  // before any thread: see heap_policy.hpp
  bt::miner::miner_config cfg;
  if (const auto rc = bt::miner::parse_miner_config(argc, argv, cfg)) return *rc;

  std::shared_ptr<spdlog::logger> log;
  try {
    log = bt::miner::make_logger("bt-axon", cfg.log);
  } catch (const spdlog::spdlog_ex& e) {
    std::cerr << "bt-axon: --logging.file '" << cfg.log.file << "': " << e.what() << "\n";
    return 2;
  }
  log->set_level(cfg.debug ? spdlog::level::debug : spdlog::level::info);
  if (!cfg.ip_resolved.empty())
    log->info("--axon.ip: the host name resolved to {}", cfg.ip_resolved);

  try {
    std::string coldkey;
    std::optional<bt::keypair> hotkey = load_hotkey(cfg, coldkey, *log);
    if (!hotkey) return 1;

    // ---- policy ----
    bt::miner::access_policy initial_policy;
    initial_policy.allow_non_registered = cfg.allow_non_registered;
    initial_policy.force_validator_permit = cfg.force_validator_permit;
    try {
      if (!cfg.deny_file.empty()) initial_policy.denied = bt::miner::load_deny_list(cfg.deny_file);
      if (!cfg.metagraph_file.empty())
        initial_policy.metagraph = bt::miner::load_metagraph(cfg.metagraph_file);
    } catch (const bt::miner::policy_file_error& e) {
      log->error("{}", e.what());
      return 2;
    }
    // --netuid: fail closed. A miner that cannot read its subnet's metagraph at start-up exits 1
    // rather than serve without the registration rules; later failed refreshes keep the last one.
    std::optional<bt::miner::metagraph_refresher> refresher;
    if (cfg.netuid) {
      const std::uint16_t netuid = *cfg.netuid;
      bt::error eerr;
      const auto ep = bt::cli::resolve(cfg.chain, eerr);
      if (!ep) {
        std::cerr << "bt-axon: " << eerr.message() << "\n";
        return 2;
      }
      refresher.emplace(*ep, bt::cli::client_options(cfg.chain), netuid,
                        std::chrono::seconds(cfg.refresh_s), log);
      try {
        const bt::metagraph m = refresher->read_now();
        initial_policy.metagraph = bt::miner::to_neuron_map(m);
        log->info("metagraph of subnet {} from {}: block {}, {} neurons; refreshed every {} s",
                  netuid, ep->url(), m.block, m.neurons.size(), cfg.refresh_s);
      } catch (const std::exception& e) {  // bt::subtensor_error, or out of memory
        log->error("cannot read the metagraph of subnet {} from {}: {}", netuid, ep->url(),
                   e.what());
        return 1;
      }
    }
    if (!initial_policy.metagraph && (cfg.allow_non_registered || cfg.force_validator_permit))
      log->warn("--blacklist.* registration rules need --metagraph; only the deny list applies");
    log->info("policy: {}", initial_policy.describe());
    bt::miner::policy_holder policy(std::move(initial_policy));
    if (refresher) {
      // Off the request path: a refresh swaps in the whole policy with the new metagraph,
      // keeping whatever deny list and rules the current one has. What changed is logged.
      refresher->start([&policy, &log, netuid = *cfg.netuid](const bt::metagraph& m) {
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
    std::shared_ptr<bt::redis_nonce_store> redis_store;  // with a redis:// --nonce_store
    const bt::axon_options o = axon_options_of(cfg, coldkey, log, redis_store);
    raise_fd_limit(o.max_connections, *log);

    bt::axon ax(std::move(*hotkey), o);
    bt::miner::attach_miner_routes(ax, policy, cfg, *log);

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
        if (!cfg.deny_file.empty() || !cfg.metagraph_file.empty() || !refresher)
          reload_policy(policy, cfg.deny_file, cfg.metagraph_file, *log);
        if (refresher) {
          log->info("SIGHUP: refreshing the metagraph of subnet {} from the chain", *cfg.netuid);
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
      // A failed admin listener has logged its own line above; a public port in use gets the
      // way out here (nothing was bound then: port() is 0).
      const bool v6 = o.ip.find(':') != std::string::npos && !o.ip.starts_with('[');
      log->error("cannot start the axon on {}{}{}:{}: {}{}", v6 ? "[" : "", o.ip, v6 ? "]" : "",
                 o.port, ec.message(),
                 ec == std::errc::address_in_use && ax.port() == 0
                     ? " (another process listens there: stop it, or choose another port; "
                       "--axon.port 0 takes any free one, which the AxonInfo line names)"
                     : "");
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
    if (!cfg.axon.admin_listen.empty()) line["admin_port"] = ax.admin_port();
    std::cout << line.dump(-1, ' ', false, bt::json::error_handler_t::replace)
              << std::endl;  // flushed: scripts wait for this line

    signal_ioc.run();
    log->info("{}: draining and stopping", received == SIGINT ? "SIGINT" : "SIGTERM");
    bt::miner::release_test_routes();  // so that the drain can finish
    if (refresher) refresher->stop();  // prompt, even with a chain read in flight
    ax.stop();
    return 0;
  } catch (const std::exception& e) {
    log->error("{}", e.what());
    return 1;
  }
}
