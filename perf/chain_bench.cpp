// Chain decoding benchmarks on the recorded mainnet answers of tests/vectors/chain (subnet 1,
// block 6852690, 1,024 neurons): get_neurons_lite and get_subnet_state decoded, and the whole
// metagraph (both decodes, then make_metagraph with its 2,048 SS58 encodings).
//
//   build/perf/bt-bench --benchmark_filter='chain/'
//
// Goal: the 1,024-neuron metagraph (chain/metagraph) <= 5 ms.
#include <bt/chain/metagraph.hpp>
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/subnet_state.hpp>

#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The result bytes of the recorded `state_call <method>`.
std::vector<std::uint8_t> recorded(const std::string& method) {
  const std::string path = std::string(BT_CHAIN_VECTORS_DIR) + "/session_sn1_block6852690.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("recorded session not found: " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto session = bt::json::parse(ss.str());
  for (const auto& c : session.at("calls")) {
    if (c.at("method") == "state_call" && c.at("params").at(0) == method) {
      auto b = bt::from_hex(c.at("response").at("result").get<std::string>());
      if (b) return *b;
    }
  }
  throw std::runtime_error("no recorded state_call " + method);
}

const std::vector<std::uint8_t>& neurons_bytes() {
  static const auto b = recorded("NeuronInfoRuntimeApi_get_neurons_lite");
  return b;
}
const std::vector<std::uint8_t>& state_bytes() {
  static const auto b = recorded("SubnetInfoRuntimeApi_get_subnet_state");
  return b;
}

void BM_chain_decode_neurons_lite(benchmark::State& state) {
  const auto& b = neurons_bytes();
  for (auto _ : state) {
    auto n = bt::decode_neurons_lite(b);
    benchmark::DoNotOptimize(n.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * b.size()));
}
BENCHMARK(BM_chain_decode_neurons_lite)
    ->Name("chain/decode_neurons_lite/1024")
    ->Unit(benchmark::kMicrosecond);

void BM_chain_decode_subnet_state(benchmark::State& state) {
  const auto& b = state_bytes();
  for (auto _ : state) {
    auto s = bt::decode_subnet_state(b);
    benchmark::DoNotOptimize(&s);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * b.size()));
}
BENCHMARK(BM_chain_decode_subnet_state)
    ->Name("chain/decode_subnet_state/1024")
    ->Unit(benchmark::kMicrosecond);

void BM_chain_metagraph(benchmark::State& state) {
  bt::init_crypto();
  const auto& nb = neurons_bytes();
  const auto& sb = state_bytes();
  for (auto _ : state) {
    const auto neurons = bt::decode_neurons_lite(nb);
    const auto st = bt::decode_subnet_state(sb);
    auto m = bt::make_metagraph(
        1, 6852690, "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0", neurons,
        st);
    benchmark::DoNotOptimize(m.neurons.data());
  }
}
BENCHMARK(BM_chain_metagraph)->Name("chain/metagraph/1024")->Unit(benchmark::kMicrosecond);

void BM_chain_metagraph_json(benchmark::State& state) {
  bt::init_crypto();
  const auto m = bt::make_metagraph(1, 6852690, "0x00", bt::decode_neurons_lite(neurons_bytes()),
                                    bt::decode_subnet_state(state_bytes()));
  for (auto _ : state) {
    auto s = bt::to_json(m).dump();
    benchmark::DoNotOptimize(s.data());
  }
}
BENCHMARK(BM_chain_metagraph_json)
    ->Name("chain/metagraph_to_json/1024")
    ->Unit(benchmark::kMicrosecond);

}  // namespace
