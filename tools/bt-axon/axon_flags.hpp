// bt-axon's --axon.* and --admin.* flags, generated from bt::axon_options::option_table() by
// bt::cli::add_flags_of (tools/common/option_flags.hpp: help, unit, range and default from the
// table), each with a BT_* environment variable named after the flag (switches have none).
#pragma once

#include <bt/axon_options.hpp>

#include <CLI/CLI.hpp>

#include <map>
#include <string>

namespace bt::miner {

/// Registers the flags of `o`'s table on `app`; `o` must outlive the parse. The defaults shown
/// are `o`'s values at this call, so set a tool's own defaults first. Returns each flag's option
/// by its field name, for checks of a tool's own.
std::map<std::string, CLI::Option*, std::less<>> add_axon_flags(CLI::App& app, bt::axon_options& o);

/// The checks the flags cannot make alone, after parsing: --axon.trusted_proxies as CIDR blocks
/// (normalised), that --axon.proxy_protocol and --axon.trusted_proxies go together, and that
/// --axon.external_ip is an IP literal. Throws std::invalid_argument with the usage message.
void check_axon_flags(bt::axon_options& o);

}  // namespace bt::miner
