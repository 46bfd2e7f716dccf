// The --axon IP:PORT:HOTKEY flag value of bt-dendrite's subcommands, parsed and checked once.
#pragma once

#include <bt/axon_info.hpp>

#include <string>

namespace bt::cli {

/// bt::axon_info::parse, its message naming the flag: "--axon 'TEXT': <what is wrong>".
axon_info parse_axon_flag(const std::string& text);

}  // namespace bt::cli
