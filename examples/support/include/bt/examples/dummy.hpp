// bt::examples::dummy: the subnet template's Dummy synapse (opentensor/bittensor-subnet-template
// template/protocol.py), used by the bt-axon and bt-dendrite tools and the examples.
//
//   class Dummy(bt.Synapse):
//       dummy_input: int
//       dummy_output: typing.Optional[int] = None
//
// No required_hash_fields, so its computed_body_hash is SHA3-256("") (PROTOCOL 3.1).
#pragma once

#include <bt/synapse.hpp>

#include <cstdint>
#include <optional>

namespace bt::examples {

struct dummy : bt::synapse {
  std::int64_t dummy_input = 0;              ///< required: no default in Python
  std::optional<std::int64_t> dummy_output;  ///< Optional[int] = None, set by the miner

  BT_SYNAPSE(dummy, "Dummy", BT_FIELD(dummy_input, bt::required), BT_FIELD(dummy_output))

  friend bool operator==(const dummy&, const dummy&) = default;
};

/// The Python class name, for code ported from the subnet template.
using Dummy = dummy;

}  // namespace bt::examples
