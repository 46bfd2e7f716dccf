// Decoder of SubnetState (get_subnet_state's Option<SubnetState>).
#include <bt/chain/subnet_state.hpp>

#include "vec_reader.hpp"

#include <cstddef>
#include <tuple>

namespace bt {

namespace {

using detail::field;
using detail::read_vec_of;
using sr = scale_reader;
using st = subnet_state;

// Every per-neuron vector has at most detail::max_neurons entries (refused before anything is
// reserved), and emission_history's outer vector too; each element takes at least one byte.
constexpr auto u16s = &read_vec_of<&sr::compact_u16, 1>;
constexpr auto u64s = &read_vec_of<&sr::compact, 1>;
constexpr auto bools = &read_vec_of<&sr::boolean, 1>;
constexpr auto keys = &read_vec_of<&sr::account_id, 32>;
constexpr auto u64_vecs =
    &read_vec_of<&read_vec_of<&sr::compact, 1, static_cast<std::size_t>(-1)>, 1>;

// Each field once, in encoding order (docs/chain.md, "Layouts").
constexpr std::tuple subnet_state_fields{
    field<&sr::compact_u16>("netuid", &st::netuid),
    field<keys>("hotkeys", &st::hotkeys),
    field<keys>("coldkeys", &st::coldkeys),
    field<bools>("active", &st::active),
    field<bools>("validator_permit", &st::validator_permit),
    field<u16s>("pruning_score", &st::pruning_score),
    field<u64s>("last_update", &st::last_update),
    field<u64s>("emission", &st::emission),
    field<u16s>("dividends", &st::dividends),
    field<u16s>("incentives", &st::incentives),
    field<u16s>("consensus", &st::consensus),
    field<u16s>("trust", &st::trust),
    field<u16s>("rank", &st::rank),
    field<u64s>("block_at_registration", &st::block_at_registration),
    field<u64s>("alpha_stake", &st::alpha_stake),
    field<u64s>("tao_stake", &st::tao_stake),
    field<u64s>("total_stake", &st::total_stake),
    field<u64_vecs>("emission_history", &st::emission_history),
};

}  // namespace

subnet_state read_subnet_state(scale_reader& r) {
  return detail::read_struct<subnet_state>(r, subnet_state_fields);
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
