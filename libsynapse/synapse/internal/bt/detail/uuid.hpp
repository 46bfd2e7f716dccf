// The uuid texts the axon and the dendrite generate, written once. Internal (bt::detail).
#pragma once

#include <string>

namespace bt::detail {

/// A new uuid1-format string as Python's str(uuid.uuid1()): 36 lower-case characters,
/// 8-4-4-4-12, time-based, with a random 14-bit clock sequence and a random 48-bit node with the
/// multicast bit set (RFC 4122 section 4.5: a node that is not a MAC address, which is what
/// Python's uuid1() does on hosts without a readable MAC; nobody needs to learn ours).
std::string make_uuid1();

/// A new random uuid4 as Python's str(uuid.uuid4()): 36 lower-case characters, 8-4-4-4-12.
std::string make_uuid4();

}  // namespace bt::detail
