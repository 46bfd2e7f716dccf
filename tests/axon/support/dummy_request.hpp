// The request most axon tests send: the example Dummy synapse, as a Python dendrite builds it,
// from //Alice to //Bob's axon.
#pragma once

#include <bt/examples/dummy.hpp>

#include "python_client.hpp"
#include "support/dev_keys.hpp"

#include <cstdint>

namespace bt::test {

/// Dummy{dummy_input = `input`} from //Alice to //Bob's axon listening on `port` (the port goes
/// into the signed request); `o` sets the rest (nonce, uuid, timeout, signing).
inline request_parts dummy_request(std::uint16_t port, std::int64_t input = 21,
                                   python_request_options o = {}) {
  bt::examples::dummy d;
  d.dummy_input = input;
  o.axon_port = port;
  return python_request(d, alice(), bob().ss58_address(), o);
}

}  // namespace bt::test
