// bt::prepare_serve_axon and bt::submit_serve_axon against the loopback fake subtensor, which
// answers the calls the dry run and the submission make (the recorded head at block 6852690,
// the recorded runtime's metadata V14, a canned genesis hash, nonce and storage).
#include <bt/chain/scale_writer.hpp>
#include <bt/chain/serve_axon.hpp>
#include <bt/hex.hpp>

#include <catch2/catch.hpp>
#include <chain/metadata_vectors.hpp>
#include <support/dev_keys.hpp>
#include <support/fake_subtensor.hpp>

#include <system_error>

namespace {

using namespace std::chrono_literals;

constexpr const char* head_hash =
    "0xdb13c066e2c63969f140164fb3bfe7a0aaa7b71407fc0fe525d68e57329ef9d0";
constexpr const char* genesis =
    "0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03";

std::string metadata_hex() {
  return "0x" + bt::to_hex(bt::test::metadata_bytes("metadata_v14_spec343.hex"));
}

// The calls prepare_serve_axon makes, answered for `signer`.
void serve_chain_state(bt::test::fake_subtensor& node, const bt::keypair& signer,
                       std::uint64_t nonce) {
  node.set_response("chain_getHeader", bt::json::array(),
                    {{"result", {{"number", "0x689052"}, {"parentHash", head_hash}}}});
  node.set_response("chain_getBlockHash", bt::json::array({6852690}), {{"result", head_hash}});
  node.set_response("chain_getBlockHash", bt::json::array({0}), {{"result", genesis}});
  node.set_response("state_getRuntimeVersion", bt::json::array({head_hash}),
                    {{"result", {{"specVersion", 343}, {"transactionVersion", 1}}}});
  static const std::string md = metadata_hex();
  node.set_response("state_getMetadata", bt::json::array({head_hash}), {{"result", md}});
  node.set_response("system_accountNextIndex", bt::json::array({signer.ss58_address()}),
                    {{"result", nonce}});
}

bt::serve_axon_args args() {
  bt::serve_axon_args a;
  a.netuid = 1;
  a.version = 10'002'000;
  a.ip = bt::parse_ip("203.0.113.7")->first;
  a.ip_type = 4;
  a.port = 8091;
  a.protocol = 4;
  return a;
}

std::string axon_info_hex(const bt::serve_axon_args& a, std::uint16_t port) {
  bt::scale_writer w;
  w.u64(6852691);
  w.u32(a.version);
  w.u128(a.ip);
  w.u16(port);
  w.u8(a.ip_type);
  w.u8(a.protocol);
  w.u8(0);
  w.u8(0);
  return "0x" + bt::to_hex(w.view());
}

std::string storage_key(const bt::keypair& k) {
  return "0x" + bt::to_hex(bt::axons_storage_key(1, k.public_key()));
}

}  // namespace

TEST_CASE("serve_axon: the dry run reads head, era block, genesis, version, metadata and nonce",
          "[serve_axon]") {
  bt::test::fake_subtensor node;
  const auto& alice = bt::test::alice();
  serve_chain_state(node, alice, 17);
  bt::rpc_client client(*bt::parse_endpoint(node.url()));
  const auto plan = bt::prepare_serve_axon(client, alice, args());
  CHECK(plan.head_block == 6852690);
  CHECK(plan.era_block == 6852690);  // the era of period 128 starts at the head
  CHECK(plan.context.era.period == 128);
  CHECK(plan.context.nonce == 17);
  CHECK(plan.context.spec_version == 343);
  CHECK(plan.metadata_version == 14);
  CHECK("0x" + bt::to_hex(plan.context.genesis_hash) == genesis);
  CHECK("0x" + bt::to_hex(plan.context.era_block_hash) == head_hash);
  CHECK(alice.verify(plan.extrinsic.signing_payload, plan.extrinsic.signature));

  const bt::json j = bt::dry_run_json(plan);
  CHECK(j.size() == 7);
  CHECK(j.at("call_hex") == "0x07040100509e9800077100cb0000000000000000000000009b1f04040000");
  CHECK(j.at("nonce") == 17);
  CHECK(j.at("era_block") == 6852690);
  CHECK(j.at("spec_version") == 343);
  CHECK(j.at("transaction_version") == 1);
  CHECK(j.at("extrinsic_hex") == "0x" + bt::to_hex(plan.extrinsic.extrinsic));
  CHECK(j.at("signing_payload_hex") == "0x" + bt::to_hex(plan.extrinsic.signing_payload));
  // Nothing was submitted.
  CHECK(node.requests("author_submitExtrinsic") == 0);
}

TEST_CASE("serve_axon: a refused argument never reaches the node", "[serve_axon]") {
  bt::test::fake_subtensor node;
  serve_chain_state(node, bt::test::alice(), 0);
  bt::rpc_client client(*bt::parse_endpoint(node.url()));
  auto a = args();
  a.ip = bt::parse_ip("127.0.0.1")->first;
  try {
    (void)bt::prepare_serve_axon(client, bt::test::alice(), a);
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == bt::chain_errc::invalid_argument);
  }
  CHECK(node.requests("chain_getHeader") == 0);
}

TEST_CASE("serve_axon: a JSON-RPC error names the method, and a bad answer is an error",
          "[serve_axon]") {
  bt::test::fake_subtensor node;
  const auto& alice = bt::test::alice();
  serve_chain_state(node, alice, 0);
  node.remove_method("system_accountNextIndex");
  bt::rpc_client client(*bt::parse_endpoint(node.url()));
  try {
    (void)bt::prepare_serve_axon(client, alice, args());
    FAIL("no error");
  } catch (const bt::rpc_call_error& e) {
    CHECK(e.code() == bt::chain_errc::rpc_error);
    CHECK(std::string(e.what()).find("system_accountNextIndex") != std::string::npos);
  }
  serve_chain_state(node, alice, 0);
  node.set_response("state_getMetadata", bt::json::array({head_hash}), {{"result", "0x6d657461"}});
  try {
    (void)bt::prepare_serve_axon(client, alice, args());
    FAIL("no error");
  } catch (const bt::chain_decode_error& e) {
    CHECK(e.code() == bt::chain_errc::truncated);
    CHECK(std::string(e.what()).find("state_getMetadata") != std::string::npos);
  }
  serve_chain_state(node, alice, 0);
  node.set_response("chain_getBlockHash", bt::json::array({0}), {{"result", "0x1234"}});
  CHECK_THROWS_AS(bt::prepare_serve_axon(client, alice, args()), std::system_error);
}

TEST_CASE("serve_axon: submit, then storage is re-read until it shows the axon", "[serve_axon]") {
  bt::test::fake_subtensor node;
  const auto& alice = bt::test::alice();
  serve_chain_state(node, alice, 3);
  bt::rpc_client client(*bt::parse_endpoint(node.url()));
  const auto plan = bt::prepare_serve_axon(client, alice, args());
  const std::string ext = "0x" + bt::to_hex(plan.extrinsic.extrinsic);
  node.set_response("author_submitExtrinsic", bt::json::array({ext}), {{"result", "0xabcd"}});

  SECTION("storage matches") {
    node.set_response("state_getStorage", bt::json::array({storage_key(alice)}),
                      {{"result", axon_info_hex(args(), 8091)}});
    const auto c = bt::submit_serve_axon(client, plan, alice, 5s, 10ms);
    CHECK(c.extrinsic_hash == "0xabcd");
    CHECK(c.polls == 1);
    CHECK(node.requests("author_submitExtrinsic") == 1);
  }
  SECTION("storage keeps the old axon: timeout, after several polls") {
    node.set_response("state_getStorage", bt::json::array({storage_key(alice)}),
                      {{"result", axon_info_hex(args(), 9000)}});
    try {
      (void)bt::submit_serve_axon(client, plan, alice, 300ms, 20ms);
      FAIL("no error");
    } catch (const std::system_error& e) {
      CHECK(e.code() == bt::chain_errc::timeout);
      CHECK(std::string(e.what()).find("0xabcd") != std::string::npos);
    }
    CHECK(node.requests("state_getStorage") >= 2);
  }
  SECTION("no axon stored yet (null): timeout") {
    node.set_response("state_getStorage", bt::json::array({storage_key(alice)}),
                      {{"result", nullptr}});
    CHECK_THROWS_AS(bt::submit_serve_axon(client, plan, alice, 100ms, 20ms), std::system_error);
  }
  SECTION("the node refuses the extrinsic: its error, no polling") {
    node.set_response("author_submitExtrinsic", bt::json::array({ext}),
                      {{"error", {{"code", 1010}, {"message", "Invalid Transaction"}}}});
    CHECK_THROWS_AS(bt::submit_serve_axon(client, plan, alice, 1s, 10ms), bt::rpc_call_error);
    CHECK(node.requests("state_getStorage") == 0);
  }
}
