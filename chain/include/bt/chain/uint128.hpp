// bt::uint128_t: the 128-bit unsigned integer of Substrate's u128 (balances, SCALE compact
// integers, an axon's IPv6 address), under one name for the chain client's readers and writers.
#pragma once

namespace bt {

/// unsigned __int128 under a name (the __extension__ keeps -Wpedantic quiet with GCC).
__extension__ typedef unsigned __int128 uint128_t;

}  // namespace bt
