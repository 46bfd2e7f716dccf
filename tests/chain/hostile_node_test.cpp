// What a hostile subtensor node can make the chain client do, bounded: element counts that the
// answer could not hold (no reservation for them), a type registry with a fan-out of shared
// types or a type that contains itself (refused, in a number of steps linear in the registry),
// frames of many tiny or deeply nested JSON values (refused while parsed), a completion handler
// that throws (the client's thread goes on). See docs/chain.md, "Hostile nodes".
#include <bt/chain/extrinsic.hpp>
#include <bt/chain/metadata.hpp>
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/rpc_client.hpp>
#include <bt/chain/scale_writer.hpp>
#include <bt/chain/subnet_state.hpp>

#include "decode_error_of.hpp"
#include "largest_allocation.hpp"
#include "metadata_vectors.hpp"
#include "support/dev_keys.hpp"
#include "support/fake_subtensor.hpp"
#include "support/vectors.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bt::test::error_of;
using bytes = std::vector<std::uint8_t>;

// The input followed by `zeros` zero bytes (zeros decode as valid minimal elements, so a
// decoder that trusted the count would keep going).
bytes with_zeros(bt::scale_writer w, std::size_t zeros) {
  bytes out = w.take();
  out.resize(out.size() + zeros, 0);
  return out;
}

// One NeuronInfoLite up to (not including) its stake Vec's length: keys, uid 0, netuid 0,
// inactive, zeroed axon (34 bytes) and prometheus (31 bytes) infos.
void neuron_head(bt::scale_writer& w) {
  for (int i = 0; i < 64; ++i) w.u8(0);
  w.compact(0);
  w.compact(0);
  w.boolean(false);
  for (int i = 0; i < 34 + 31; ++i) w.u8(0);
}

// Runtime metadata V14 with the given type registry (each entry: the composite's field types),
// no pallets, and one signed extension whose extra type is `extra` and implicit type 0.
bytes v14_metadata(const std::vector<std::vector<std::uint32_t>>& composites, std::uint32_t extra) {
  bt::scale_writer w;
  w.u32(0x6174656d);  // "meta"
  w.u8(14);
  w.length(composites.size());
  for (std::size_t id = 0; id < composites.size(); ++id) {
    w.compact(id);
    w.length(0);  // path
    w.length(0);  // type params
    w.u8(0);      // TypeDef::Composite
    w.length(composites[id].size());
    for (const std::uint32_t f : composites[id]) {
      w.option(false);  // name
      w.compact(f);
      w.option(false);  // type_name
      w.length(0);      // docs
    }
    w.length(0);  // docs
  }
  w.length(0);   // pallets
  w.compact(0);  // extrinsic type
  w.u8(4);       // extrinsic version
  w.length(1);
  w.text("CheckFanOut");
  w.compact(extra);
  w.compact(0);
  w.compact(0);  // the runtime type
  return w.take();
}

// Type 0 is the empty composite; each of types 1..levels has three fields of the type below.
std::vector<std::vector<std::uint32_t>> fan_out(std::uint32_t levels) {
  std::vector<std::vector<std::uint32_t>> types{{}};
  for (std::uint32_t i = 1; i <= levels; ++i) types.push_back({i - 1, i - 1, i - 1});
  return types;
}

bt::signing_context some_context() {
  bt::signing_context c;
  c.spec_version = 1;
  c.transaction_version = 1;
  c.era = bt::mortal_era::from_block(64, 1000);
  return c;
}

std::string session_file() {
  return bt::test::vectors_dir() + "/chain/session_sn1_block6852690.json";
}

bt::endpoint endpoint_of(const bt::test::fake_subtensor& f) {
  auto ep = bt::parse_endpoint(f.url());
  REQUIRE(ep);
  return *ep;
}

struct call_outcome {
  bt::error error;
  bt::json result;
};

call_outcome call_async(bt::rpc_client& c, std::string method, bt::json params) {
  auto p = std::make_shared<std::promise<call_outcome>>();
  auto f = p->get_future();
  c.async_call(std::move(method), std::move(params), [p](bt::error e, bt::json r) {
    p->set_value({std::move(e), std::move(r)});
  });
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  return f.get();
}

}  // namespace

TEST_CASE("hostile node: a count the answer cannot hold is never reserved for", "[hostile]") {
  SECTION("get_neurons_lite claiming 32.5 M neurons: refused at the count") {
    // A 32.5 MB answer whose count fits its bytes (one byte per neuron): a decoder reserving
    // for the count would ask for about 8 GB of neuron_info_lite at once.
    bt::scale_writer w;
    w.compact(32'500'000);
    // (A few bytes more than the count: a count equal to the rest would be read as the older
    // Vec<u8>-wrapped form's byte length.)
    const bytes answer = with_zeros(std::move(w), 32'500'000 + 7);
    std::optional<bt::chain_decode_error> err;
    const auto largest = bt::test::largest_allocation(
        [&] { err = error_of([&] { bt::decode_neurons_lite(answer); }); });
    REQUIRE(err);
    CHECK(err->code() == bt::chain_errc::too_long);
    CHECK(err->error().what == "NeuronInfoLite");
    CHECK(err->error().detail.find("32500000 exceeds the limit of 65536") != std::string::npos);
    if (largest) CHECK(*largest < (1u << 20));
  }
  SECTION("a neuron's stake Vec claiming as many entries as there are bytes") {
    // 1 MB left and a count of 1 M: a stake entry takes at least 33 bytes, so at most about
    // 30,000 can be there; reserving the count would cost 40 bytes per claimed entry.
    bt::scale_writer w;
    w.compact(1);
    neuron_head(w);
    constexpr std::size_t left = 1'000'000;
    w.compact(left);
    const bytes answer = with_zeros(std::move(w), left + 4);
    std::optional<bt::chain_decode_error> err;
    const auto largest = bt::test::largest_allocation(
        [&] { err = error_of([&] { bt::decode_neurons_lite(answer); }); });
    REQUIRE(err);
    // The zeros decode as entries until the input runs out: truncated, naming the entry.
    CHECK(err->code() == bt::chain_errc::truncated);
    CHECK(err->error().what.rfind("NeuronInfoLite[0].stake[", 0) == 0);
    if (largest) CHECK(*largest <= 2 * answer.size());
  }
  SECTION("SubnetState's per-neuron vectors: more than a subnet's 65,536 uids are refused") {
    bt::scale_writer w;
    w.option(true);
    w.compact(1);          // netuid
    w.length(0);           // hotkeys
    w.length(0);           // coldkeys
    w.length(0);           // active
    w.length(0);           // validator_permit
    w.length(0);           // pruning_score
    w.compact(1'000'000);  // last_update, one byte per entry would fit
    const bytes answer = with_zeros(std::move(w), 1'000'000);
    std::optional<bt::chain_decode_error> err;
    const auto largest = bt::test::largest_allocation(
        [&] { err = error_of([&] { bt::decode_subnet_state(answer); }); });
    REQUIRE(err);
    CHECK(err->code() == bt::chain_errc::too_long);
    CHECK(err->error().what == "SubnetState.last_update");
    CHECK(err->error().detail.find("limit of 65536") != std::string::npos);
    if (largest) CHECK(*largest < (1u << 20));
  }
  SECTION("metadata: a type registry and a composite's fields claiming a count per byte") {
    // A type takes at least 6 bytes and a field 4: the reservations are bounded by the input
    // over those sizes, not by the count.
    for (const bool in_fields : {false, true}) {
      bt::scale_writer w;
      w.u32(0x6174656d);
      w.u8(14);
      constexpr std::size_t left = 1'000'000;
      if (in_fields) {
        w.compact(1);  // one type, a composite with a million fields
        w.compact(0);
        w.length(0);
        w.length(0);
        w.u8(0);
      }
      w.compact(left);
      const bytes md = with_zeros(std::move(w), left);
      std::optional<bt::chain_decode_error> err;
      const auto largest =
          bt::test::largest_allocation([&] { err = error_of([&] { bt::decode_metadata(md); }); });
      REQUIRE(err);
      CHECK(err->code() != bt::chain_errc::too_long);  // the count itself fits the bytes
      if (largest) CHECK(*largest <= 32 * md.size());
    }
  }
}

TEST_CASE("hostile node: a fan-out of shared types is walked once per type, deep nesting refused",
          "[hostile]") {
  const auto call = bytes{0x07, 0x04};
  SECTION("32 levels of three fields each (3^31 paths): a clear error, not a hang") {
    const bytes raw = v14_metadata(fan_out(32), 32);
    CHECK(raw.size() < 1000);
    const bt::runtime_metadata md = bt::decode_metadata(raw);
    const auto e = error_of([&] { (void)md.is_empty_type(32); });
    CHECK(e.code() == bt::chain_errc::bad_metadata);
    CHECK(e.error().detail.find("nested deeper than 16") != std::string::npos);
    // What bt-chain serve-axon does with it: signing refuses the metadata.
    const auto s =
        error_of([&] { (void)bt::sign_extrinsic(md, call, some_context(), bt::test::alice()); });
    CHECK(s.code() == bt::chain_errc::bad_metadata);
  }
  SECTION("16 levels (3^16 paths): answered by walking each of the 17 types once") {
    const bt::runtime_metadata md = bt::decode_metadata(v14_metadata(fan_out(16), 16));
    CHECK(md.is_empty_type(16));
    // An extension whose types carry no data is a no-op: the extrinsic signs.
    CHECK_NOTHROW(bt::sign_extrinsic(md, call, some_context(), bt::test::alice()));
  }
  SECTION("a composite that contains itself") {
    // Type 1 has fields of type 0 and of itself.
    const bt::runtime_metadata md = bt::decode_metadata(v14_metadata({{}, {0, 1}}, 1));
    const auto e = error_of([&] { (void)md.is_empty_type(1); });
    CHECK(e.code() == bt::chain_errc::bad_metadata);
    CHECK(e.error().detail.find("contains itself") != std::string::npos);
  }
  SECTION("the recorded runtimes' extensions are within the bound") {
    for (const char* file : bt::test::metadata_files) {
      const auto md = bt::decode_metadata(bt::test::metadata_bytes(file));
      for (const auto& x : md.extensions) {
        CHECK_NOTHROW(md.is_empty_type(x.extra_type));
        CHECK_NOTHROW(md.is_empty_type(x.implicit_type));
      }
    }
  }
}

TEST_CASE("hostile node: frames of many tiny or deeply nested values are refused while parsed",
          "[hostile][rpc]") {
  bt::test::fake_subtensor fake(session_file());
  bt::rpc_client c(endpoint_of(fake), {.request_timeout = 20s});
  SECTION("100,000 empty arrays (a tree ~20 times the frame)") {
    bt::json many = bt::json::array();
    for (int i = 0; i < 100'000; ++i) many.push_back(bt::json::array());
    fake.set_response("system_name", bt::json::array(), {{"result", std::move(many)}});
    const auto o = call_async(c, "system_name", bt::json::array());
    CHECK(o.error.code == bt::chain_errc::malformed_frame);
    CHECK(o.error.detail.find("more than 65536 JSON values") != std::string::npos);
  }
  SECTION("arrays nested 100 deep") {
    bt::json nested = bt::json::array();
    for (int i = 0; i < 99; ++i) nested = bt::json::array({std::move(nested)});
    fake.set_response("system_name", bt::json::array(), {{"result", std::move(nested)}});
    const auto o = call_async(c, "system_name", bt::json::array());
    CHECK(o.error.code == bt::chain_errc::malformed_frame);
    CHECK(o.error.detail.find("nested deeper than 64") != std::string::npos);
  }
  // The connection was closed; the client still answers on a new one.
  const auto ok = call_async(c, "chain_getHead", bt::json::array());
  CHECK_FALSE(ok.error);
  CHECK(ok.result.is_string());
}

TEST_CASE("hostile node: the default limits admit the largest recorded answers tenfold",
          "[hostile][rpc]") {
  // The largest real answers: the recorded metadata (hex text) and the session's frames.
  std::size_t largest = 0;
  for (const char* file : bt::test::metadata_files) {
    largest = std::max(largest, 2 * bt::test::metadata_bytes(file).size() + 2);
  }
  std::ifstream in(session_file());
  std::stringstream ss;
  ss << in.rdbuf();
  const bt::json session = bt::json::parse(ss.str());
  for (const auto& call : session.at("calls")) {
    largest = std::max(largest, call.at("response").dump().size() + 64);
  }
  CHECK(largest > 300'000);
  const bt::rpc_client_options defaults;
  CHECK(defaults.max_frame_bytes >= 10 * largest);
  // And the recorded metagraph answers are read whole with the default options.
  bt::test::fake_subtensor fake(session_file());
  bt::rpc_client c(endpoint_of(fake));
  const auto o = call_async(c, "state_call",
                            {"NeuronInfoRuntimeApi_get_neurons_lite", "0100",
                             "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0"});
  CHECK_FALSE(o.error);
  CHECK(o.result.get_ref<const std::string&>().size() > 300'000);
}

TEST_CASE("hostile node: a completion handler that throws does not end the client's thread",
          "[hostile][rpc]") {
  bt::test::fake_subtensor fake(session_file());
  bt::rpc_client c(endpoint_of(fake));
  std::promise<void> thrown;
  c.async_call("chain_getHead", bt::json::array(), [&thrown](bt::error, bt::json) {
    thrown.set_value();
    throw std::runtime_error("a handler that throws");
  });
  auto f = thrown.get_future();
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  // The client's own thread is still running its loop: later calls complete.
  const auto o = call_async(c, "chain_getHead", bt::json::array());
  CHECK_FALSE(o.error);
  CHECK(o.result.is_string());
}
