// `bt-chain metagraph` (metagraph_command.hpp).
#include "metagraph_command.hpp"

#include <bt/chain/subtensor.hpp>
#include <bt/json.hpp>

#include <bt_cli.hpp>

#include <cstdio>
#include <ostream>
#include <string>

namespace bt::cli {

namespace {

int fail(std::ostream& err, const std::string& message) {
  report_error(err, "bt-chain", error_style::json, message);
  return 2;
}

/// rao as TAO/alpha with 4 decimals ("1234.5678").
std::string units(std::uint64_t rao) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llu.%04llu",
                static_cast<unsigned long long>(rao / 1'000'000'000ull),
                static_cast<unsigned long long>((rao % 1'000'000'000ull) / 100'000ull));
  return buf;
}

void print_table(const metagraph& m, std::ostream& out) {
  out << "subnet " << m.netuid << " at block " << m.block << " (" << m.block_hash
      << "): " << m.neurons.size() << " neurons\n";
  if (m.stake == stake_source::neuron_stake_entries) {
    out << "stake: the sum of each neuron's own stake entries (the runtime has no "
           "get_subnet_state); alpha/TAO split unknown\n";
  }
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %-48s  %-48s  %3s  %3s  %16s  %16s  %16s  %s\n", "uid",
                "hotkey", "coldkey", "act", "vp", "stake", "alpha", "tao", "axon");
  out << line;
  for (const auto& n : m.neurons) {
    std::string axon = "-";
    if (n.serving) {
      axon = (n.axon.ip_type == 6 ? "[" + n.axon.ip + "]" : n.axon.ip) + ":" +
             std::to_string(n.axon.port);
    }
    std::snprintf(line, sizeof line, "%5u  %-48s  %-48s  %3s  %3s  %16s  %16s  %16s  %s\n",
                  static_cast<unsigned>(n.uid), n.hotkey.c_str(), n.coldkey.c_str(),
                  n.active ? "yes" : "no", n.validator_permit ? "yes" : "no",
                  units(n.stake_rao).c_str(), units(n.alpha_stake_rao).c_str(),
                  units(n.tao_stake_rao).c_str(), axon.c_str());
    out << line;
  }
}

}  // namespace

CLI::App* add_metagraph_command(CLI::App& app, metagraph_config& cfg) {
  auto* cmd = app.add_subcommand("metagraph", "Read a subnet's metagraph from subtensor");
  cmd->add_option("--netuid", cfg.netuid, "Subnet id")->required();
  cmd->add_option("--block", cfg.block, "Block number to read at (default: the head)");
  cmd->add_flag("--json", cfg.json, "Print one JSON object instead of a table");
  add_endpoint_flags(cmd, cfg.endpoint);
  return cmd;
}

int run_metagraph(const metagraph_config& cfg, std::ostream& out, std::ostream& err) {
  bt::error e;
  auto ep = resolve(cfg.endpoint, e);
  if (!ep) return fail(err, e.message());
  try {
    subtensor st(*ep, client_options(cfg.endpoint));
    const metagraph m = st.get_metagraph(cfg.netuid, cfg.block);
    if (cfg.json) {
      out << to_json(m).dump(-1, ' ', false, bt::json::error_handler_t::replace) << std::endl;
    } else {
      print_table(m, out);
      out.flush();
    }
    return 0;
  } catch (const subtensor_error& x) {
    return fail(err, x.what());
  } catch (const std::exception& x) {
    return fail(err, std::string("bt-chain metagraph: ") + x.what() + " (" + ep->url() + ")");
  }
}

}  // namespace bt::cli
