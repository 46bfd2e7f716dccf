// Our metagraph decoders against an independent one: tests/node/chain_decode_peer.mjs decodes
// the same recorded answers (subnet 1, block 6852690) with @polkadot/types, using the output
// types that the recorded runtime metadata (V15) declares for the two runtime-API calls, and we
// compare every field of every neuron and of SubnetState, key sets included (a field the
// metadata has and we skip, or the reverse, is a mismatch). The same script writes IPv6
// addresses with Node's URL serialiser, which ip_to_string must match. Needs node and
// tests/node/node_modules (scripts/setup); when either is missing the test fails, never skips.
#include <bt/chain/metagraph.hpp>
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/subnet_state.hpp>

#include <bt/keypair.hpp>
#include <bt/ss58.hpp>

#include <catch2/catch.hpp>
#include <support/temp_dir.hpp>

#include "decimal.hpp"
#include "polkadot_peer.hpp"
#include "recorded_session.hpp"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using bt::test::dec;
using bt::test::shell_quote;
using bt::test::temp_dir;

std::string ss58(const bt::account_id32& k) {
  return bt::ss58::encode(k, 42);
}

// Our decoded values in the script's normal form (integers as decimal strings, keys as SS58).
bt::json norm(const bt::chain_axon_info& a) {
  return {{"block", dec(a.block)},
          {"version", dec(a.version)},
          {"ip", dec(a.ip)},
          {"port", dec(a.port)},
          {"ip_type", dec(a.ip_type)},
          {"protocol", dec(a.protocol)},
          {"placeholder1", dec(a.placeholder1)},
          {"placeholder2", dec(a.placeholder2)}};
}
bt::json norm(const bt::chain_prometheus_info& p) {
  return {{"block", dec(p.block)},
          {"version", dec(p.version)},
          {"ip", dec(p.ip)},
          {"port", dec(p.port)},
          {"ip_type", dec(p.ip_type)}};
}
bt::json norm(const bt::neuron_info_lite& n) {
  bt::json stake = bt::json::array();
  for (const auto& s : n.stake) stake.push_back({ss58(s.account), dec(s.amount)});
  return {{"hotkey", ss58(n.hotkey)},
          {"coldkey", ss58(n.coldkey)},
          {"uid", dec(n.uid)},
          {"netuid", dec(n.netuid)},
          {"active", n.active},
          {"axon_info", norm(n.axon_info)},
          {"prometheus_info", norm(n.prometheus_info)},
          {"stake", stake},
          {"rank", dec(n.rank)},
          {"emission", dec(n.emission)},
          {"incentive", dec(n.incentive)},
          {"consensus", dec(n.consensus)},
          {"trust", dec(n.trust)},
          {"validator_trust", dec(n.validator_trust)},
          {"dividends", dec(n.dividends)},
          {"last_update", dec(n.last_update)},
          {"validator_permit", n.validator_permit},
          {"pruning_score", dec(n.pruning_score)}};
}
template <class T>
bt::json norm_vec(const std::vector<T>& v) {
  bt::json a = bt::json::array();
  for (const auto& x : v) {
    if constexpr (std::is_same_v<T, bool>) {
      a.push_back(static_cast<bool>(x));
    } else if constexpr (std::is_same_v<T, bt::account_id32>) {
      a.push_back(ss58(x));
    } else {
      a.push_back(dec(x));
    }
  }
  return a;
}
bt::json norm(const bt::subnet_state& s) {
  bt::json hist = bt::json::array();
  for (const auto& h : s.emission_history) hist.push_back(norm_vec(h));
  return {{"netuid", dec(s.netuid)},
          {"hotkeys", norm_vec(s.hotkeys)},
          {"coldkeys", norm_vec(s.coldkeys)},
          {"active", norm_vec(s.active)},
          {"validator_permit", norm_vec(s.validator_permit)},
          {"pruning_score", norm_vec(s.pruning_score)},
          {"last_update", norm_vec(s.last_update)},
          {"emission", norm_vec(s.emission)},
          {"dividends", norm_vec(s.dividends)},
          {"incentives", norm_vec(s.incentives)},
          {"consensus", norm_vec(s.consensus)},
          {"trust", norm_vec(s.trust)},
          {"rank", norm_vec(s.rank)},
          {"block_at_registration", norm_vec(s.block_at_registration)},
          {"alpha_stake", norm_vec(s.alpha_stake)},
          {"tao_stake", norm_vec(s.tao_stake)},
          {"total_stake", norm_vec(s.total_stake)},
          {"emission_history", hist}};
}

// Walks both trees; records every differing leaf or key set, counts the leaves compared.
struct differ {
  std::vector<std::string> mismatches;
  std::size_t leaves = 0;
  void walk(const bt::json& ours, const bt::json& theirs, const std::string& path) {
    if (ours.type() != theirs.type()) {
      mismatches.push_back(path + ": ours " + ours.dump() + ", @polkadot/types " + theirs.dump());
      return;
    }
    if (ours.is_object()) {
      for (const auto& [k, v] : ours.items()) {
        if (!theirs.contains(k)) {
          mismatches.push_back(path + "." + k + ": only ours has it");
        } else {
          walk(v, theirs.at(k), path + "." + k);
        }
      }
      for (const auto& [k, v] : theirs.items()) {
        if (!ours.contains(k))
          mismatches.push_back(path + "." + k + ": only @polkadot/types has it");
      }
      // The field order must be the metadata's too.
      std::vector<std::string> a, b;
      for (const auto& [k, v] : ours.items()) a.push_back(k);
      for (const auto& [k, v] : theirs.items()) b.push_back(k);
      if (a != b && mismatches.empty()) mismatches.push_back(path + ": field order differs");
    } else if (ours.is_array()) {
      if (ours.size() != theirs.size()) {
        mismatches.push_back(path + ": " + std::to_string(ours.size()) + " vs " +
                             std::to_string(theirs.size()) + " elements");
        return;
      }
      for (std::size_t i = 0; i < ours.size(); ++i) {
        walk(ours[i], theirs[i], path + "[" + std::to_string(i) + "]");
      }
    } else {
      ++leaves;
      if (ours != theirs) {
        mismatches.push_back(path + ": ours " + ours.dump() + ", @polkadot/types " + theirs.dump());
      }
    }
  }
};

bt::json run_peer(const fs::path& ipv6_file, const fs::path& out_dir) {
  const fs::path vectors = fs::path(bt::test::vectors_dir()) / "chain";
  const fs::path out = out_dir / "polkadot.json";
  return bt::test::run_polkadot_peer(
      "chain_decode_peer.mjs",
      {(vectors / "session_sn1_block6852690.json").string(),
       (vectors / "metadata_v15_spec343.hex").string(), out.string(), ipv6_file.string()},
      out);
}

}  // namespace

TEST_CASE("metagraph decode agrees with @polkadot/types on every field of the recorded answers",
          "[metagraph][node]") {
  bt::init_crypto();
  temp_dir dir("bt-chain-decode");

  // IPv6 values with runs of zero groups of every length and position (each group zero with
  // probability 1/2), for the RFC 5952 compression; IPv4-mapped values excluded (see below).
  std::mt19937_64 rng(20261203);
  std::vector<bt::uint128_t> ipv6;
  {
    std::ofstream f(dir.path / "ipv6.txt");
    for (int i = 0; i < 600; ++i) {
      bt::uint128_t v = 0;
      for (int g = 0; g < 8; ++g) {
        const unsigned group = (rng() & 1) ? static_cast<unsigned>(rng() & 0xffff) : 0U;
        v = (v << 16) | group;
      }
      if ((v >> 32) == 0xffff) continue;  // ::ffff:a.b.c.d: we use the mixed notation, URL not
      ipv6.push_back(v);
      char buf[40];
      std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(v >> 64),
                    static_cast<unsigned long long>(v));
      f << buf << '\n';
    }
  }
  const bt::json theirs = run_peer(dir.path / "ipv6.txt", dir.path);

  const auto& nl = bt::test::recorded_state_call("NeuronInfoRuntimeApi_get_neurons_lite");
  const auto& ss = bt::test::recorded_state_call("SubnetInfoRuntimeApi_get_subnet_state");
  // @polkadot/types consumed exactly the input (it does not insist on that itself).
  CHECK(theirs.at("neurons_lite").at("encoded_length") == nl.size());
  CHECK(theirs.at("neurons_lite").at("input_length") == nl.size());
  CHECK(theirs.at("subnet_state").at("encoded_length") == ss.size());

  const auto neurons = bt::decode_neurons_lite(nl);
  const auto state = bt::decode_subnet_state(ss);
  REQUIRE(state.has_value());
  bt::json ours_neurons = bt::json::array();
  for (const auto& n : neurons) ours_neurons.push_back(norm(n));

  differ d;
  d.walk(ours_neurons, theirs.at("neurons_lite").at("value"), "Vec<NeuronInfoLite>");
  d.walk(norm(*state), theirs.at("subnet_state").at("value"), "SubnetState");
  for (std::size_t i = 0; i < d.mismatches.size() && i < 20; ++i) UNSCOPED_INFO(d.mismatches[i]);
  CHECK(d.mismatches.empty());
  // 1,024 neurons × (18 fields, 8 axon + 5 prometheus in place of 2, 2 per stake entry: 30
  // leaves with one entry each) plus SubnetState's 16 vectors of 1,024, its netuid and the
  // 129 × 1,024 emission history.
  CHECK(d.leaves == 1024 * 30 + 1 + 16 * 1024 + 129 * 1024);

  // The metagraph we build carries the same keys and stake as @polkadot/types read them.
  const auto m = bt::make_metagraph(1, bt::test::recorded_block, bt::test::recorded_block_hash,
                                    neurons, state);
  const auto& tv = theirs.at("subnet_state").at("value");
  std::size_t agree = 0;
  for (const auto& n : m.neurons) {
    const bool same = n.hotkey == tv.at("hotkeys").at(n.uid) &&
                      n.coldkey == tv.at("coldkeys").at(n.uid) &&
                      dec(n.stake_rao) == tv.at("total_stake").at(n.uid) &&
                      dec(n.alpha_stake_rao) == tv.at("alpha_stake").at(n.uid) &&
                      dec(n.tao_stake_rao) == tv.at("tao_stake").at(n.uid);
    if (same) ++agree;
  }
  CHECK(agree == 1024);

  // IPv6 text.
  const auto& texts = theirs.at("ipv6_text");
  REQUIRE(texts.size() == ipv6.size());
  REQUIRE(ipv6.size() > 500);
  std::size_t ip_mismatch = 0;
  for (std::size_t i = 0; i < ipv6.size(); ++i) {
    if (bt::ip_to_string(ipv6[i], 6) != texts[i].get<std::string>()) {
      if (++ip_mismatch <= 5) UNSCOPED_INFO(bt::ip_to_string(ipv6[i], 6) << " vs " << texts[i]);
    }
  }
  CHECK(ip_mismatch == 0);
}
