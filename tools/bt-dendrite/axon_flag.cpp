// --axon IP:PORT:HOTKEY (see axon_flag.hpp).
#include "axon_flag.hpp"

namespace bt::cli {

axon_info parse_axon_flag(const std::string& text) {
  return axon_info::parse(text, "--axon");
}

}  // namespace bt::cli
