// Runtime metadata V14/V15/V16 from the recorded main-network runtimes (tests/vectors/chain).
#include <bt/chain/metadata.hpp>
#include <bt/hex.hpp>

#include <catch2/catch.hpp>
#include <chain/metadata_vectors.hpp>

#include <fstream>
#include <sstream>
#include <system_error>

namespace {

using bt::test::metadata_bytes;

const std::vector<std::string> spec343 = {
    "CheckNonZeroSender", "CheckSpecVersion",         "CheckTxVersion",
    "CheckGenesis",       "CheckMortality",           "CheckNonce",
    "CheckWeight",        "ChargeTransactionPayment", "SubtensorTransactionExtension",
    "DrandPriority",      "CheckMetadataHash"};

std::vector<std::string> identifiers(const bt::runtime_metadata& m) {
  std::vector<std::string> out;
  for (const auto& x : m.extensions) out.push_back(x.identifier);
  return out;
}

}  // namespace

TEST_CASE("metadata: the four recorded runtimes decode, with serve_axon, Axons and extensions",
          "[metadata]") {
  for (const char* file : {"metadata_v14_spec343.hex", "metadata_v15_spec343.hex",
                           "metadata_v16_spec365.hex", "metadata_v16_spec393.hex"}) {
    INFO(file);
    const auto bytes = metadata_bytes(file);
    const bt::runtime_metadata m = bt::decode_metadata(bytes);
    const int want_version = std::string(file).find("v14") != std::string::npos   ? 14
                             : std::string(file).find("v15") != std::string::npos ? 15
                                                                                  : 16;
    CHECK(m.version == want_version);
    CHECK(m.types.size() > 100);

    const auto call = m.find_call("SubtensorModule", "serve_axon");
    CHECK(call.pallet_index == 7);
    CHECK(call.call_index == 4);
    REQUIRE(call.variant != nullptr);
    const std::vector<std::pair<std::string, bt::scale_primitive>> args = {
        {"netuid", bt::scale_primitive::u16},      {"version", bt::scale_primitive::u32},
        {"ip", bt::scale_primitive::u128},         {"port", bt::scale_primitive::u16},
        {"ip_type", bt::scale_primitive::u8},      {"protocol", bt::scale_primitive::u8},
        {"placeholder1", bt::scale_primitive::u8}, {"placeholder2", bt::scale_primitive::u8}};
    REQUIRE(call.variant->fields.size() == args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto& f = call.variant->fields[i];
      CHECK(f.name.value_or("") == args[i].first);
      // netuid is a NetUid newtype in later runtimes: look through one-field composites.
      const bt::portable_type* t = &m.type(f.type);
      while (t->shape == bt::portable_type::kind::composite && t->fields.size() == 1)
        t = &m.type(t->fields[0].type);
      CHECK(t->shape == bt::portable_type::kind::primitive);
      CHECK(t->primitive == args[i].second);
    }

    const bt::storage_entry* axons = m.find_storage("SubtensorModule", "Axons");
    REQUIRE(axons != nullptr);
    CHECK(axons->is_map);
    CHECK(axons->hashers == std::vector<bt::storage_hasher>{bt::storage_hasher::identity,
                                                            bt::storage_hasher::blake2_128_concat});
    CHECK(m.type(axons->value_type).name() == "AxonInfo");
    CHECK(m.find_pallet("SubtensorModule")->storage_prefix == "SubtensorModule");

    const auto ids = identifiers(m);
    REQUIRE(ids.size() >= spec343.size());
    // Every listed runtime starts with spec 343's extensions, in order, ending with
    // CheckMetadataHash; later runtimes insert their subtensor-specific ones.
    CHECK(std::vector<std::string>(ids.begin(), ids.begin() + 8) ==
          std::vector<std::string>(spec343.begin(), spec343.begin() + 8));
    if (want_version < 16) CHECK(ids == spec343);
    for (const auto& x : m.extensions) {
      INFO(x.identifier);
      const bool empty = m.is_empty_type(x.extra_type) && m.is_empty_type(x.implicit_type);
      if (x.identifier == "CheckNonZeroSender" || x.identifier == "CheckWeight") CHECK(empty);
      if (x.identifier == "CheckMortality" || x.identifier == "CheckNonce" ||
          x.identifier == "CheckGenesis" || x.identifier == "CheckMetadataHash")
        CHECK_FALSE(empty);
    }
  }
}

TEST_CASE("metadata: V16 lists spec 365's and 393's added extensions", "[metadata]") {
  const auto m365 = bt::decode_metadata(metadata_bytes("metadata_v16_spec365.hex"));
  const auto m393 = bt::decode_metadata(metadata_bytes("metadata_v16_spec393.hex"));
  const auto has = [](const bt::runtime_metadata& m, std::string_view id) {
    for (const auto& x : m.extensions)
      if (x.identifier == id) return true;
    return false;
  };
  CHECK(has(m365, "SudoTransactionExtension"));
  CHECK(has(m393, "CheckShieldedTxValidity"));
  CHECK(m365.extrinsic_versions.size() >= 1);
}

TEST_CASE("metadata: unknown pallet and call names are named errors", "[metadata]") {
  const auto m = bt::decode_metadata(metadata_bytes("metadata_v15_spec343.hex"));
  try {
    (void)m.find_call("NoSuchPallet", "serve_axon");
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == bt::chain_errc::unknown_pallet);
    CHECK(std::string(e.what()).find("NoSuchPallet") != std::string::npos);
  }
  try {
    (void)m.find_call("SubtensorModule", "serve_nothing");
    FAIL("no error");
  } catch (const std::system_error& e) {
    CHECK(e.code() == bt::chain_errc::unknown_call);
    CHECK(std::string(e.what()).find("serve_nothing") != std::string::npos);
  }
}

TEST_CASE("metadata: truncation, trailing bytes and bad headers are errors with an offset",
          "[metadata]") {
  const auto bytes = metadata_bytes("metadata_v14_spec343.hex");
  // Truncated anywhere: a few cut points spread over the file, including inside the registry,
  // the pallets and the very last byte.
  for (const std::size_t cut : {std::size_t{3}, std::size_t{5}, std::size_t{100}, bytes.size() / 3,
                                bytes.size() / 2, bytes.size() - 1}) {
    INFO("cut at " << cut);
    try {
      (void)bt::decode_metadata(std::span(bytes).first(cut));
      FAIL("no error");
    } catch (const bt::chain_decode_error& e) {
      // Cut inside a length-prefixed item, the prefix may already exceed what is left.
      CHECK((e.code() == bt::chain_errc::truncated || e.code() == bt::chain_errc::too_long));
      CHECK(e.offset() <= cut);
    }
  }
  auto longer = bytes;
  longer.push_back(0);
  try {
    (void)bt::decode_metadata(longer);
    FAIL("no error");
  } catch (const bt::chain_decode_error& e) {
    CHECK(e.code() == bt::chain_errc::trailing_bytes);
    CHECK(e.offset() == bytes.size());
  }
  auto v13 = bytes;
  v13[4] = 13;
  try {
    (void)bt::decode_metadata(v13);
    FAIL("no error");
  } catch (const bt::chain_decode_error& e) {
    CHECK(e.code() == bt::chain_errc::bad_metadata);
    CHECK(std::string(e.what()).find("13") != std::string::npos);
  }
  auto no_magic = bytes;
  no_magic[0] = 'x';
  CHECK_THROWS_AS(bt::decode_metadata(no_magic), bt::chain_decode_error);
}

TEST_CASE("metadata: damaged bytes anywhere give a decode error or a valid decode, never a crash",
          "[metadata]") {
  const auto bytes = metadata_bytes("metadata_v15_spec343.hex");
  std::size_t errors = 0;
  // 100 single-byte changes spread over the whole file (registry, pallets, extrinsic, APIs).
  for (std::size_t k = 0; k < 100; ++k) {
    auto damaged = bytes;
    const std::size_t at = 4 + (k * 7919 * 131) % (bytes.size() - 4);
    damaged[at] = static_cast<std::uint8_t>(damaged[at] ^ (k % 2 == 0 ? 0xff : 0x80));
    try {
      const auto m = bt::decode_metadata(damaged);
      // A change inside a name or doc string can decode; what decodes stays consistent.
      for (const auto& p : m.pallets)
        if (p.call_type) CHECK(*p.call_type < m.types.size());
    } catch (const bt::chain_decode_error& e) {
      ++errors;
      CHECK(e.offset() <= damaged.size());
    }
  }
  CHECK(errors > 0);
}
