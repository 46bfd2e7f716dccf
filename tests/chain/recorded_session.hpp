// The recorded mainnet session of tests/vectors/chain (subnet 1, block 6852690): the raw bytes
// of its runtime-API answers. A missing file or entry fails the test.
#pragma once

#include <bt/hex.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bt::test {

inline constexpr std::uint64_t recorded_block = 6852690;
inline constexpr const char* recorded_block_hash =
    "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0";

/// The result bytes of the recorded `state_call <method>` (e.g.
/// "NeuronInfoRuntimeApi_get_neurons_lite").
inline std::vector<std::uint8_t> recorded_state_call(std::string_view method) {
  static const json session = load_vectors("chain/session_sn1_block6852690.json");
  for (const auto& c : session.at("calls")) {
    if (c.at("method") == "state_call" && c.at("params").at(0) == method) {
      const auto bytes = from_hex(c.at("response").at("result").get<std::string>());
      REQUIRE(bytes.has_value());
      return *bytes;
    }
  }
  FAIL("no recorded state_call " << method);
  return {};
}

}  // namespace bt::test
