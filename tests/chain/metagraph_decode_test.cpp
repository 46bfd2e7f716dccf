// The metagraph decoders on the recorded mainnet answers (subnet 1, block 6852690, 1,024
// neurons), their strictness on damaged input, ip_to_string, and bt::metagraph (stake from
// SubnetState, the fallback, the JSON shape). The field-by-field comparison with an independent
// decoder (@polkadot/types) is tests/node/chain_decode_peer.mjs (ctest "chain_decode_node").
#include <bt/chain/metagraph.hpp>
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/subnet_state.hpp>

#include <bt/hex.hpp>
#include <bt/ss58.hpp>

#include <catch2/catch.hpp>

#include "decode_error_of.hpp"

#include "recorded_session.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <system_error>

namespace {

using bt::test::error_of;

using bytes = std::vector<std::uint8_t>;

const bytes& neurons_bytes() {
  static const bytes b = bt::test::recorded_state_call("NeuronInfoRuntimeApi_get_neurons_lite");
  return b;
}
const bytes& state_bytes() {
  static const bytes b = bt::test::recorded_state_call("SubnetInfoRuntimeApi_get_subnet_state");
  return b;
}

// Offset of NeuronInfoLite[i] in the recorded answer (after the 2-byte Vec length).
std::size_t neuron_offset(std::size_t i) {
  bt::scale_reader r(neurons_bytes());
  r.length("n");
  for (std::size_t k = 0; k < i; ++k) bt::read_neuron_info_lite(r);
  return r.offset();
}

bt::uint128_t v6(std::initializer_list<unsigned> groups) {
  bt::uint128_t v = 0;
  for (unsigned g : groups) v = (v << 16) | g;
  return v;
}

}  // namespace

TEST_CASE("metagraph: the recorded get_neurons_lite decodes to 1,024 neurons of subnet 1",
          "[metagraph]") {
  const auto neurons = bt::decode_neurons_lite(neurons_bytes());
  REQUIRE(neurons.size() == 1024);
  std::set<std::uint16_t> uids;
  std::size_t serving = 0;
  for (const auto& n : neurons) {
    CHECK(n.netuid == 1);
    uids.insert(n.uid);
    if (n.axon_info.ip != 0) {
      ++serving;
      CHECK(n.axon_info.ip_type == 4);
      CHECK(n.axon_info.ip <= 0xffffffffU);
    }
  }
  CHECK(uids.size() == 1024);
  CHECK(*uids.rbegin() == 1023);
  CHECK(serving == 827);  // the other 197 never served (ip 0, ip_type 0)
  // The first hotkey is the 32 bytes right after the Vec length (0x01 0x10 = 1024).
  CHECK(bt::to_hex(neurons[0].hotkey) ==
        "4a7a6cf22af0de8f0c3566ceb47c255da605cf9243f6c1a6433cc782fa610166");
}

TEST_CASE("metagraph: the older Vec<u8>-wrapped get_neurons_lite decodes identically",
          "[metagraph]") {
  const auto& plain = neurons_bytes();
  // Prefix Compact(len) in four-byte mode (186,526 bytes lies in 2^14..2^30).
  const auto len = static_cast<std::uint32_t>(plain.size());
  REQUIRE(len >= (1U << 14));
  const std::uint32_t enc = (len << 2) | 2;
  bytes wrapped{static_cast<std::uint8_t>(enc), static_cast<std::uint8_t>(enc >> 8),
                static_cast<std::uint8_t>(enc >> 16), static_cast<std::uint8_t>(enc >> 24)};
  wrapped.insert(wrapped.end(), plain.begin(), plain.end());
  const auto a = bt::decode_neurons_lite(plain);
  const auto b = bt::decode_neurons_lite(wrapped);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].hotkey == b[i].hotkey);
    CHECK(a[i].uid == b[i].uid);
    CHECK(a[i].pruning_score == b[i].pruning_score);
  }
  // Empty results, plain and wrapped.
  CHECK(bt::decode_neurons_lite(bytes{0x00}).empty());
  CHECK(bt::decode_neurons_lite(bytes{0x04, 0x00}).empty());
  // A wrapper whose inner Vec does not fill it exactly is refused, not guessed around.
  bytes loose = plain;
  loose.push_back(0x00);
  const std::uint32_t enc2 = (static_cast<std::uint32_t>(loose.size()) << 2) | 2;
  bytes loose_wrap{static_cast<std::uint8_t>(enc2), static_cast<std::uint8_t>(enc2 >> 8),
                   static_cast<std::uint8_t>(enc2 >> 16), static_cast<std::uint8_t>(enc2 >> 24)};
  loose_wrap.insert(loose_wrap.end(), loose.begin(), loose.end());
  const auto e = error_of([&] { bt::decode_neurons_lite(loose_wrap); });
  CHECK(e.code() == bt::chain_errc::trailing_bytes);
  CHECK(e.offset() == loose_wrap.size() - 1);
  // A wrapper length that is not the rest of the input is read as a (plain) neuron count, and
  // the bytes after it are not neurons: refused.
  bytes bad_wrap = wrapped;
  bad_wrap.push_back(0x00);
  CHECK_THROWS_AS(bt::decode_neurons_lite(bad_wrap), bt::chain_decode_error);
}

TEST_CASE("metagraph: damaged get_neurons_lite answers name the neuron, field and offset",
          "[metagraph]") {
  const auto& good = neurons_bytes();

  SECTION("truncated by one byte: the last neuron's last field") {
    const bytes cut(good.begin(), good.end() - 1);
    const auto e = error_of([&] { bt::decode_neurons_lite(cut); });
    CHECK(e.code() == bt::chain_errc::truncated);
    CHECK(e.error().what == "NeuronInfoLite[1023].pruning_score");
    CHECK(e.offset() >= cut.size() - 2);
  }
  SECTION("cut inside neuron 17's axon") {
    const std::size_t at = neuron_offset(17) + 32 + 32 + 1 + 1 + 1 + 8 + 4 + 16 + 1;
    const bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(at));
    const auto e = error_of([&] { bt::decode_neurons_lite(cut); });
    CHECK(e.code() == bt::chain_errc::truncated);
    // uid 17 and netuid 1 take one byte each: 64 key bytes, 2 compacts, active, then the axon.
    CHECK(e.error().what == "NeuronInfoLite[17].axon_info.port");
    CHECK(e.offset() == at - 1);
    CHECK(e.error().detail.find("at offset " + std::to_string(at - 1)) != std::string::npos);
  }
  SECTION("one trailing byte") {
    bytes extra = good;
    extra.push_back(0);
    const auto e = error_of([&] { bt::decode_neurons_lite(extra); });
    CHECK(e.code() == bt::chain_errc::trailing_bytes);
    CHECK(e.offset() == good.size());
  }
  SECTION("an active flag of 2") {
    bytes bad = good;
    const std::size_t at = neuron_offset(17) + 64 + 2;
    REQUIRE(bad[at] <= 1);
    bad[at] = 2;
    const auto e = error_of([&] { bt::decode_neurons_lite(bad); });
    CHECK(e.code() == bt::chain_errc::invalid_bool);
    CHECK(e.error().what == "NeuronInfoLite[17].active");
    CHECK(e.offset() == at);
  }
  SECTION("a neuron count beyond the input") {
    bytes bad = good;
    bad[0] = 0xfd;  // Compact 16383 in two-byte mode (was 0x01 0x10: 1024)
    bad[1] = 0xff;
    const auto e = error_of([&] { bt::decode_neurons_lite(bad); });
    // 16383 neurons cannot fit 186 kB: refused by the element reads, never by a huge reserve.
    CHECK(e.code() == bt::chain_errc::truncated);
    CHECK(e.error().what.rfind("NeuronInfoLite[1024]", 0) == 0);
  }
  SECTION("a neuron count larger than the bytes left") {
    const bytes bad{0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
    const auto e = error_of([&] { bt::decode_neurons_lite(bad); });
    CHECK(e.code() == bt::chain_errc::too_long);
  }
  SECTION("the non-throwing overload reports the same") {
    const bytes cut(good.begin(), good.end() - 1);
    bt::error err;
    CHECK_FALSE(bt::decode_neurons_lite(cut, err).has_value());
    CHECK(err.code == bt::chain_errc::truncated);
    CHECK(err.what == "NeuronInfoLite[1023].pruning_score");
  }
}

TEST_CASE("metagraph: the recorded get_subnet_state decodes and agrees with the neurons",
          "[metagraph]") {
  const auto state = bt::decode_subnet_state(state_bytes());
  REQUIRE(state.has_value());
  CHECK(state->netuid == 1);
  CHECK(state->hotkeys.size() == 1024);
  CHECK(state->total_stake.size() == 1024);
  CHECK(state->alpha_stake.size() == 1024);
  CHECK(state->tao_stake.size() == 1024);
  CHECK(state->block_at_registration.size() == 1024);
  const auto neurons = bt::decode_neurons_lite(neurons_bytes());
  std::size_t inherited = 0;
  for (const auto& n : neurons) {
    CHECK(state->hotkeys[n.uid] == n.hotkey);
    CHECK(state->coldkeys[n.uid] == n.coldkey);
    CHECK(state->active[n.uid] == n.active);
    CHECK(state->validator_permit[n.uid] == n.validator_permit);
    CHECK(state->last_update[n.uid] == n.last_update);
    std::uint64_t own = 0;
    for (const auto& s : n.stake) own += s.amount;
    if (own != state->alpha_stake[n.uid]) ++inherited;
  }
  // Most neurons' own stake entries equal alpha_stake; validators with parent keys do not.
  CHECK(inherited < 1024);

  CHECK_FALSE(bt::decode_subnet_state(bytes{0x00}).has_value());
  CHECK(error_of([&] { bt::decode_subnet_state(bytes{0x02}); }).code() ==
        bt::chain_errc::invalid_option);
  CHECK(error_of([&] {
          bt::decode_subnet_state(bytes{0x00, 0x00});
        }).code() == bt::chain_errc::trailing_bytes);
  const bytes cut(state_bytes().begin(), state_bytes().end() - 1);
  const auto e = error_of([&] { bt::decode_subnet_state(cut); });
  // The last inner Vec of emission_history (1,024 one-byte compacts) now has 1,023 bytes left.
  CHECK(e.code() == bt::chain_errc::too_long);
  CHECK(e.error().what == "SubnetState.emission_history[128]");
  CHECK(e.offset() == cut.size() - 1023 - 2);
  bt::error err;
  std::optional<bt::subnet_state> out;
  CHECK_FALSE(bt::decode_subnet_state(cut, out, err));
  CHECK(err.code == bt::chain_errc::too_long);
  const bytes cut_more(state_bytes().begin(), state_bytes().end() - 1025);
  CHECK(error_of([&] { bt::decode_subnet_state(cut_more); }).code() == bt::chain_errc::truncated);
}

TEST_CASE("metagraph: ip_to_string writes IPv4 dotted and IPv6 per RFC 5952", "[metagraph]") {
  CHECK(bt::ip_to_string(0, 0) == "0.0.0.0");
  CHECK(bt::ip_to_string(0, 4) == "0.0.0.0");
  CHECK(bt::ip_to_string(0xC0A80001U, 4) == "192.168.0.1");
  CHECK(bt::ip_to_string(0xFFFFFFFFU, 4) == "255.255.255.255");
  CHECK(bt::ip_to_string(0x01020304U, 0) == "1.2.3.4");  // unknown type: by size, like Python
  CHECK(bt::ip_to_string(v6({0x2001, 0xdb8, 0, 0, 0, 0, 0, 1}), 6) == "2001:db8::1");
  // Longest run wins; on a tie the first; a single zero group stays "0".
  CHECK(bt::ip_to_string(v6({0x2001, 0, 0, 1, 0, 0, 0, 1}), 6) == "2001:0:0:1::1");
  CHECK(bt::ip_to_string(v6({0x2001, 0xdb8, 0, 0, 1, 0, 0, 1}), 6) == "2001:db8::1:0:0:1");
  CHECK(bt::ip_to_string(v6({0x2001, 0xdb8, 0, 1, 1, 1, 1, 1}), 6) == "2001:db8:0:1:1:1:1:1");
  CHECK(bt::ip_to_string(v6({0x2001, 0xDB8, 0xABCD, 0x12, 0, 0, 0, 0}), 6) == "2001:db8:abcd:12::");
  CHECK(bt::ip_to_string(0, 6) == "::");
  CHECK(bt::ip_to_string(1, 6) == "::1");
  CHECK(bt::ip_to_string(v6({1, 0, 0, 0, 0, 0, 0, 0}), 6) == "1::");
  CHECK(bt::ip_to_string(v6({0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff}), 6) ==
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  CHECK(bt::ip_to_string(v6({0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201}), 6) == "::ffff:192.0.2.1");
  // An ip_type 4 whose value needs more than 32 bits cannot be dotted: written as IPv6.
  CHECK(bt::ip_to_string(v6({0x2001, 0xdb8, 0, 0, 0, 0, 0, 1}), 4) == "2001:db8::1");
}

TEST_CASE("metagraph: built from the recorded answers, stake is SubnetState's total_stake",
          "[metagraph]") {
  const auto neurons = bt::decode_neurons_lite(neurons_bytes());
  const auto state = bt::decode_subnet_state(state_bytes());
  const auto m = bt::make_metagraph(1, bt::test::recorded_block, bt::test::recorded_block_hash,
                                    neurons, state);
  REQUIRE(m.neurons.size() == 1024);
  CHECK(m.stake == bt::stake_source::subnet_state);
  std::size_t serving = 0;
  for (std::size_t i = 0; i < m.neurons.size(); ++i) {
    const auto& n = m.neurons[i];
    CHECK(n.uid == i);
    CHECK(n.stake_rao == state->total_stake[i]);
    CHECK(n.alpha_stake_rao == state->alpha_stake[i]);
    CHECK(n.tao_stake_rao == state->tao_stake[i]);
    CHECK(bt::ss58::decode(n.hotkey).public_key == state->hotkeys[i]);
    CHECK(bt::ss58::decode(n.coldkey).format == 42);
    CHECK(n.hotkey.front() == '5');
    if (n.serving) {
      ++serving;
      CHECK(n.axon.ip != "0.0.0.0");
    } else {
      CHECK(n.axon.ip == "0.0.0.0");
    }
  }
  CHECK(serving == 827);
  CHECK(m.find_hotkey(m.neurons[5].hotkey) == &m.neurons[5]);
  CHECK(m.find_hotkey("5nothere") == nullptr);

  const auto j = bt::to_json(m);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"netuid", "block", "block_hash", "n", "neurons"});
  CHECK(j.at("n") == 1024);
  CHECK(j.at("block") == 6852690);
  CHECK(j.at("block_hash") == bt::test::recorded_block_hash);
  const auto& n0 = j.at("neurons").at(0);
  keys.clear();
  for (const auto& [k, v] : n0.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"uid", "hotkey", "coldkey", "active", "validator_permit",
                                         "stake_rao", "alpha_stake_rao", "tao_stake_rao", "axon"});
  keys.clear();
  for (const auto& [k, v] : n0.at("axon").items()) keys.push_back(k);
  CHECK(keys ==
        std::vector<std::string>{"ip", "port", "ip_type", "protocol", "version", "serving"});
  CHECK(n0.at("stake_rao").is_number_unsigned());
  CHECK(n0.at("axon").at("serving").is_boolean());
}

TEST_CASE("metagraph: without SubnetState stake is the sum of the neuron's own entries",
          "[metagraph]") {
  auto neurons = bt::decode_neurons_lite(neurons_bytes());
  // Give neuron 3 a second stake entry, to check that entries are summed.
  neurons[3].stake.push_back({neurons[3].coldkey, 1000});
  const auto m = bt::make_metagraph(1, 1, "0x00", neurons, std::nullopt);
  CHECK(m.stake == bt::stake_source::neuron_stake_entries);
  for (const auto& n : neurons) {
    std::uint64_t own = 0;
    for (const auto& s : n.stake) own += s.amount;
    CHECK(m.neurons[n.uid].stake_rao == own);
    CHECK(m.neurons[n.uid].alpha_stake_rao == 0);
    CHECK(m.neurons[n.uid].tao_stake_rao == 0);
  }
  CHECK(m.neurons[3].stake_rao == neurons[3].stake[0].amount + 1000);
  const auto j = bt::to_json(m);
  CHECK(j.at("stake_source") == "neuron_stake_entries");
}

TEST_CASE("metagraph: serving_axons are the served, routable axons, as a dendrite takes them",
          "[metagraph]") {
  auto neurons = bt::decode_neurons_lite(neurons_bytes());
  neurons.resize(4);
  neurons[0].axon_info.ip = 0;  // never served
  neurons[1].axon_info.ip = 0x7F000001;
  neurons[1].axon_info.ip_type = 4;
  neurons[1].axon_info.port = 0;  // served, but no port to connect to
  neurons[2].axon_info.ip = 0x7F000001;
  neurons[2].axon_info.ip_type = 4;
  neurons[2].axon_info.port = 8091;
  neurons[3].axon_info.ip = 1;  // ::1
  neurons[3].axon_info.ip_type = 6;
  neurons[3].axon_info.port = 8092;
  const auto m = bt::make_metagraph(1, 1, "0x00", neurons, std::nullopt);
  const auto axons = m.serving_axons();
  REQUIRE(axons.size() == 2);
  CHECK(axons[0].ip == "127.0.0.1");
  CHECK(axons[0].port == 8091);
  CHECK(axons[0].ip_type == 4);
  CHECK(axons[0].hotkey == m.neurons[2].hotkey);
  CHECK(axons[0].coldkey == m.neurons[2].coldkey);
  CHECK(axons[0].version == neurons[2].axon_info.version);
  CHECK(axons[0] == m.neurons[2].axon);
  CHECK(axons[1].ip == "::1");
  CHECK(axons[1].ip_type == 6);
  CHECK(axons[1].hotkey == m.neurons[3].hotkey);
  CHECK_FALSE(m.neurons[0].serving);
  CHECK(m.neurons[1].serving);
  // The JSON form is unchanged by the axon's type: six keys, "serving" among them.
  const auto j = bt::to_json(m).at("neurons").at(1).at("axon");
  CHECK(j.dump() == R"({"ip":"127.0.0.1","port":0,"ip_type":4,"protocol":)" +
                        std::to_string(neurons[1].axon_info.protocol) + R"(,"version":)" +
                        std::to_string(neurons[1].axon_info.version) + R"(,"serving":true})");
}

TEST_CASE("metagraph: answers that do not describe one subnet are refused", "[metagraph]") {
  const auto neurons = bt::decode_neurons_lite(neurons_bytes());
  const auto state = bt::decode_subnet_state(state_bytes());
  bt::error err;

  CHECK_FALSE(bt::make_metagraph(2, 1, "0x", neurons, state, err));
  CHECK(err.code == bt::chain_errc::invalid_value);
  CHECK(err.what == "SubnetState.netuid");
  CHECK_FALSE(bt::make_metagraph(2, 1, "0x", neurons, std::nullopt, err));
  CHECK(err.what == "NeuronInfoLite[0].netuid");

  auto swapped = state;
  std::swap(swapped->hotkeys[4], swapped->hotkeys[5]);
  CHECK_FALSE(bt::make_metagraph(1, 1, "0x", neurons, swapped, err));
  CHECK(err.what == "SubnetState.hotkeys[4]");

  auto shorter = state;
  shorter->total_stake.pop_back();
  CHECK_FALSE(bt::make_metagraph(1, 1, "0x", neurons, shorter, err));
  CHECK(err.what == "SubnetState.total_stake");

  auto dup = neurons;
  dup[9].uid = 8;
  CHECK_FALSE(bt::make_metagraph(1, 1, "0x", dup, std::nullopt, err));
  CHECK(err.what == "NeuronInfoLite[9].uid");

  auto beyond = neurons;
  beyond[0].uid = 2000;
  CHECK_FALSE(bt::make_metagraph(1, 1, "0x", beyond, state, err));
  CHECK(err.what == "NeuronInfoLite[0].uid");
  CHECK_THROWS_AS(bt::make_metagraph(1, 1, "0x", beyond, state), std::system_error);
}

// Damage anywhere in the answers: the decoders either decode (a changed byte inside a value can
// still be valid) or throw chain_decode_error; never anything else, never a read out of bounds
// (the sanitizer builds run this too).
TEST_CASE("metagraph: random damage gives a decode error or a value, nothing else", "[metagraph]") {
  std::mt19937 rng(6852690);
  for (const bytes* original : {&neurons_bytes(), &state_bytes()}) {
    const bool is_neurons = original == &neurons_bytes();
    std::size_t refused = 0;
    for (int round = 0; round < 300; ++round) {
      bytes b = *original;
      switch (round % 3) {
        case 0:  // cut anywhere
          b.resize(rng() % b.size());
          break;
        case 1:  // one byte changed anywhere
          b[rng() % b.size()] ^= static_cast<std::uint8_t>(1U + rng() % 255U);
          break;
        default:  // a few bytes changed near the start, where the lengths are
          for (int k = 0; k < 3; ++k)
            b[rng() % std::min<std::size_t>(b.size(), 4096)] = rng() & 0xff;
          break;
      }
      try {
        if (is_neurons) {
          (void)bt::decode_neurons_lite(b);
        } else {
          (void)bt::decode_subnet_state(b);
        }
      } catch (const bt::chain_decode_error& e) {
        ++refused;
        CHECK(e.offset() <= b.size());
        CHECK_FALSE(e.error().what.empty());
      }
    }
    CHECK(refused >= 100);  // every cut is refused, at least
  }
}
