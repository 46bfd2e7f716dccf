// subtensor's SubnetState (SubnetInfoRuntimeApi_get_subnet_state's `Option<SubnetState>`), as
// the runtime encodes it (docs/chain.md, "Layouts"). Each per-neuron vector is indexed by uid.
// Python's `metagraph.S` is `total_stake`.
#pragma once

#include <bt/chain/neuron_info.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace bt {

struct subnet_state {
  std::uint16_t netuid = 0;
  std::vector<account_id32> hotkeys;
  std::vector<account_id32> coldkeys;
  std::vector<bool> active;
  std::vector<bool> validator_permit;
  std::vector<std::uint16_t> pruning_score;
  std::vector<std::uint64_t> last_update;
  std::vector<std::uint64_t> emission;
  std::vector<std::uint16_t> dividends;
  std::vector<std::uint16_t> incentives;
  std::vector<std::uint16_t> consensus;
  std::vector<std::uint16_t> trust;
  std::vector<std::uint16_t> rank;
  std::vector<std::uint64_t> block_at_registration;
  std::vector<std::uint64_t> alpha_stake;
  std::vector<std::uint64_t> tao_stake;
  std::vector<std::uint64_t> total_stake;
  std::vector<std::vector<std::uint64_t>> emission_history;
};

/// Reads a SubnetState at the reader's position.
subnet_state read_subnet_state(scale_reader& r);

/// Decodes the whole result of get_subnet_state: `Option<SubnetState>` (nullopt for None, e.g.
/// a subnet that does not exist). Trailing bytes are an error. Throws chain_decode_error with
/// fields named "SubnetState.total_stake[5]".
std::optional<subnet_state> decode_subnet_state(std::span<const std::uint8_t> bytes);
/// The same without exceptions: false and `err` set on failure; `out` is the decoded option.
bool decode_subnet_state(std::span<const std::uint8_t> bytes, std::optional<subnet_state>& out,
                         bt::error& err);

}  // namespace bt
