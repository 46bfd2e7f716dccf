// bt::metagraph: one subnet's neurons at one pinned block, as an operator reads them (Python's
// `subtensor.metagraph(netuid)`): SS58 keys, stake in rao, the axon as a bt::axon_info (the
// type the dendrite takes), its address as text.
//
// make_metagraph builds it from the two decoded runtime-API results without any I/O (the chain
// client, bt::subtensor, fetches them at one block hash). With a SubnetState, stake_rao is its
// total_stake (Python's metagraph.S) and alpha/TAO stake its alpha_stake/tao_stake. Without one
// (a runtime that lacks get_subnet_state), stake_rao falls back to the sum of the neuron's own
// NeuronInfoLite stake entries, the alpha/TAO split is unknown and reported as 0, and
// `stake_source` says so.
#pragma once

#include <bt/axon_info.hpp>
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/subnet_state.hpp>
#include <bt/error.hpp>
#include <bt/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bt {

struct metagraph_neuron {
  std::uint16_t uid = 0;
  std::string hotkey;   ///< SS58, format 42
  std::string coldkey;  ///< SS58, format 42
  account_id32 hotkey_id{};
  account_id32 coldkey_id{};
  bool active = false;
  bool validator_permit = false;
  std::uint64_t stake_rao = 0;
  std::uint64_t alpha_stake_rao = 0;
  std::uint64_t tao_stake_rao = 0;
  /// The published AxonInfo: ip as dotted IPv4 or RFC 5952 IPv6 (ip_to_string), "0.0.0.0" when
  /// never served; port, ip_type, protocol and version as the chain holds them; hotkey and
  /// coldkey the neuron's (SS58); placeholder1/2 0. A dendrite takes it as it is.
  axon_info axon;
  bool serving = false;  ///< false when the chain's ip is 0 (the axon was never served)
};

enum class stake_source {
  subnet_state,          ///< stake from SubnetState (total, alpha and TAO)
  neuron_stake_entries,  ///< fallback: the sum of each neuron's own stake entries; no split
};

struct metagraph {
  std::uint16_t netuid = 0;
  std::uint64_t block = 0;
  std::string block_hash;                 ///< "0x" + 64 hex digits, as the node gave it
  std::vector<metagraph_neuron> neurons;  ///< ordered by uid
  stake_source stake = stake_source::subnet_state;

  /// The neuron with this SS58 hotkey, or nullptr.
  const metagraph_neuron* find_hotkey(std::string_view ss58) const noexcept;
  /// The axons a validator queries, in uid order: those of the neurons that serve one at a
  /// routable address (axon_info::routable: a served ip, a non-zero port).
  std::vector<axon_info> serving_axons() const;
};

/// Builds the metagraph of `netuid` at (block, block_hash) from get_neurons_lite's result and
/// get_subnet_state's (nullopt when the runtime has no such call: the fallback above). Refuses
/// (chain_errc::invalid_value, `what` naming the field) results that do not describe one subnet
/// at one block: a neuron or SubnetState of another netuid, a duplicate uid, a uid outside
/// SubnetState's vectors, a SubnetState whose hotkey at a uid differs from the neuron's, or
/// SubnetState vectors of unequal length. Pure: no I/O, no clock.
std::optional<metagraph> make_metagraph(std::uint16_t netuid, std::uint64_t block,
                                        std::string block_hash,
                                        const std::vector<neuron_info_lite>& neurons,
                                        const std::optional<subnet_state>& state, bt::error& err);
/// The same, throwing std::system_error (code a chain_errc, what() the full message).
metagraph make_metagraph(std::uint16_t netuid, std::uint64_t block, std::string block_hash,
                         const std::vector<neuron_info_lite>& neurons,
                         const std::optional<subnet_state>& state);

/// The JSON form `bt-chain metagraph --json` prints: {"netuid", "block", "block_hash", "n",
/// "neurons": [{"uid", "hotkey", "coldkey", "active", "validator_permit", "stake_rao",
/// "alpha_stake_rao", "tao_stake_rao", "axon": {"ip", "port", "ip_type", "protocol", "version",
/// "serving"}}]}, keys in that order. In the fallback only, one more top-level key follows:
/// "stake_source": "neuron_stake_entries".
json to_json(const metagraph& m);

}  // namespace bt
