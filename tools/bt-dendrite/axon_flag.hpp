// The --axon IP:PORT:HOTKEY flag value of bt-dendrite's subcommands, parsed and checked once.
#pragma once

#include <bt/axon_info.hpp>

#include <string>

namespace bt::cli {

/// Parses "IP:PORT:HOTKEY", split from the right so that IPv6 ("[::1]:8091:5F..." or
/// "::1:8091:5F...") works; the port is 1..65535 and the hotkey an SS58 address. Throws
/// std::invalid_argument with a message naming the flag value and what is wrong.
axon_info parse_axon_flag(const std::string& text);

/// Throws std::invalid_argument ("{where}: hotkey '...' is not an SS58 address (...)") when the
/// hotkey of `a` is not SS58: a typo would otherwise be signed for a key nobody holds and end in
/// the axon's 401.
void check_axon_hotkey(const axon_info& a, const std::string& where);

}  // namespace bt::cli
