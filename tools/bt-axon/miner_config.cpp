#include "miner_config.hpp"

#include "axon_flags.hpp"

#include <bt_cli.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <iostream>
#include <stdexcept>

namespace bt::miner {
namespace {

/// --axon.ip as an IP literal for bt::axon_options::ip (which takes only literals): a literal
/// ("127.0.0.1", "::1", "[::]") is returned as given; a host name ("localhost") is resolved and
/// its first address returned (`resolved` names it, for the log). Anything else throws
/// std::invalid_argument naming the flag and what it accepts.
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
    throw std::invalid_argument("--axon.ip '" + value + "': not an IP address or a host name; " +
                                accepts);
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::resolver resolver(ioc);
  const auto results =
      resolver.resolve(bare, "", boost::asio::ip::resolver_base::numeric_service, ec);
  if (ec || results.empty())
    throw std::invalid_argument("--axon.ip '" + value + "': the host name does not resolve (" +
                                (ec ? ec.message() : std::string("no address")) + "); " + accepts);
  const auto address = results.begin()->endpoint().address();
  resolved = address.to_string();
  return address.is_v6() ? "[" + resolved + "]" : resolved;
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

/// The flags of identity, policy and logging.
void add_miner_flags(CLI::App& app, miner_config& cfg) {
  app.add_option("--wallet.path", cfg.wallet.path, "Wallet directory")
      ->envname("BT_WALLET_PATH")
      ->capture_default_str();
  app.add_option("--wallet.name", cfg.wallet.name, "Wallet name")
      ->envname("BT_WALLET_NAME")
      ->capture_default_str();
  app.add_option("--wallet.hotkey", cfg.wallet.hotkey, "Hotkey name")
      ->envname("BT_WALLET_HOTKEY")
      ->capture_default_str();
  app.add_option("--uri", cfg.uri,
                 "Serve with the key of this secret URI instead of a wallet (e.g. //Bob)");
  app.add_option("--stream.delay_ms", cfg.stream_delay_ms,
                 "WordStream: milliseconds to wait before each streamed word")
      ->check(bt::cli::in_range(0, 3'600'000))
      ->capture_default_str();
  app.add_flag("--test-routes", cfg.test_routes,
               "Tests only: add the Throw, Hang and Big routes that misbehave on purpose");
  app.add_flag("--logging.debug", cfg.debug,
               "Debug logging (one access line per request) on stderr");
  app.add_option("--logging.format", cfg.log.format,
                 "text, or json: one JSON object per line (ts, level, logger, thread, msg)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--logging.file", cfg.log.file,
                 "Log to this file instead of stderr, rotated by size (--logging.max_bytes, "
                 "--logging.max_files)");
  app.add_option("--logging.max_bytes", cfg.log.max_bytes,
                 "With --logging.file: rotate when the file reaches this size")
      ->check(bt::cli::in_range(std::size_t{4096}, std::size_t{1} << 40))
      ->capture_default_str();
  app.add_option("--logging.max_files", cfg.log.max_files,
                 "With --logging.file: rotated files kept (FILE.1 ... FILE.N)")
      ->check(bt::cli::in_range(std::size_t{1}, std::size_t{1000}))
      ->capture_default_str();
  app.add_option("--blacklist.hotkeys", cfg.deny_file,
                 "Deny list: a file with one SS58 hotkey per line")
      ->check(CLI::ExistingFile);
  app.add_option("--metagraph", cfg.metagraph_file,
                 "JSON list of {hotkey, stake, validator_permit}: enables the registration rules, "
                 "priority = stake")
      ->check(CLI::ExistingFile);
  app.add_option("--netuid", cfg.netuid,
                 "Read the metagraph of this subnet from the chain (--subtensor.*) at start-up and "
                 "every --metagraph.refresh_s; instead of --metagraph FILE");
  bt::cli::add_endpoint_flags(&app, cfg.chain, "--subtensor.timeout");
  app.add_option("--metagraph.refresh_s", cfg.refresh_s,
                 "With --netuid: seconds between metagraph refreshes")
      ->check(bt::cli::in_range(1u, 86400u))
      ->capture_default_str();
  app.add_flag("--blacklist.allow_non_registered", cfg.allow_non_registered,
               "With --metagraph: serve hotkeys that are not in it");
  app.add_flag("--blacklist.force_validator_permit", cfg.force_validator_permit,
               "With --metagraph: serve only hotkeys with a validator permit");
}

/// The replay store's flags; returns those that apply to a redis:// store only.
std::vector<const CLI::Option*> add_nonce_flags(CLI::App& app, miner_config& cfg) {
  app.add_option("--axon.nonce_rule", cfg.nonce_rule,
                 "Replay rule per (hotkey, uuid): window (reordering tolerated), "
                 "strictly_increasing (Python's), unique")
      ->check(CLI::IsMember({"window", "strictly_increasing", "unique"}))
      ->capture_default_str();
  app.add_option("--nonce_store", cfg.nonce_store,
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
  std::vector<const CLI::Option*> redis_only;
  redis_only.push_back(
      app.add_option("--nonce_store.key_prefix", cfg.redis.key_prefix,
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
          ->capture_default_str());
  auto& timeout = cfg.redis.timeout;
  redis_only.push_back(
      app.add_option_function<unsigned>(
             "--nonce_store.timeout_ms",
             [&timeout](const unsigned& ms) { timeout = std::chrono::milliseconds(ms); },
             "With a redis:// --nonce_store: milliseconds a replay check may wait for "
             "Redis; later: 503 with Retry-After (the request is not accepted)")
          ->check(bt::cli::in_range(1u, 60'000u))
          ->default_str(std::to_string(timeout.count())));
  redis_only.push_back(
      app.add_option("--nonce_store.connections", cfg.redis.connections,
                     "With a redis:// --nonce_store: connections to Redis, spread over the I/O "
                     "threads, at least one each (requests are pipelined on each)")
          ->check(bt::cli::in_range(std::size_t{1}, std::size_t{64}))
          ->capture_default_str());
  app.add_option("--axon.nonce_window", cfg.nonces.window,
                 "window rule: nonces kept per caller endpoint (reordering tolerated)")
      ->check(bt::cli::in_range(std::size_t{1}, std::size_t{1} << 16))
      ->capture_default_str();
  app.add_option("--axon.nonce_max_records", cfg.nonces.max_entries,
                 "Replay records in all; full: new callers get 503 until records expire")
      ->check(bt::cli::in_range(std::size_t{1}, std::size_t{1} << 28))
      ->capture_default_str();
  app.add_option("--axon.nonce_max_records_per_hotkey", cfg.nonces.max_entries_per_hotkey,
                 "Replay records one hotkey may hold (0: no quota); beyond: 503 for it")
      ->check(bt::cli::in_range(std::size_t{0}, std::size_t{1} << 28))
      ->capture_default_str();
  app.add_option("--axon.nonce_max_kept", cfg.nonces.max_kept_nonces,
                 "window rule: nonces (8 bytes each) all windows together may hold")
      ->check(bt::cli::in_range(std::size_t{0}, std::size_t{1} << 30))
      ->capture_default_str();
  return redis_only;
}

}  // namespace

std::optional<int> parse_miner_config(int argc, char** argv, miner_config& cfg) {
  CLI::App app{"bt-axon: a reference Bittensor miner on the C++ axon (ping, Dummy, WordStream)"};
  add_miner_flags(app, cfg);
  const auto redis_only = add_nonce_flags(app, cfg);
  const auto axon_flags = add_axon_flags(app, cfg.axon);
  axon_flags.at("admin_listen")->check(check_host_port);
  // Bad usage exits 2 with a message naming the flag (bt_cli.hpp).
  if (const auto rc = bt::cli::parse(app, argc, argv)) return rc;
  try {
    check_axon_flags(cfg.axon);
    if (cfg.nonce_store == "memory")
      for (const CLI::Option* flag : redis_only)
        if (flag->count() > 0)
          throw std::invalid_argument(flag->get_name() +
                                      " applies to a redis:// --nonce_store only (the store is "
                                      "'memory')");
    if (cfg.netuid && !cfg.metagraph_file.empty())
      throw std::invalid_argument(
          "--netuid and --metagraph FILE are exclusive (the chain or a file)");
    cfg.axon.ip = bind_address(cfg.axon.ip, cfg.ip_resolved);
  } catch (const std::invalid_argument& e) {
    std::cerr << "bt-axon: " << e.what() << "\n";
    return 2;
  }
  cfg.nonces.rule = cfg.nonce_rule == "unique"                ? bt::nonce_rule::unique
                    : cfg.nonce_rule == "strictly_increasing" ? bt::nonce_rule::strictly_increasing
                                                              : bt::nonce_rule::window;
  cfg.redis.url = cfg.nonce_store;
  cfg.redis.rule = cfg.nonces.rule;
  cfg.redis.window = cfg.nonces.window;
  return std::nullopt;
}

}  // namespace bt::miner
