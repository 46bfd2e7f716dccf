// Fuzz target: the chain client's decoders fed a hostile node's answers (docs/chain.md,
// "Hostile nodes"). The first byte picks the answer, the rest is its bytes:
//   0  state_getMetadata (decode_metadata), then what bt-chain serve-axon does with it:
//      is_empty_type of every signed extension's types and encode_serve_axon_call;
//   1  get_neurons_lite's result (decode_neurons_lite), built into a metagraph without stake
//      state;
//   2  get_subnet_state's result (decode_subnet_state);
//   3  both runtime results at once: a little-endian u16 length of the neurons part, the
//      neurons, then the state, built into a metagraph (make_metagraph).
//
// Invariants:
//  - a decoder returns or throws bt::chain_decode_error, nothing else (no std::bad_alloc, no
//    other exception: libFuzzer reports an uncaught one as a crash);
//  - no single allocation above the -malloc_limit_mb=1 that scripts/fuzz passes for this target:
//    the decoders reserve at most 32 bytes per input byte, 512 KiB for the 16 KiB inputs, while a
//    reservation for a claimed count (up to one element per byte, a NeuronInfoLite being some
//    250 bytes) exceeds it;
//  - decoded metadata never refers to a type outside its registry; the type walks end (the
//    -timeout catches one that does not) with a value or bad_metadata;
//  - decoded neurons number at most 65,536 (a subnet's uids) and at most the input over the
//    143 bytes of the smallest NeuronInfoLite; a metagraph has one entry per neuron, by uid.
#include <bt/chain/extrinsic.hpp>
#include <bt/chain/metadata.hpp>
#include <bt/chain/metagraph.hpp>
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/subnet_state.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

namespace {

void metadata(std::span<const std::uint8_t> in) {
  bt::runtime_metadata md;
  try {
    md = bt::decode_metadata(in);
  } catch (const bt::chain_decode_error&) {
    return;
  }
  const std::size_t n = md.types.size();
  for (const auto& p : md.pallets) {
    BT_FUZZ_CHECK(!p.call_type || *p.call_type < n);
    for (const auto& e : p.storage)
      BT_FUZZ_CHECK(e.value_type < n && (!e.is_map || e.key_type < n));
  }
  for (const auto& x : md.extensions) {
    BT_FUZZ_CHECK(x.extra_type < n && x.implicit_type < n);
    for (const std::uint32_t t : {x.extra_type, x.implicit_type}) {
      try {
        (void)md.is_empty_type(t);
      } catch (const bt::chain_decode_error& e) {
        BT_FUZZ_CHECK(e.code() == bt::chain_errc::bad_metadata);
      }
    }
  }
  bt::serve_axon_args args;
  args.netuid = 1;
  args.ip = 0x0a000001;
  args.port = 8091;
  args.ip_type = 4;
  try {
    (void)bt::encode_serve_axon_call(md, args);
  } catch (const std::system_error&) {
    // unknown pallet or call, or argument types the client cannot encode
  } catch (const bt::chain_decode_error& e) {
    BT_FUZZ_CHECK(e.code() == bt::chain_errc::bad_metadata);
  }
}

std::optional<std::vector<bt::neuron_info_lite>> neurons(std::span<const std::uint8_t> in) {
  try {
    auto v = bt::decode_neurons_lite(in);
    BT_FUZZ_CHECK(v.size() <= 65536 && v.size() <= in.size() / 143);
    return v;
  } catch (const bt::chain_decode_error&) {
    return std::nullopt;
  }
}

std::optional<std::optional<bt::subnet_state>> state(std::span<const std::uint8_t> in) {
  try {
    return bt::decode_subnet_state(in);
  } catch (const bt::chain_decode_error&) {
    return std::nullopt;
  }
}

void metagraph(std::uint16_t netuid, const std::vector<bt::neuron_info_lite>& ns,
               const std::optional<bt::subnet_state>& st) {
  bt::error err;
  const auto m = bt::make_metagraph(netuid, 1, "0x00", ns, st, err);
  if (!m) {
    BT_FUZZ_CHECK(err.code == bt::chain_errc::invalid_value);
    return;
  }
  BT_FUZZ_CHECK(m->neurons.size() == ns.size());
  for (std::size_t i = 1; i < m->neurons.size(); ++i)
    BT_FUZZ_CHECK(m->neurons[i - 1].uid < m->neurons[i].uid);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  if (size == 0) return 0;
  const std::span<const std::uint8_t> in(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      metadata(in);
      break;
    case 1:
      if (auto ns = neurons(in); ns && !ns->empty()) metagraph((*ns)[0].netuid, *ns, std::nullopt);
      break;
    case 2:
      (void)state(in);
      break;
    default: {
      if (in.size() < 2) return 0;
      const std::size_t split = std::min<std::size_t>(in[0] | (in[1] << 8), in.size() - 2);
      const auto ns = neurons(in.subspan(2, split));
      const auto st = state(in.subspan(2 + split));
      if (ns && st && *st) metagraph((*st)->netuid, *ns, *st);
    }
  }
  return 0;
}
