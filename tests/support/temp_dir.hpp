// Test helpers for files and child commands: a temporary directory removed with its contents
// when the test ends, and POSIX shell quoting for the commands tests run with std::system.
#pragma once

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace bt::test {

/// A fresh directory under the system's temporary directory (`<prefix>-XXXXXX`); removed, with
/// everything in it, by the destructor. A failure to create it fails the test.
struct temp_dir {
  std::filesystem::path path;

  explicit temp_dir(const std::string& prefix = "bt-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

/// `s` as one word for /bin/sh: in single quotes, each ' written as '\''.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace bt::test
