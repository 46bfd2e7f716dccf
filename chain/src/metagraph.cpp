// bt::metagraph: building it from the decoded runtime-API results, and its JSON form.
#include <bt/chain/metagraph.hpp>

#include <bt/keypair.hpp>
#include <bt/ss58.hpp>

#include <algorithm>
#include <cstring>
#include <system_error>
#include <unordered_map>

namespace bt {

const metagraph_neuron* metagraph::find_hotkey(std::string_view ss58) const noexcept {
  for (const auto& n : neurons) {
    if (n.hotkey == ss58) return &n;
  }
  return nullptr;
}

std::vector<axon_info> metagraph::serving_axons() const {
  std::vector<axon_info> out;
  for (const auto& n : neurons) {
    if (n.serving && n.axon.routable()) out.push_back(n.axon);
  }
  return out;
}

namespace {

// Account ids are public keys: their first 8 bytes are as good a hash as any.
struct account_hash {
  std::size_t operator()(const account_id32& a) const noexcept {
    std::uint64_t h = 0;
    std::memcpy(&h, a.data(), sizeof h);
    return static_cast<std::size_t>(h);
  }
};

bool invalid(bt::error& err, std::string what, std::string detail) {
  err = bt::error{chain_errc::invalid_value, std::move(what), std::move(detail)};
  return false;
}

// SubnetState's per-neuron vectors must all have one length (the subnet's n); emission_history
// is not per neuron and is not checked.
bool check_state(const subnet_state& s, std::uint16_t netuid, bt::error& err) {
  if (s.netuid != netuid) {
    return invalid(err, "SubnetState.netuid",
                   "is " + std::to_string(s.netuid) + ", expected " + std::to_string(netuid));
  }
  const std::size_t n = s.hotkeys.size();
  const std::pair<const char*, std::size_t> sizes[] = {
      {"coldkeys", s.coldkeys.size()},
      {"active", s.active.size()},
      {"validator_permit", s.validator_permit.size()},
      {"pruning_score", s.pruning_score.size()},
      {"last_update", s.last_update.size()},
      {"emission", s.emission.size()},
      {"dividends", s.dividends.size()},
      {"incentives", s.incentives.size()},
      {"consensus", s.consensus.size()},
      {"trust", s.trust.size()},
      {"rank", s.rank.size()},
      {"block_at_registration", s.block_at_registration.size()},
      {"alpha_stake", s.alpha_stake.size()},
      {"tao_stake", s.tao_stake.size()},
      {"total_stake", s.total_stake.size()},
  };
  for (const auto& [name, size] : sizes) {
    if (size != n) {
      return invalid(err, std::string("SubnetState.") + name,
                     "has " + std::to_string(size) + " entries, hotkeys has " + std::to_string(n));
    }
  }
  return true;
}

}  // namespace

std::optional<metagraph> make_metagraph(std::uint16_t netuid, std::uint64_t block,
                                        std::string block_hash,
                                        const std::vector<neuron_info_lite>& neurons,
                                        const std::optional<subnet_state>& state, bt::error& err) {
  bt::init_crypto();  // SS58 checksums use libsodium's BLAKE2b
  if (state && !check_state(*state, netuid, err)) return std::nullopt;

  metagraph m;
  m.netuid = netuid;
  m.block = block;
  m.block_hash = std::move(block_hash);
  m.stake = state ? stake_source::subnet_state : stake_source::neuron_stake_entries;
  m.neurons.reserve(neurons.size());
  std::vector<bool> seen;
  // A subnet's coldkeys repeat (one operator runs many neurons: 75 distinct among the 1,024 of
  // the recorded subnet 1), and an SS58 encoding (BLAKE2b + base58) is most of this function's
  // time, so each distinct coldkey is encoded once.
  std::unordered_map<account_id32, std::string, account_hash> coldkey_text;
  for (std::size_t i = 0; i < neurons.size(); ++i) {
    const auto& n = neurons[i];
    const auto where = [i] { return "NeuronInfoLite[" + std::to_string(i) + "]"; };
    if (n.netuid != netuid) {
      invalid(err, where() + ".netuid",
              "is " + std::to_string(n.netuid) + ", expected " + std::to_string(netuid));
      return std::nullopt;
    }
    if (n.uid >= seen.size()) seen.resize(std::size_t{n.uid} + 1, false);
    if (seen[n.uid]) {
      invalid(err, where() + ".uid", "uid " + std::to_string(n.uid) + " appears twice");
      return std::nullopt;
    }
    seen[n.uid] = true;

    metagraph_neuron out;
    out.uid = n.uid;
    out.hotkey_id = n.hotkey;
    out.coldkey_id = n.coldkey;
    out.hotkey = ss58::encode(n.hotkey, ss58::default_format);
    auto [it, fresh] = coldkey_text.try_emplace(n.coldkey);
    if (fresh) it->second = ss58::encode(n.coldkey, ss58::default_format);
    out.coldkey = it->second;
    out.active = n.active;
    out.validator_permit = n.validator_permit;
    if (state) {
      if (n.uid >= state->hotkeys.size()) {
        invalid(err, where() + ".uid",
                "uid " + std::to_string(n.uid) + " is outside SubnetState's " +
                    std::to_string(state->hotkeys.size()) + " neurons");
        return std::nullopt;
      }
      if (state->hotkeys[n.uid] != n.hotkey) {
        invalid(err, "SubnetState.hotkeys[" + std::to_string(n.uid) + "]",
                "differs from the hotkey of the neuron with that uid");
        return std::nullopt;
      }
      out.stake_rao = state->total_stake[n.uid];
      out.alpha_stake_rao = state->alpha_stake[n.uid];
      out.tao_stake_rao = state->tao_stake[n.uid];
    } else {
      std::uint64_t sum = 0;
      for (const auto& e : n.stake) {
        // Saturate: a u64 of rao is 18e9 TAO, far above the supply; an overflow means bad data,
        // and a saturated figure is less wrong than a wrapped one.
        sum = e.amount > UINT64_MAX - sum ? UINT64_MAX : sum + e.amount;
      }
      out.stake_rao = sum;
    }
    const auto& a = n.axon_info;
    out.serving = a.ip != 0;
    out.axon.ip = ip_to_string(a.ip, a.ip_type);
    out.axon.port = a.port;
    out.axon.ip_type = a.ip_type;
    out.axon.protocol = a.protocol;
    out.axon.version = a.version;
    out.axon.hotkey = out.hotkey;
    out.axon.coldkey = out.coldkey;
    m.neurons.push_back(std::move(out));
  }
  std::sort(m.neurons.begin(), m.neurons.end(),
            [](const metagraph_neuron& x, const metagraph_neuron& y) { return x.uid < y.uid; });
  return m;
}

metagraph make_metagraph(std::uint16_t netuid, std::uint64_t block, std::string block_hash,
                         const std::vector<neuron_info_lite>& neurons,
                         const std::optional<subnet_state>& state) {
  bt::error err;
  auto m = make_metagraph(netuid, block, std::move(block_hash), neurons, state, err);
  if (!m) throw std::system_error(err.code, err.message());
  return std::move(*m);
}

json to_json(const metagraph& m) {
  // Built member by member into the ordered objects' storage (keys are distinct by
  // construction): nlohmann's initializer lists deep-copy every value, which made this several
  // times slower for a 1,024-neuron metagraph.
  json neurons = json::array();
  auto& list = neurons.get_ref<json::array_t&>();
  list.reserve(m.neurons.size());
  for (const auto& n : m.neurons) {
    json axon = json::object();
    auto& a = axon.get_ref<json::object_t&>();
    a.reserve(6);
    a.emplace_back("ip", n.axon.ip);
    a.emplace_back("port", n.axon.port);
    a.emplace_back("ip_type", n.axon.ip_type);
    a.emplace_back("protocol", n.axon.protocol);
    a.emplace_back("version", n.axon.version);
    a.emplace_back("serving", n.serving);
    json neuron = json::object();
    auto& o = neuron.get_ref<json::object_t&>();
    o.reserve(9);
    o.emplace_back("uid", n.uid);
    o.emplace_back("hotkey", n.hotkey);
    o.emplace_back("coldkey", n.coldkey);
    o.emplace_back("active", n.active);
    o.emplace_back("validator_permit", n.validator_permit);
    o.emplace_back("stake_rao", n.stake_rao);
    o.emplace_back("alpha_stake_rao", n.alpha_stake_rao);
    o.emplace_back("tao_stake_rao", n.tao_stake_rao);
    o.emplace_back("axon", std::move(axon));
    list.push_back(std::move(neuron));
  }
  json out = json::object();
  auto& o = out.get_ref<json::object_t&>();
  o.emplace_back("netuid", m.netuid);
  o.emplace_back("block", m.block);
  o.emplace_back("block_hash", m.block_hash);
  o.emplace_back("n", m.neurons.size());
  o.emplace_back("neurons", std::move(neurons));
  if (m.stake == stake_source::neuron_stake_entries) {
    o.emplace_back("stake_source", "neuron_stake_entries");
  }
  return out;
}

}  // namespace bt
