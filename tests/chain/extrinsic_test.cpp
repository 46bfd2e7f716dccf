// The serve_axon call and version-4 signed extrinsics over the recorded runtimes' metadata.
// (tests/node/chain_extrinsic_node_test.cpp has @polkadot/types decode and verify them.)
#include <bt/chain/extrinsic.hpp>
#include <bt/chain/scale_reader.hpp>
#include <bt/hex.hpp>

#include <catch2/catch.hpp>
#include <chain/metadata_vectors.hpp>
#include <support/dev_keys.hpp>

#include <system_error>

namespace {

const bt::runtime_metadata& v14() {
  static const bt::runtime_metadata m =
      bt::decode_metadata(bt::test::metadata_bytes("metadata_v14_spec343.hex"));
  return m;
}

bt::serve_axon_args sample_args() {
  bt::serve_axon_args a;
  a.netuid = 1;
  a.version = 10'002'000;
  a.ip = (203u << 24) | (0u << 16) | (113u << 8) | 7u;  // 203.0.113.7
  a.port = 8091;
  a.ip_type = 4;
  a.protocol = 4;
  return a;
}

bt::signing_context sample_context() {
  bt::signing_context c;
  c.spec_version = 343;
  c.transaction_version = 1;
  for (std::size_t i = 0; i < 32; ++i) {
    c.genesis_hash[i] = static_cast<std::uint8_t>(0x10 + i);
    c.era_block_hash[i] = static_cast<std::uint8_t>(0xa0 + i);
  }
  c.nonce = 5;
  c.era = bt::mortal_era::from_block(128, 6852690);
  return c;
}

template <typename F>
std::error_code code_of(F&& f) {
  try {
    f();
  } catch (const std::system_error& e) {
    return e.code();
  }
  return {};
}

}  // namespace

TEST_CASE("extrinsic: mortal eras match Substrate's Era::mortal", "[extrinsic]") {
  // sp_runtime::generic::Era's own tests.
  auto e = bt::mortal_era::from_block(64, 42);
  CHECK(e.period == 64);
  CHECK(e.phase == 42);
  CHECK(e.encode() == std::array<std::uint8_t, 2>{5 + 42 % 16 * 16, 42 / 16});
  e = bt::mortal_era::from_block(32768, 20000);
  CHECK(e.period == 32768);
  CHECK(e.phase == 20000);
  CHECK(e.encode() == std::array<std::uint8_t, 2>{14 + 2500 % 16 * 16, 2500 / 16});
  e = bt::mortal_era::from_block(200, 513);
  CHECK((e.period == 256 && e.phase == 1));
  e = bt::mortal_era::from_block(2, 1);
  CHECK((e.period == 4 && e.phase == 1));
  e = bt::mortal_era::from_block(4, 5);
  CHECK((e.period == 4 && e.phase == 1));
  e = bt::mortal_era::from_block(std::uint64_t{64} << 16, 42);  // quantized, clamped
  CHECK((e.period == 65536 && e.phase == 32));
  const auto r = bt::mortal_era::from_block(64, 42);
  CHECK(r.birth(42) == 42);
  CHECK(r.birth(105) == 42);
  CHECK(r.birth(106) == 106);
  // bittensor's period, at the recorded block: 6852690 % 128 = 82.
  const auto b = bt::mortal_era::from_block(128, 6852690);
  CHECK(b.phase == 82);
  CHECK(b.birth(6852690) == 6852690);
  CHECK(b.birth(6852690 + 127) == 6852690);
  CHECK(b.encode() == std::array<std::uint8_t, 2>{static_cast<std::uint8_t>(6 | (82 << 4)),
                                                  static_cast<std::uint8_t>((82 << 4) >> 8)});
}

TEST_CASE("extrinsic: parse_ip reads IPv4 and IPv6 as the chain stores them", "[extrinsic]") {
  auto p = bt::parse_ip("203.0.113.7");
  REQUIRE(p);
  CHECK(p->second == 4);
  CHECK(p->first == 0xcb007107u);
  p = bt::parse_ip("2001:db8::1");
  REQUIRE(p);
  CHECK(p->second == 6);
  CHECK(p->first == ((static_cast<bt::uint128_t>(0x20010db800000000ull) << 64) | 1));
  CHECK_FALSE(bt::parse_ip("203.0.113"));
  CHECK_FALSE(bt::parse_ip("example.com"));
  CHECK_FALSE(bt::parse_ip(""));
  CHECK_FALSE(bt::parse_ip(std::string(100, '1')));
}

TEST_CASE("extrinsic: serve_axon arguments the chain would refuse are refused locally",
          "[extrinsic]") {
  const auto bad = [](auto change) {
    auto a = sample_args();
    change(a);
    return code_of([&] { bt::check_serve_axon_args(a); });
  };
  CHECK(bad([](auto&) {}) == std::error_code{});
  CHECK(bad([](auto& a) { a.port = 0; }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) { a.ip_type = 5; }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) { a.ip = 0; }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) { a.ip = 0x7f000001; }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) { a.ip = 0x7f0a0b0c; }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) { a.ip = 0xffffffff; }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) { a.ip = static_cast<bt::uint128_t>(1) << 40; }) ==
        bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) {
          a.ip_type = 6;
          a.ip = 1;
        }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) {
          a.ip_type = 6;
          a.ip = 0;
        }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) {
          a.ip_type = 6;
          a.ip = bt::parse_ip("::ffff:127.0.0.1")->first;
        }) == bt::chain_errc::invalid_argument);
  CHECK(bad([](auto& a) {
          a.ip_type = 6;
          a.ip = bt::parse_ip("2001:db8::1")->first;
        }) == std::error_code{});
  // The call encoder checks too.
  auto a = sample_args();
  a.port = 0;
  CHECK(code_of([&] { (void)bt::encode_serve_axon_call(v14(), a); }) ==
        bt::chain_errc::invalid_argument);
}

TEST_CASE("extrinsic: the serve_axon call is pallet index, call index and eight arguments",
          "[extrinsic]") {
  for (const char* file : bt::test::metadata_files) {
    INFO(file);
    const auto md = bt::decode_metadata(bt::test::metadata_bytes(file));
    const auto call = bt::encode_serve_axon_call(md, sample_args());
    CHECK(bt::to_hex(call) ==
          "0704"                              // SubtensorModule (7), serve_axon (4)
          "0100"                              // netuid u16
          "509e9800"                          // version u32 10002000
          "077100cb000000000000000000000000"  // ip u128 203.0.113.7
          "9b1f"                              // port u16 8091
          "04"                                // ip_type
          "04"                                // protocol
          "00"                                // placeholder1
          "00");                              // placeholder2
  }
}

TEST_CASE("extrinsic: a signed serve_axon extrinsic has the v4 layout and a valid signature",
          "[extrinsic]") {
  const auto& alice = bt::test::alice();
  for (const char* file : bt::test::metadata_files) {
    INFO(file);
    const auto md = bt::decode_metadata(bt::test::metadata_bytes(file));
    const auto ctx = sample_context();
    const auto call = bt::encode_serve_axon_call(md, sample_args());
    const auto x = bt::sign_extrinsic(md, call, ctx, alice);

    // extra: era (2 bytes), Compact nonce 5, Compact tip 0, CheckMetadataHash mode 0.
    const auto era = ctx.era.encode();
    CHECK(bt::to_hex(x.extra) == bt::to_hex(era) + "14" + "00" + "00");
    // implicit: spec u32, tx u32, genesis, era block hash, metadata hash None.
    CHECK(bt::to_hex(x.implicit) ==
          "57010000"
          "01000000" +
              bt::to_hex(ctx.genesis_hash) + bt::to_hex(ctx.era_block_hash) + "00");
    std::vector<std::uint8_t> payload = call;
    payload.insert(payload.end(), x.extra.begin(), x.extra.end());
    payload.insert(payload.end(), x.implicit.begin(), x.implicit.end());
    REQUIRE(payload.size() <= 256);
    CHECK(x.signing_payload == payload);
    CHECK(alice.verify(x.signing_payload, x.signature));

    bt::scale_reader r(x.extrinsic);
    const std::size_t len = r.length("len");
    CHECK(len == r.remaining());
    CHECK(r.u8("version") == 0x84);
    CHECK(r.u8("address") == 0);
    CHECK(r.account_id("signer") == alice.public_key());
    CHECK(r.u8("signature") == 1);
    const auto sig = r.bytes(64, "sig");
    CHECK(std::equal(sig.begin(), sig.end(), x.signature.begin()));
    const auto extra = r.bytes(x.extra.size(), "extra");
    CHECK(std::equal(extra.begin(), extra.end(), x.extra.begin()));
    const auto rest = r.bytes(r.remaining(), "call");
    CHECK(std::vector<std::uint8_t>(rest.begin(), rest.end()) == call);
  }
}

TEST_CASE("extrinsic: a signing payload over 256 bytes is signed as its blake2b-256",
          "[extrinsic]") {
  const auto& alice = bt::test::alice();
  const auto ctx = sample_context();
  std::vector<std::uint8_t> big_call(300, 0x42);
  const auto x = bt::sign_extrinsic(v14(), big_call, ctx, alice);
  std::vector<std::uint8_t> payload = big_call;
  payload.insert(payload.end(), x.extra.begin(), x.extra.end());
  payload.insert(payload.end(), x.implicit.begin(), x.implicit.end());
  const auto h = bt::blake2b_256(payload);
  CHECK(x.signing_payload == std::vector<std::uint8_t>(h.begin(), h.end()));
  CHECK(alice.verify(x.signing_payload, x.signature));
  // Exactly 256 bytes is signed as is.
  std::vector<std::uint8_t> call256(256 - x.extra.size() - x.implicit.size(), 0x42);
  const auto y = bt::sign_extrinsic(v14(), call256, ctx, alice);
  CHECK(y.signing_payload.size() == 256);
}

TEST_CASE("extrinsic: unknown extensions with data, mistyped known ones and bad signers",
          "[extrinsic]") {
  const auto ctx = sample_context();
  const auto call = bt::encode_serve_axon_call(v14(), sample_args());
  // An extension we do not know that carries data: CheckNonce's types under another name.
  auto md = v14();
  for (auto& x : md.extensions)
    if (x.identifier == "CheckNonce") x.identifier = "CheckSomethingNew";
  try {
    (void)bt::sign_extrinsic(md, call, ctx, bt::test::alice());
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == bt::chain_errc::unknown_extension);
    CHECK(std::string(e.what()).find("CheckSomethingNew") != std::string::npos);
  }
  // A known name whose metadata types carry no data where we would write some.
  md = v14();
  for (auto& x : md.extensions)
    if (x.identifier == "CheckWeight") x.identifier = "CheckNonce";
  CHECK(code_of([&] { (void)bt::sign_extrinsic(md, call, ctx, bt::test::alice()); }) ==
        bt::chain_errc::bad_metadata);
  // No-data extensions of the runtime's own (SubtensorTransactionExtension, DrandPriority)
  // are no-ops: the unmodified metadata signs (checked above); and a public-only signer is
  // refused.
  const auto public_only = bt::keypair::from_public_key(bt::test::alice().public_key());
  CHECK(code_of([&] { (void)bt::sign_extrinsic(v14(), call, ctx, public_only); }) ==
        bt::chain_errc::invalid_argument);
}
