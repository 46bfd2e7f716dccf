// The recorded runtime metadata of tests/vectors/chain (hex text files), as bytes. A missing or
// unreadable file throws, failing the test.
#pragma once

#include <bt/hex.hpp>

#include <support/vectors.hpp>

#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bt::test {

inline const std::array<const char*, 4> metadata_files = {
    "metadata_v14_spec343.hex", "metadata_v15_spec343.hex", "metadata_v16_spec365.hex",
    "metadata_v16_spec393.hex"};

inline std::string metadata_path(const std::string& name) {
  return vectors_dir() + "/chain/" + name;
}

inline std::vector<std::uint8_t> metadata_bytes(const std::string& name) {
  const std::string path = metadata_path(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("test vectors not found: " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  auto bytes = bt::from_hex(text);
  if (!bytes) throw std::runtime_error("not hex: " + path);
  return *bytes;
}

}  // namespace bt::test
