// Decoders of AxonInfo, PrometheusInfo and NeuronInfoLite, and ip_to_string.
#include <bt/chain/neuron_info.hpp>

#include "vec_reader.hpp"

#include <array>
#include <cstdio>
#include <limits>
#include <string_view>
#include <tuple>

namespace bt {

namespace {

// The smallest encodings, which bound what a claimed element count may reserve (read_vec).
constexpr std::size_t account_bytes = 32;
constexpr std::size_t axon_info_min_bytes = 8 + 4 + 16 + 2 + 1 + 1 + 1 + 1;
constexpr std::size_t prometheus_info_min_bytes = 8 + 4 + 16 + 2 + 1;
constexpr std::size_t stake_entry_min_bytes = account_bytes + 1;  // account, Compact amount
// Two accounts, uid and netuid (Compact, >= 1 byte each), active, the two infos, the stake
// Vec's length, then rank, emission, incentive, consensus, trust, validator_trust, dividends,
// last_update (Compact, >= 1 byte each), validator_permit and pruning_score: 143 bytes.
constexpr std::size_t neuron_info_lite_min_bytes =
    2 * account_bytes + 2 + 1 + axon_info_min_bytes + prometheus_info_min_bytes + 1 + 8 + 1 + 1;
static_assert(neuron_info_lite_min_bytes == 143);

using detail::field;
using sr = scale_reader;

// The tables: each field once, in encoding order (docs/chain.md, "Layouts").
// AxonInfo and PrometheusInfo begin with the same five fields.
template <class C>
constexpr std::tuple served_endpoint_fields{
    field<&sr::u64>("block", &C::block),    field<&sr::u32>("version", &C::version),
    field<&sr::u128>("ip", &C::ip),         field<&sr::u16>("port", &C::port),
    field<&sr::u8>("ip_type", &C::ip_type),
};

constexpr auto axon_info_fields =
    std::tuple_cat(served_endpoint_fields<chain_axon_info>,
                   std::tuple{field<&sr::u8>("protocol", &chain_axon_info::protocol),
                              field<&sr::u8>("placeholder1", &chain_axon_info::placeholder1),
                              field<&sr::u8>("placeholder2", &chain_axon_info::placeholder2)});

constexpr auto prometheus_info_fields = served_endpoint_fields<chain_prometheus_info>;

constexpr std::tuple stake_entry_fields{
    field<&sr::account_id>("account", &stake_entry::account),
    field<&sr::compact>("amount", &stake_entry::amount),
};

stake_entry read_stake_entry(scale_reader& r, std::string_view) {
  return detail::read_struct<stake_entry>(r, stake_entry_fields);
}

using neuron = neuron_info_lite;
constexpr std::tuple neuron_info_lite_fields{
    field<&sr::account_id>("hotkey", &neuron::hotkey),
    field<&sr::account_id>("coldkey", &neuron::coldkey),
    field<&sr::compact_u16>("uid", &neuron::uid),
    field<&sr::compact_u16>("netuid", &neuron::netuid),
    field<&sr::boolean>("active", &neuron::active),
    field<&detail::read_nested<chain_axon_info, axon_info_fields>>("axon_info", &neuron::axon_info),
    field<&detail::read_nested<chain_prometheus_info, prometheus_info_fields>>(
        "prometheus_info", &neuron::prometheus_info),
    field<&detail::read_vec_of<&read_stake_entry, stake_entry_min_bytes,
                               static_cast<std::size_t>(-1)>>("stake", &neuron::stake),
    field<&sr::compact_u16>("rank", &neuron::rank),
    field<&sr::compact>("emission", &neuron::emission),
    field<&sr::compact_u16>("incentive", &neuron::incentive),
    field<&sr::compact_u16>("consensus", &neuron::consensus),
    field<&sr::compact_u16>("trust", &neuron::trust),
    field<&sr::compact_u16>("validator_trust", &neuron::validator_trust),
    field<&sr::compact_u16>("dividends", &neuron::dividends),
    field<&sr::compact>("last_update", &neuron::last_update),
    field<&sr::boolean>("validator_permit", &neuron::validator_permit),
    field<&sr::compact_u16>("pruning_score", &neuron::pruning_score),
};

}  // namespace

chain_axon_info read_axon_info(scale_reader& r) {
  return detail::read_struct<chain_axon_info>(r, axon_info_fields);
}

chain_prometheus_info read_prometheus_info(scale_reader& r) {
  return detail::read_struct<chain_prometheus_info>(r, prometheus_info_fields);
}

neuron_info_lite read_neuron_info_lite(scale_reader& r) {
  return detail::read_struct<neuron_info_lite>(r, neuron_info_lite_fields);
}

std::vector<neuron_info_lite> decode_neurons_lite(std::span<const std::uint8_t> bytes) {
  scale_reader r(bytes);
  // Tell the wrapped form (Vec<u8> around the Vec) from the plain one by the first compact
  // (see the header): peek it with a throwaway reader.
  scale_reader peek(bytes);
  const std::uint64_t first = peek.compact("Vec<NeuronInfoLite>.length");
  if (first != 0 && first == peek.remaining()) {
    r.length("Vec<u8>.length");  // the outer byte length; the inner Vec fills the rest
  }
  auto out = detail::read_vec<neuron_info_lite>(r, "NeuronInfoLite", neuron_info_lite_min_bytes,
                                                read_neuron_info_lite, detail::max_neurons);
  r.expect_end("Vec<NeuronInfoLite>");
  return out;
}

std::optional<std::vector<neuron_info_lite>> decode_neurons_lite(
    std::span<const std::uint8_t> bytes, bt::error& err) {
  try {
    return decode_neurons_lite(bytes);
  } catch (const chain_decode_error& e) {
    err = e.error();
    return std::nullopt;
  }
}

namespace {

std::string ipv4_text(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", (v >> 24) & 0xffU, (v >> 16) & 0xffU,
                (v >> 8) & 0xffU, v & 0xffU);
  return buf;
}

// RFC 5952 section 4: each group in lowercase hex without leading zeros; the longest run of
// two or more all-zero groups becomes "::" (the first run when two are equally long; a single
// zero group is written "0"). Section 5: an IPv4-mapped address (::ffff:0:0/96) is written
// with its last 32 bits as a dotted quad.
std::string ipv6_text(uint128_t v) {
  std::array<unsigned, 8> g{};
  for (int i = 0; i < 8; ++i) g[i] = static_cast<unsigned>((v >> (16 * (7 - i))) & 0xffffU);
  if (g[0] == 0 && g[1] == 0 && g[2] == 0 && g[3] == 0 && g[4] == 0 && g[5] == 0xffffU) {
    return "::ffff:" + ipv4_text(static_cast<std::uint32_t>(v & 0xffffffffU));
  }
  int best = -1;
  int best_len = 1;  // a run must be at least 2 groups long
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  std::string out;
  char buf[8];
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    std::snprintf(buf, sizeof buf, "%x", g[i]);
    out += buf;
  }
  return out;
}

}  // namespace

std::string ip_to_string(uint128_t ip, std::uint8_t ip_type) {
  const bool fits_v4 = ip <= std::numeric_limits<std::uint32_t>::max();
  if (ip_type == 6 || !fits_v4) return ipv6_text(ip);
  return ipv4_text(static_cast<std::uint32_t>(ip));
}

}  // namespace bt
