// Decoder of SubnetState (get_subnet_state's Option<SubnetState>).
#include <bt/chain/subnet_state.hpp>

#include "vec_reader.hpp"

namespace bt {

subnet_state read_subnet_state(scale_reader& r) {
  const auto u16s = [](scale_reader& s) { return s.compact_u16(""); };
  const auto u64s = [](scale_reader& s) { return s.compact(""); };
  const auto bools = [](scale_reader& s) { return s.boolean(""); };
  const auto keys = [](scale_reader& s) { return s.account_id(""); };
  subnet_state st;
  st.netuid = r.compact_u16("netuid");
  st.hotkeys = detail::read_vec<account_id32>(r, "hotkeys", keys);
  st.coldkeys = detail::read_vec<account_id32>(r, "coldkeys", keys);
  st.active = detail::read_vec<bool>(r, "active", bools);
  st.validator_permit = detail::read_vec<bool>(r, "validator_permit", bools);
  st.pruning_score = detail::read_vec<std::uint16_t>(r, "pruning_score", u16s);
  st.last_update = detail::read_vec<std::uint64_t>(r, "last_update", u64s);
  st.emission = detail::read_vec<std::uint64_t>(r, "emission", u64s);
  st.dividends = detail::read_vec<std::uint16_t>(r, "dividends", u16s);
  st.incentives = detail::read_vec<std::uint16_t>(r, "incentives", u16s);
  st.consensus = detail::read_vec<std::uint16_t>(r, "consensus", u16s);
  st.trust = detail::read_vec<std::uint16_t>(r, "trust", u16s);
  st.rank = detail::read_vec<std::uint16_t>(r, "rank", u16s);
  st.block_at_registration = detail::read_vec<std::uint64_t>(r, "block_at_registration", u64s);
  st.alpha_stake = detail::read_vec<std::uint64_t>(r, "alpha_stake", u64s);
  st.tao_stake = detail::read_vec<std::uint64_t>(r, "tao_stake", u64s);
  st.total_stake = detail::read_vec<std::uint64_t>(r, "total_stake", u64s);
  st.emission_history = detail::read_vec<std::vector<std::uint64_t>>(
      r, "emission_history",
      [&](scale_reader& s) { return detail::read_vec<std::uint64_t>(s, "", u64s); });
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
