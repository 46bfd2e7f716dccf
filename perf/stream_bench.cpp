// Streaming benchmarks (figures in docs/performance.md, "Streaming"): our
// dendrite's call_stream against our axon's streaming WordStream route, in-process on loopback,
// sr25519 signing and verification on, one warm keep-alive connection.
//
//  * BM_stream_first_chunk          a one-word stream: the time from call_stream() to the first
//                                   item delivered (manual time), i.e. request, verification,
//                                   head + first chunk, parse; `call_us` counts the whole call;
//  * BM_stream_1000_chunks/coro     a 1,000-word stream ("w0\n" ... "w999\n", one chunk each)
//  * BM_stream_1000_chunks/blocking from the coroutine handler (co_await send) or the worker-pool
//                                   handler (send_blocking); per call, with `chunks_per_s` and
//                                   `us_per_chunk` counters and the first item's delay `first_us`;
//  * BM_stream_call_reference       a plain call() of a one-word WordStream to a plain route,
//                                   for the fixed cost of one exchange.
//
//   build-*/perf/bt-bench --benchmark_filter=stream
#include <bt/axon.hpp>
#include <bt/dendrite.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/stream_writer.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace {

using bt::examples::word_stream;
using steady = std::chrono::steady_clock;

const bt::keypair& stream_bench_alice() {
  static const bt::keypair k = bt::keypair::from_uri("//Alice");
  return k;
}
const bt::keypair& stream_bench_bob() {
  static const bt::keypair k = bt::keypair::from_uri("//Bob");
  return k;
}

boost::asio::awaitable<void> stream_bench_words(word_stream& s, bt::stream_writer& out) {
  std::string chunk;
  for (std::string_view w : word_stream::split_words(s.text)) {
    chunk.assign(w);
    chunk.push_back('\n');
    if (!co_await out.send(chunk)) co_return;
  }
}

/// An axon whose WordStream route streams (coroutine or worker-pool handler), or answers plainly.
struct stream_bench_miner {
  enum class mode { coroutine, blocking, plain };
  bt::axon ax;
  explicit stream_bench_miner(mode m) : ax(stream_bench_bob(), bt::axon_options::loopback()) {
    switch (m) {
      case mode::coroutine:
        ax.attach<word_stream>(
            [](word_stream& s, bt::stream_writer& out) { return stream_bench_words(s, out); });
        break;
      case mode::blocking:
        ax.attach<word_stream>([](word_stream& s, bt::stream_writer& out) {
          std::string chunk;
          for (std::string_view w : word_stream::split_words(s.text)) {
            chunk.assign(w);
            chunk.push_back('\n');
            if (!out.send_blocking(chunk)) return;
          }
        });
        break;
      case mode::plain:
        ax.attach<word_stream>([](word_stream& s) { s.words = {s.text}; });
        break;
    }
    ax.start();
  }
  ~stream_bench_miner() { ax.stop(); }
  bt::axon_info target() const {
    bt::axon_info a = ax.info();
    a.ip = "127.0.0.1";
    return a;
  }
};

word_stream stream_bench_query(int words) {
  word_stream q;
  for (int i = 0; i < words; ++i) q.text += "w" + std::to_string(i) + " ";
  if (words == 1) q.text = "hello";
  return q;
}

void BM_stream_first_chunk(benchmark::State& state) {
  stream_bench_miner m(stream_bench_miner::mode::coroutine);
  bt::dendrite d(stream_bench_alice());
  const auto target = m.target();
  const word_stream q = stream_bench_query(1);
  double call_total = 0;
  for (auto _ : state) {
    const auto t0 = steady::now();
    steady::time_point first{};
    auto r = d.call_stream(target, q, 5.0, [&first](std::string_view) {
      if (first == steady::time_point{}) first = steady::now();
    });
    const auto t1 = steady::now();
    if (r.dendrite.status_code != 200 || first == steady::time_point{}) {
      state.SkipWithError("stream failed");
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(first - t0).count());
    call_total += std::chrono::duration<double>(t1 - t0).count();
  }
  state.counters["call_us"] = benchmark::Counter(
      call_total * 1e6 /
      static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations())));
}
BENCHMARK(BM_stream_first_chunk)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_stream_1000_chunks(benchmark::State& state) {
  const bool blocking = state.range(0) != 0;
  state.SetLabel(blocking ? "blocking" : "coro");
  stream_bench_miner m(blocking ? stream_bench_miner::mode::blocking
                                : stream_bench_miner::mode::coroutine);
  bt::dendrite d(stream_bench_alice());
  const auto target = m.target();
  const word_stream q = stream_bench_query(1000);
  std::size_t items = 0;
  double first_total = 0, call_total = 0;
  for (auto _ : state) {
    const auto t0 = steady::now();
    steady::time_point first{};
    auto r = d.call_stream(target, q, 10.0, [&](std::string_view) {
      if (first == steady::time_point{}) first = steady::now();
      ++items;
    });
    const auto t1 = steady::now();
    if (r.dendrite.status_code != 200 || r.words.size() != 1000) {
      state.SkipWithError("stream failed");
      break;
    }
    first_total += std::chrono::duration<double>(first - t0).count();
    call_total += std::chrono::duration<double>(t1 - t0).count();
  }
  const double n = static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
  if (items > 0 && call_total > 0) {
    state.counters["chunks_per_s"] = benchmark::Counter(static_cast<double>(items) / call_total);
    state.counters["us_per_chunk"] =
        benchmark::Counter(call_total * 1e6 / static_cast<double>(items));
  }
  state.counters["first_us"] = benchmark::Counter(first_total * 1e6 / n);
}
BENCHMARK(BM_stream_1000_chunks)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_stream_call_reference(benchmark::State& state) {
  stream_bench_miner m(stream_bench_miner::mode::plain);
  bt::dendrite d(stream_bench_alice());
  const auto target = m.target();
  const word_stream q = stream_bench_query(1);
  for (auto _ : state) {
    auto r = d.call(target, q, 5.0);
    if (r.dendrite.status_code != 200) {
      state.SkipWithError("call failed");
      break;
    }
  }
}
BENCHMARK(BM_stream_call_reference)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
