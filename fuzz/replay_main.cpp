// A main() for a fuzz target without libFuzzer: runs LLVMFuzzerTestOneInput over the given files,
// once to warm up and then REPEATS more times, and prints the mean time per input. It measures
// what an input costs by itself (no mutation, no coverage bookkeeping); linked with the axon
// target as bt-fuzz-replay (plain build, BT_FUZZ=OFF) and fuzz's axon_request_replay (the fuzz
// build's instrumentation), see docs/reliability.md, "Fuzzing".
//
// Usage: <program> REPEATS FILE...
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  const long repeats = argc > 2 ? std::strtol(argv[1], nullptr, 10) : 0;
  if (repeats <= 0) {
    std::fprintf(stderr, "usage: %s REPEATS FILE...\n", argv[0]);
    return 2;
  }
  std::vector<std::string> inputs;
  for (int i = 2; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 2;
    }
    inputs.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  const auto run_all = [&] {
    for (const std::string& in : inputs)
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(in.data()), in.size());
  };
  run_all();
  const auto start = std::chrono::steady_clock::now();
  for (long r = 0; r < repeats; ++r) run_all();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  const double n = static_cast<double>(repeats) * static_cast<double>(inputs.size());
  std::printf("%.0f inputs, %.1f us per input, %.0f inputs/s\n", n, us / n, n / us * 1e6);
  return 0;
}
