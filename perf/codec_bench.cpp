// Codec microbenchmarks: to_headers / from_headers for the base synapse and a
// 20-field synapse, body hash, JSON body write/read, and what building a descriptor costs
// against a cached encode (the per-class schema cache Python lost, PROTOCOL 2.9).
//
//   build/perf/bt-bench --benchmark_filter='codec/'
//   valgrind --tool=callgrind build/perf/bt-bench --benchmark_filter='codec_ir/'   (see
//   docs/performance.md)
//
// Goals: base to_headers <= 1 us, base from_headers <= 2 us, 20-field each <= 5 us.
#include <bt/body_hash.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/header_codec.hpp>
#include <bt/json_body.hpp>
#include <bt/synapse.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

/// What an HTTP writer does with headers: one buffer, "name: value\r\n" each.
struct buffer_sink final : bt::header_sink {
  std::string buf;
  void add(std::string_view name, std::string_view value) override {
    buf.append(name).append(": ").append(value).append("\r\n");
  }
};

/// A 20-field type: 10 required (placeholders), 4 hashed fields.
struct wide : bt::synapse {
  std::int64_t i0 = 1, i1 = 22, i2 = 333, i3 = 4444, i4 = -5, i5 = 1718000000123456789;
  double d0 = 0.5, d1 = 12.0, d2 = 1e-5, d3 = 3.14159;
  std::string s0 = "prompt text of moderate length", s1 = "system", s2 = "user", s3;
  std::vector<std::int64_t> v0{1, 2, 3, 4, 5, 6, 7, 8}, v1;
  std::optional<std::int64_t> o0 = 7, o1;
  bool b0 = true;
  std::vector<std::string> l0{"alpha", "beta", "gamma"};

  static bt::synapse_schema<wide> schema() {
    return {.name = "Wide",
            .fields = {bt::field<&wide::i0>("i0", bt::required),
                       bt::field<&wide::i1>("i1", bt::required),
                       bt::field<&wide::i2>("i2", bt::required),
                       bt::field<&wide::i3>("i3"),
                       bt::field<&wide::i4>("i4"),
                       bt::field<&wide::i5>("i5"),
                       bt::field<&wide::d0>("d0", bt::required),
                       bt::field<&wide::d1>("d1", bt::required),
                       bt::field<&wide::d2>("d2"),
                       bt::field<&wide::d3>("d3"),
                       bt::field<&wide::s0>("s0", bt::required),
                       bt::field<&wide::s1>("s1", bt::required),
                       bt::field<&wide::s2>("s2"),
                       bt::field<&wide::s3>("s3"),
                       bt::field<&wide::v0>("v0", bt::required),
                       bt::field<&wide::v1>("v1"),
                       bt::field<&wide::o0>("o0", bt::required),
                       bt::field<&wide::o1>("o1"),
                       bt::field<&wide::b0>("b0", bt::required),
                       bt::field<&wide::l0>("l0")},
            .hash_fields = {"i0", "d0", "s0", "v0"}};
  }
};

/// The state of a synapse after preprocess_synapse_for_request (PROTOCOL 4.2).
template <class S>
void fill_request(S& s) {
  s.dendrite.ip = "203.0.113.7";
  s.dendrite.version = 10002000;
  s.dendrite.nonce = 1718000000123456789;
  s.dendrite.uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a";
  s.dendrite.hotkey = "5Ccpd5yVAaSNdLKK8y2Axrdo8imbyuhXPc6C1zEZypcH78ww";
  s.dendrite.signature =
      "0xe4cef45a66bc3c7af2122d3365c0efd3425c95a85bbc4e54629cf8a5c9c0be2411c15f40d21da3cc67ee2456b6"
      "b80f79fb0eac22f"
      "e1fdde6fa1febf690041480";
  s.axon.ip = "198.51.100.42";
  s.axon.port = 8091;
  s.axon.hotkey = "5GeQJ6PsEWrZWLUWktYRJJagLAvFesUaoaKHjSVxFzNKAzFe";
}

template <class S>
S request() {
  S s;
  fill_request(s);
  return s;
}

template <class S>
void to_headers_list(benchmark::State& state) {
  const S s = request<S>();
  bt::header_list h;
  for (auto _ : state) {
    h.items.clear();
    bt::to_headers(s, h);
    benchmark::DoNotOptimize(h.items.data());
  }
  state.counters["headers"] = static_cast<double>(h.items.size());
}

template <class S>
void to_headers_buffer(benchmark::State& state) {
  const S s = request<S>();
  buffer_sink sink;
  sink.buf.reserve(4096);
  for (auto _ : state) {
    sink.buf.clear();
    bt::to_headers(s, sink);
    benchmark::DoNotOptimize(sink.buf.data());
  }
  state.counters["bytes"] = static_cast<double>(sink.buf.size());
}

template <class S>
void from_headers(benchmark::State& state) {
  const S s = request<S>();
  bt::header_list h;
  bt::to_headers(s, h);
  for (auto _ : state) {
    S out;
    auto err = bt::from_headers(h.items, out);
    benchmark::DoNotOptimize(err);
    benchmark::DoNotOptimize(out.dendrite.nonce);
  }
}

void to_headers_prehashed(benchmark::State& state) {
  // As a dendrite does: the body hash was computed once for the signature and is passed in.
  const wide s = request<wide>();
  const std::string hash = bt::body_hash(s);
  bt::header_list h;
  for (auto _ : state) {
    h.items.clear();
    bt::to_headers(s, h, {.body_bytes = 0, .computed_body_hash = hash});
    benchmark::DoNotOptimize(h.items.data());
  }
}

void body_hash_wide(benchmark::State& state) {
  const wide s = request<wide>();
  for (auto _ : state) benchmark::DoNotOptimize(bt::body_hash(s));
}

template <class S>
void json_write(benchmark::State& state) {
  const S s = request<S>();
  std::string out;
  for (auto _ : state) {
    out.clear();
    bt::write_json_body(bt::descriptor_of<S>(), s, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(out.size());
}

template <class S>
void json_read(benchmark::State& state) {
  const std::string body = bt::to_json_body(request<S>());
  for (auto _ : state) {
    S out;
    auto err = bt::from_json_body(body, out);
    benchmark::DoNotOptimize(err);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}

void descriptor_build(benchmark::State& state) {
  for (auto _ : state) {
    auto schema = wide::schema();
    bt::synapse_descriptor d(std::string(schema.name), std::move(schema.fields),
                             schema.hash_fields);
    benchmark::DoNotOptimize(&d);
  }
}

void encode_fresh_descriptor(benchmark::State& state) {
  // What an encoder without a per-type cache pays: descriptor + to_headers every message.
  const wide s = request<wide>();
  bt::header_list h;
  for (auto _ : state) {
    auto schema = wide::schema();
    bt::synapse_descriptor d(std::string(schema.name), std::move(schema.fields),
                             schema.hash_fields);
    h.items.clear();
    bt::to_headers(d, s, h);
    benchmark::DoNotOptimize(h.items.data());
  }
}

void dynamic_to_headers(benchmark::State& state) {
  // The same 20 fields as a dynamic synapse (values are bt::json).
  const wide w = request<wide>();
  const auto& td = bt::descriptor_of<wide>();
  std::vector<bt::dynamic_field_spec> specs;
  std::vector<std::string> hashes;
  for (const auto& f : td.fields()) specs.push_back({f.name, f.kind});
  for (auto i : td.hash_fields()) hashes.push_back(td.fields()[i].name);
  bt::error err;
  auto type = bt::make_dynamic_descriptor("Wide", specs, hashes, err);
  bt::dynamic_synapse s(type);
  fill_request(s);
  for (const auto& f : td.fields()) f.ops->to_json(w, f, s.values[f.index]);
  bt::header_list h;
  for (auto _ : state) {
    h.items.clear();
    bt::to_headers(s, h);
    benchmark::DoNotOptimize(h.items.data());
  }
}

}  // namespace

// Each benchmark twice: timed ("codec/...") and with a fixed 1,000 iterations ("codec_ir/...")
// for callgrind instruction counts, which do not depend on the machine's load.
#define BT_CODEC_BENCH(fn, name)      \
  BENCHMARK(fn)->Name("codec/" name); \
  BENCHMARK(fn)->Name("codec_ir/" name)->Iterations(1000)

BT_CODEC_BENCH(to_headers_list<bt::synapse>, "to_headers/base");
BT_CODEC_BENCH(to_headers_buffer<bt::synapse>, "to_headers_buffer/base");
BT_CODEC_BENCH(from_headers<bt::synapse>, "from_headers/base");
BT_CODEC_BENCH(to_headers_list<wide>, "to_headers/wide20");
BT_CODEC_BENCH(to_headers_buffer<wide>, "to_headers_buffer/wide20");
BT_CODEC_BENCH(to_headers_prehashed, "to_headers_prehashed/wide20");
BT_CODEC_BENCH(from_headers<wide>, "from_headers/wide20");
BT_CODEC_BENCH(dynamic_to_headers, "to_headers/dynamic20");
BT_CODEC_BENCH(body_hash_wide, "body_hash/wide20_4_fields");
BT_CODEC_BENCH(json_write<bt::synapse>, "json_write/base");
BT_CODEC_BENCH(json_read<bt::synapse>, "json_read/base");
BT_CODEC_BENCH(json_write<wide>, "json_write/wide20");
BT_CODEC_BENCH(json_read<wide>, "json_read/wide20");
BT_CODEC_BENCH(descriptor_build, "descriptor_build/wide20");
BT_CODEC_BENCH(encode_fresh_descriptor, "to_headers_fresh_descriptor/wide20");
