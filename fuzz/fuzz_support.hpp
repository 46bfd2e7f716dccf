// Helpers shared by the fuzz targets: a failed invariant aborts with a message (libFuzzer then
// saves the input as crash-<sha1>), and one-time libsodium initialisation.
#pragma once

#include <bt/keypair.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace bt::fuzz {

[[noreturn]] inline void invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz invariant failed at %s:%d: %s\n", file, line, what);
  std::abort();
}

/// Like assert, but also in release builds: the fuzzer's oracle beyond "does not crash".
#define BT_FUZZ_CHECK(cond) \
  ((cond) ? (void)0 : ::bt::fuzz::invariant_failed(#cond, __FILE__, __LINE__))

/// On a harness's own functions (token resolution, the oracle): no coverage counters or
/// comparison tracing there. Their edges say nothing about the code under test, and every
/// feature an input touches costs libFuzzer time (docs/reliability.md, "Fuzzing"); the
/// sanitizers still check them.
#define BT_FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void init_once() {
  static const bool done = [] {
    bt::init_crypto();
    return true;
  }();
  (void)done;
}

}  // namespace bt::fuzz
