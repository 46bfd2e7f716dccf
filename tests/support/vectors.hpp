// Loading the JSON test vectors of tests/vectors/. A missing or unreadable file fails the test.
#pragma once

#include <bt/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace bt::test {

inline std::string vectors_dir() {
  return BT_VECTORS_DIR;
}

/// Parses tests/vectors/<name>; throws (failing the test case) when it is missing.
inline json load_vectors(const std::string& name) {
  const std::string path = vectors_dir() + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("test vectors not found: " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

/// Path of a file or program built into the build tree (set by tests/CMakeLists.txt).
inline std::string binary_dir() {
  return BT_BINARY_DIR;
}
inline std::string source_dir() {
  return BT_SOURCE_DIR;
}

}  // namespace bt::test
