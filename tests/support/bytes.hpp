// Byte helpers shared by the identity tests: hex fields of the vectors as byte vectors/arrays.
#pragma once

#include <bt/hex.hpp>
#include <bt/json.hpp>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bt::test {

/// The bytes of a hex JSON string; fails the test case when it is not hex.
inline std::vector<std::uint8_t> hex(const bt::json& j) {
  auto v = bt::from_hex(j.get<std::string>());
  REQUIRE(v.has_value());
  return *v;
}

/// The same, checked to be exactly N bytes.
template <std::size_t N>
std::array<std::uint8_t, N> hex_n(const bt::json& j) {
  const auto v = hex(j);
  REQUIRE(v.size() == N);
  std::array<std::uint8_t, N> a{};
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

/// A string's bytes, as the signing APIs take them.
inline std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace bt::test
