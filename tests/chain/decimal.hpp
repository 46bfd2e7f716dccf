// Numbers as the Node.js peers print them: decimal text, u128 included (std::to_string has no
// overload for it).
#pragma once

#include <bt/chain/scale_reader.hpp>

#include <string>

namespace bt::test {

inline std::string dec(bt::uint128_t v) {
  if (v == 0) return "0";
  std::string s;
  for (; v != 0; v /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
  return s;
}

template <class T>
std::string dec(T v) {
  return std::to_string(v);
}

}  // namespace bt::test
