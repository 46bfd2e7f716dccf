// Decoder of SubnetState (get_subnet_state's Option<SubnetState>).
#include <bt/chain/subnet_state.hpp>

#include "vec_reader.hpp"

namespace bt {

// Every per-neuron vector has at most detail::max_neurons entries (refused before anything is
// reserved), and emission_history's outer vector too; each element takes at least one byte.
subnet_state read_subnet_state(scale_reader& r) {
  const auto u16s = [](scale_reader& s) { return s.compact_u16(""); };
  const auto u64s = [](scale_reader& s) { return s.compact(""); };
  const auto bools = [](scale_reader& s) { return s.boolean(""); };
  const auto keys = [](scale_reader& s) { return s.account_id(""); };
  subnet_state st;
  st.netuid = r.compact_u16("netuid");
  st.hotkeys = detail::read_vec<account_id32>(r, "hotkeys", 32, keys, detail::max_neurons);
  st.coldkeys = detail::read_vec<account_id32>(r, "coldkeys", 32, keys, detail::max_neurons);
  st.active = detail::read_vec<bool>(r, "active", 1, bools, detail::max_neurons);
  st.validator_permit =
      detail::read_vec<bool>(r, "validator_permit", 1, bools, detail::max_neurons);
  st.pruning_score =
      detail::read_vec<std::uint16_t>(r, "pruning_score", 1, u16s, detail::max_neurons);
  st.last_update = detail::read_vec<std::uint64_t>(r, "last_update", 1, u64s, detail::max_neurons);
  st.emission = detail::read_vec<std::uint64_t>(r, "emission", 1, u64s, detail::max_neurons);
  st.dividends = detail::read_vec<std::uint16_t>(r, "dividends", 1, u16s, detail::max_neurons);
  st.incentives = detail::read_vec<std::uint16_t>(r, "incentives", 1, u16s, detail::max_neurons);
  st.consensus = detail::read_vec<std::uint16_t>(r, "consensus", 1, u16s, detail::max_neurons);
  st.trust = detail::read_vec<std::uint16_t>(r, "trust", 1, u16s, detail::max_neurons);
  st.rank = detail::read_vec<std::uint16_t>(r, "rank", 1, u16s, detail::max_neurons);
  st.block_at_registration =
      detail::read_vec<std::uint64_t>(r, "block_at_registration", 1, u64s, detail::max_neurons);
  st.alpha_stake = detail::read_vec<std::uint64_t>(r, "alpha_stake", 1, u64s, detail::max_neurons);
  st.tao_stake = detail::read_vec<std::uint64_t>(r, "tao_stake", 1, u64s, detail::max_neurons);
  st.total_stake = detail::read_vec<std::uint64_t>(r, "total_stake", 1, u64s, detail::max_neurons);
  st.emission_history = detail::read_vec<std::vector<std::uint64_t>>(
      r, "emission_history", 1,
      [&](scale_reader& s) { return detail::read_vec<std::uint64_t>(s, "", 1, u64s); },
      detail::max_neurons);
  return st;
}

std::optional<subnet_state> decode_subnet_state(std::span<const std::uint8_t> bytes) {
  scale_reader r(bytes);
  std::optional<subnet_state> out;
  if (r.option("Option<SubnetState>")) {
    out = detail::with_prefix("SubnetState", [&] { return read_subnet_state(r); });
  }
  r.expect_end("Option<SubnetState>");
  return out;
}

bool decode_subnet_state(std::span<const std::uint8_t> bytes, std::optional<subnet_state>& out,
                         bt::error& err) {
  try {
    out = decode_subnet_state(bytes);
    return true;
  } catch (const chain_decode_error& e) {
    err = e.error();
    return false;
  }
}

}  // namespace bt
