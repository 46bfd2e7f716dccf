// bt::subtensor against the loopback fake subtensor replaying the recorded mainnet session
// (subnet 1 at block 6852690): pinning, the two runtime calls sent together, the fallback
// without get_subnet_state, and failures naming the method, the endpoint and the decode offset.
#include <bt/chain/chain_error.hpp>
#include <bt/chain/subtensor.hpp>

#include "support/fake_subtensor.hpp"
#include "support/vectors.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>

namespace {

using namespace std::chrono_literals;

const std::string block_hash = "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0";
constexpr const char* neurons_api = "NeuronInfoRuntimeApi_get_neurons_lite";
constexpr const char* state_api = "SubnetInfoRuntimeApi_get_subnet_state";

std::string session_path() {
  return bt::test::vectors_dir() + "/chain/session_sn1_block6852690.json";
}

bt::endpoint ep_of(const bt::test::fake_subtensor& f) {
  auto ep = bt::parse_endpoint(f.url());
  REQUIRE(ep);
  return *ep;
}

bt::subtensor_error expect_error(bt::subtensor& st, std::uint16_t netuid,
                                 std::optional<std::uint64_t> block) {
  try {
    st.get_metagraph(netuid, block);
  } catch (const bt::subtensor_error& e) {
    return e;
  }
  FAIL("no error");
  throw std::logic_error("unreachable");
}

// uid 0 of the recording, read by hand from the get_neurons_lite hex: after the compact length
// (01 10 = 1024), the first 32 bytes are the hotkey 4a7a6cf2...fa610166 and the next 32 the
// coldkey; their SS58 (format 42: blake2b-512 over "SS58PRE" 2a || key, first two bytes as the
// checksum, base58) was computed with Python's hashlib, not with this library. The axon follows
// uid (00), netuid (04) and active (00): block u64, version u32 9011001, ip u128 0xc0de3b6d
// (192.222.59.109), port u16 6028, ip_type 4, protocol 4.
constexpr const char* uid0_hotkey = "5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ";
constexpr const char* uid0_coldkey = "5EhQWxcFdYAk7B9tNdQnJQFzww5N3964rbsMk55SujcX3PwM";

}  // namespace

TEST_CASE("subtensor: the netuid argument is a little-endian u16", "[subtensor]") {
  CHECK(bt::netuid_call_arg(1) == "0x0100");
  CHECK(bt::netuid_call_arg(0x1234) == "0x3412");
}

TEST_CASE("subtensor: pins the head (chain_getHead, chain_getHeader) or a block number",
          "[subtensor]") {
  bt::test::fake_subtensor fake(session_path());
  bt::subtensor st(ep_of(fake));
  auto head = st.pin_block();
  CHECK(head.number == 6852690);
  CHECK(head.hash == block_hash);
  auto at = st.pin_block(6852690);
  CHECK(at.number == 6852690);
  CHECK(at.hash == block_hash);
  CHECK(fake.requests("chain_getHead") == 1);
  CHECK(fake.requests("chain_getHeader") == 1);
  CHECK(fake.requests("chain_getBlockHash") == 1);
  // A block the node does not know: chain_getBlockHash answers null.
  fake.set_response("chain_getBlockHash", {99999999}, {{"result", nullptr}});
  try {
    st.pin_block(99999999);
    FAIL("no error");
  } catch (const bt::subtensor_error& e) {
    CHECK(e.code() == bt::chain_errc::invalid_value);
    CHECK(e.error().what == "chain_getBlockHash");
    CHECK(e.error().detail.find("99999999") != std::string::npos);
  }
}

TEST_CASE("subtensor: the recorded subnet 1 metagraph, both runtime calls in flight together",
          "[subtensor]") {
  bt::test::fake_subtensor fake(session_path());
  // Each state_call answer is held back: when the client sends both before waiting, the fake
  // holds two at once; a client that waited for one answer before the next call never does.
  fake.set_fault("state_call", bt::test::parse_fake_fault("delay:200"));
  bt::subtensor st(ep_of(fake));
  const bt::metagraph m = st.get_metagraph(1, 6852690);
  CHECK(fake.max_outstanding() == 2);
  CHECK(fake.requests("state_call") == 2);
  CHECK(m.netuid == 1);
  CHECK(m.block == 6852690);
  CHECK(m.block_hash == block_hash);
  CHECK(m.stake == bt::stake_source::subnet_state);
  REQUIRE(m.neurons.size() == 1024);
  const auto& n0 = m.neurons[0];
  CHECK(n0.uid == 0);
  CHECK(n0.hotkey == uid0_hotkey);
  CHECK(n0.coldkey == uid0_coldkey);
  CHECK(n0.axon.ip == "192.222.59.109");
  CHECK(n0.axon.port == 6028);
  CHECK(n0.axon.ip_type == 4);
  CHECK(n0.axon.version == 9011001);
  CHECK(n0.serving);
  CHECK(m.neurons[1023].uid == 1023);
  // At the head: the same block here, pinned through chain_getHead.
  const bt::metagraph h = st.get_metagraph(1);
  CHECK(h.block == 6852690);
  CHECK(h.neurons.size() == 1024);
}

TEST_CASE("read_metagraph: one call from a node URL to the axons a dendrite takes", "[subtensor]") {
  bt::test::fake_subtensor fake(session_path());
  const bt::metagraph m = bt::read_metagraph(fake.url(), 1);
  CHECK(m.block == 6852690);
  REQUIRE(m.neurons.size() == 1024);
  const auto axons = m.serving_axons();
  CHECK(axons.size() == 827);  // the recorded subnet's serving neurons, all with a port
  CHECK(axons.front() == m.neurons[0].axon);
  CHECK(axons.front().hotkey == uid0_hotkey);
  try {
    (void)bt::read_metagraph("http://127.0.0.1:1", 1);
    FAIL("an http:// node was accepted");
  } catch (const bt::subtensor_error& e) {
    CHECK(e.code() == bt::chain_errc::bad_endpoint);
  }
}

TEST_CASE("subtensor: a runtime without get_subnet_state falls back to the neurons' own stake",
          "[subtensor]") {
  bt::test::fake_subtensor fake(session_path());
  fake.set_response("state_call", {state_api, "0100", block_hash},
                    {{"error",
                      {{"code", 4003},
                       {"message",
                        "Client error: Execution failed: Other: Exported method "
                        "SubnetInfoRuntimeApi_get_subnet_state is not found"}}}});
  bt::subtensor st(ep_of(fake));
  const bt::metagraph m = st.get_metagraph(1, 6852690);
  CHECK(m.stake == bt::stake_source::neuron_stake_entries);
  REQUIRE(m.neurons.size() == 1024);
  CHECK(m.neurons[0].hotkey == uid0_hotkey);
  CHECK(bt::to_json(m).at("stake_source") == "neuron_stake_entries");
}

TEST_CASE("subtensor: failures name the method, the endpoint and the decode offset",
          "[subtensor]") {
  bt::test::fake_subtensor fake(session_path());
  // Below the 2 s delay of the timeout section, well above what the fake needs on a loaded
  // machine under ASan (300 ms was not always enough).
  bt::subtensor st(ep_of(fake), {.request_timeout = 1000ms});

  SECTION("a truncated get_neurons_lite result") {
    // One neuron announced, 15 bytes of it present: the hotkey at offset 1 runs out.
    fake.set_response("state_call", {neurons_api, "0100", block_hash},
                      {{"result", "0x044a7a6cf22af0de8f0c3566ceb47c"}});  // 1 neuron, 15 bytes
    auto e = expect_error(st, 1, 6852690);
    CHECK(e.code() == bt::chain_errc::truncated);
    CHECK(e.error().what.starts_with(std::string("state_call ") + neurons_api));
    CHECK(e.error().what.find("NeuronInfoLite[0]") != std::string::npos);
    CHECK(e.error().detail.find("offset 1") != std::string::npos);
    CHECK(e.error().detail.find(fake.url()) != std::string::npos);
  }
  SECTION("a result that is not hex") {
    fake.set_response("state_call", {state_api, "0100", block_hash}, {{"result", "0xzz"}});
    auto e = expect_error(st, 1, 6852690);
    CHECK(e.code() == bt::chain_errc::invalid_value);
    CHECK(e.error().what == std::string("state_call ") + state_api);
  }
  SECTION("a subnet that does not exist") {
    fake.set_response("state_call", {neurons_api, "0x0700", block_hash}, {{"result", "0x00"}});
    fake.set_response("state_call", {state_api, "0x0700", block_hash}, {{"result", "0x00"}});
    auto e = expect_error(st, 7, 6852690);
    CHECK(e.code() == bt::chain_errc::invalid_value);
    CHECK(e.error().detail.find("subnet 7 does not exist") != std::string::npos);
  }
  SECTION("a JSON-RPC error from get_neurons_lite is not a fallback") {
    fake.set_response("state_call", {neurons_api, "0100", block_hash},
                      {{"error", {{"code", -32000}, {"message", "boom"}}}});
    auto e = expect_error(st, 1, 6852690);
    CHECK(e.code() == bt::chain_errc::rpc_error);
    CHECK(std::string(e.what()).find("boom") != std::string::npos);
  }
  SECTION("get_subnet_state past the timeout is a timeout, not a fallback") {
    fake.set_fault("state_call", bt::test::parse_fake_fault("delay:2000"));
    auto e = expect_error(st, 1, 6852690);
    CHECK(e.code() == bt::chain_errc::timeout);
    CHECK(e.error().what.starts_with("state_call "));
  }
  SECTION("the connection closed in the middle of the answer") {
    fake.set_fault("state_call", bt::test::parse_fake_fault("close"));
    auto e = expect_error(st, 1, 6852690);
    CHECK(e.code() == bt::chain_errc::closed);
  }
}

TEST_CASE("subtensor: the asynchronous forms take completion tokens (a coroutine here)",
          "[subtensor]") {
  bt::test::fake_subtensor fake(session_path());
  bt::subtensor st(ep_of(fake));
  boost::asio::io_context ioc;
  std::size_t n = 0;
  bt::pinned_block pinned;
  bt::error pin_error, mg_error;
  boost::asio::co_spawn(
      ioc,
      [&]() -> boost::asio::awaitable<void> {
        auto [e1, b] = co_await st.async_pin_block(std::nullopt, boost::asio::use_awaitable);
        pin_error = e1;
        pinned = b;
        auto [e2, m] = co_await st.async_metagraph(1, b.number, boost::asio::use_awaitable);
        mg_error = e2;
        n = m.neurons.size();
      },
      boost::asio::detached);
  ioc.run_for(std::chrono::seconds(20));
  CHECK_FALSE(pin_error);
  CHECK(pinned.number == 6852690);
  CHECK_FALSE(mg_error);
  CHECK(n == 1024);
}
