// The runtime-API types of subtensor that the metagraph needs, exactly as the runtime encodes
// them (docs/chain.md, "Layouts"), and their decoders:
//   NeuronInfoRuntimeApi_get_neurons_lite(netuid) → Vec<NeuronInfoLite>
//   SubnetInfoRuntimeApi_get_subnet_state(netuid) → Option<SubnetState> (subnet_state.hpp)
//
// The structs hold raw chain values (account ids as bytes, ip as u128); bt::metagraph
// (metagraph.hpp) turns them into what an operator reads (SS58, dotted/RFC 5952 addresses).
#pragma once

#include <bt/chain/scale_reader.hpp>
#include <bt/error.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bt {

using account_id32 = std::array<std::uint8_t, 32>;

/// subtensor's AxonInfo (34 bytes) as stored on chain: where a neuron serves, with the ip as a
/// u128 and its ip_type (ip 0 = never served), the block it was set at and two placeholder bytes.
/// Not an address: make_metagraph turns it into the one address type, bt::axon_info, with
/// ip_to_string (the only conversion); read_axon_info is its only decoder.
struct chain_axon_info {
  std::uint64_t block = 0;
  std::uint32_t version = 0;
  uint128_t ip = 0;
  std::uint16_t port = 0;
  std::uint8_t ip_type = 0;
  std::uint8_t protocol = 0;
  std::uint8_t placeholder1 = 0;
  std::uint8_t placeholder2 = 0;
};

/// subtensor's PrometheusInfo.
struct chain_prometheus_info {
  std::uint64_t block = 0;
  std::uint32_t version = 0;
  uint128_t ip = 0;
  std::uint16_t port = 0;
  std::uint8_t ip_type = 0;
};

/// One (staking coldkey, amount in rao) entry of NeuronInfoLite's `stake`.
struct stake_entry {
  account_id32 account{};
  std::uint64_t amount = 0;
};

/// subtensor's NeuronInfoLite, field for field in encoding order.
struct neuron_info_lite {
  account_id32 hotkey{};
  account_id32 coldkey{};
  std::uint16_t uid = 0;
  std::uint16_t netuid = 0;
  bool active = false;
  chain_axon_info axon_info;
  chain_prometheus_info prometheus_info;
  std::vector<stake_entry> stake;
  std::uint16_t rank = 0;
  std::uint64_t emission = 0;
  std::uint16_t incentive = 0;
  std::uint16_t consensus = 0;
  std::uint16_t trust = 0;
  std::uint16_t validator_trust = 0;
  std::uint16_t dividends = 0;
  std::uint64_t last_update = 0;
  bool validator_permit = false;
  std::uint16_t pruning_score = 0;
};

/// Reads one AxonInfo / PrometheusInfo / NeuronInfoLite at the reader's position (field names
/// in errors are relative: "axon_info.port").
chain_axon_info read_axon_info(scale_reader& r);
chain_prometheus_info read_prometheus_info(scale_reader& r);
neuron_info_lite read_neuron_info_lite(scale_reader& r);

/// Decodes the whole result of get_neurons_lite: `Vec<NeuronInfoLite>`, or the older form
/// wrapped in one more `Vec<u8>` length prefix. The two are told apart without guessing: the
/// wrapped form's first compact is the byte length of the rest, which equals the bytes left;
/// in the plain form it is the neuron count, and a neuron takes more than one byte, so a count
/// equal to the bytes left (other than an empty input) can never be valid. Trailing bytes are
/// an error. Throws chain_decode_error, whose field names the element
/// ("NeuronInfoLite[17].axon_info.port") and whose offset counts from the start of `bytes`.
std::vector<neuron_info_lite> decode_neurons_lite(std::span<const std::uint8_t> bytes);
/// The same without exceptions: nullopt and `err` set (err.code a chain_errc).
std::optional<std::vector<neuron_info_lite>> decode_neurons_lite(
    std::span<const std::uint8_t> bytes, bt::error& err);

/// An AxonInfo ip as text: ip_type 4 → dotted quad; ip_type 6 → RFC 5952 (lowercase, no
/// leading zeros, the longest run of two or more zero groups as "::", the first such run on a
/// tie; IPv4-mapped ::ffff:a.b.c.d in mixed notation). Any other ip_type, or an ip_type 4 whose
/// value does not fit 32 bits, is formatted by its size as Python's bittensor does (IPv4 when it
/// fits 32 bits, IPv6 otherwise). ip 0 gives "0.0.0.0".
std::string ip_to_string(uint128_t ip, std::uint8_t ip_type);

}  // namespace bt
