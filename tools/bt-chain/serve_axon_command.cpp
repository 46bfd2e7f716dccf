// `bt-chain serve-axon` (serve_axon_command.hpp).
#include "serve_axon_command.hpp"

#include <bt/chain/serve_axon.hpp>
#include <bt/json.hpp>

#include <bt/version.hpp>
#include <bt_cli.hpp>

#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>

namespace bt::cli {

namespace {

int fail(std::ostream& err, const std::string& message) {
  report_error(err, "bt-chain", error_style::json, message);
  return 2;
}

}  // namespace

CLI::App* add_serve_axon_command(CLI::App& app, serve_axon_config& cfg) {
  auto* cmd =
      app.add_subcommand("serve-axon", "Publish an axon's address on a subnet (serve_axon)");
  cmd->add_option("--netuid", cfg.netuid, "Subnet id")->required();
  cmd->add_option("--ip", cfg.ip, "Public IPv4 or IPv6 address of the axon")->required();
  cmd->add_option("--port", cfg.port, "Port of the axon")->required()->check(CLI::Range(0, 65535));
  cmd->add_option("--protocol", cfg.protocol, "AxonInfo.protocol (default 4)")
      ->check(CLI::Range(0, 255));
  cmd->add_option("--axon.version", cfg.version,
                  "AxonInfo.version (default: bittensor's version_as_int this build speaks)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{4294967295}));
  add_key_flags(*cmd, cfg.keys);
  cmd->add_flag("--dry-run", cfg.dry_run, "Print the signed extrinsic as JSON; submit nothing");
  cmd->add_option("--confirm-timeout", cfg.confirm_timeout,
                  "Seconds to wait for the axon to show in storage after submitting (default 60)")
      ->check(CLI::PositiveNumber);
  add_endpoint_flags(cmd, cfg.endpoint);
  return cmd;
}

int run_serve_axon(const serve_axon_config& cfg, std::ostream& out, std::ostream& err) {
  // Local checks first: a refused argument never reaches the network.
  const auto ip = parse_ip(cfg.ip);
  if (!ip) return fail(err, "--ip: '" + cfg.ip + "' is not an IPv4 or IPv6 address");
  serve_axon_args args;
  args.netuid = cfg.netuid;
  args.version = static_cast<std::uint32_t>(cfg.version != 0 ? cfg.version : version_as_int);
  args.ip = ip->first;
  args.ip_type = ip->second;
  args.port = static_cast<std::uint16_t>(cfg.port);
  args.protocol = static_cast<std::uint8_t>(cfg.protocol);
  try {
    check_serve_axon_args(args);
  } catch (const std::system_error& e) {
    return fail(err, std::string("refused locally: ") + e.what());
  }
  std::optional<keypair> hotkey;
  try {
    hotkey.emplace(signing_hotkey(cfg.keys));
  } catch (const std::invalid_argument& e) {
    return fail(err, e.what());
  }
  error eerr;
  const auto ep = resolve(cfg.endpoint, eerr);
  if (!ep) return fail(err, eerr.message());

  try {
    rpc_client client(*ep, client_options(cfg.endpoint));
    const serve_axon_plan plan = prepare_serve_axon(client, *hotkey, args);
    if (cfg.dry_run) {
      out << dry_run_json(plan).dump(-1, ' ', false, bt::json::error_handler_t::replace)
          << std::endl;
      return 0;
    }
    const auto c = submit_serve_axon(
        client, plan, *hotkey,
        std::chrono::milliseconds(static_cast<long long>(cfg.confirm_timeout * 1000.0)));
    out << json{{"extrinsic_hash", c.extrinsic_hash},
                {"netuid", args.netuid},
                {"hotkey", hotkey->ss58_address()},
                {"ip", cfg.ip},
                {"port", args.port},
                {"ip_type", args.ip_type},
                {"protocol", args.protocol},
                {"version", args.version}}
               .dump(-1, ' ', false, bt::json::error_handler_t::replace)
        << std::endl;
    return 0;
  } catch (const rpc_call_error& e) {
    return fail(err, ep->url() + ": " + e.what());
  } catch (const chain_decode_error& e) {
    return fail(err, e.what());
  } catch (const std::system_error& e) {
    return fail(err, e.what());
  } catch (const std::exception& e) {
    return fail(err, e.what());
  }
}

}  // namespace bt::cli
