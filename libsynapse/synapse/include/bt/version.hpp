// Version of the Bittensor reference this implementation speaks (PROTOCOL 4.3).
#pragma once

#include <cstdint>

namespace bt {
/// version_as_int of bittensor 10.2.0: major*1000^2 + minor*1000 + patch.
inline constexpr std::int64_t version_as_int = 10'002'000;
/// Oldest dendrite version whose nonces are wall-clock nanoseconds (PROTOCOL 5.5, V_7_2_0).
inline constexpr std::int64_t version_7_2_0 = 7'002'000;
/// AxonInfo.protocol, always 4.
inline constexpr int axon_protocol = 4;
}  // namespace bt
