#include "miner_policy.hpp"

#include <bt/json.hpp>
#include <bt/ss58.hpp>

#include <bt_cli.hpp>

#include <fmt/format.h>

#include <cmath>

namespace bt::miner {

verdict access_policy::blacklist(std::string_view hotkey) const {
  const std::string key(hotkey);
  if (denied.contains(key)) return verdict::deny("Blacklisted hotkey");
  if (!metagraph) return verdict::allow();
  const auto it = metagraph->find(key);
  if (it == metagraph->end())
    return allow_non_registered ? verdict::allow() : verdict::deny("Unrecognized hotkey");
  if (force_validator_permit && !it->second.validator_permit)
    return verdict::deny("Non-validator hotkey");
  return verdict::allow();
}

double access_policy::priority(std::string_view hotkey) const {
  if (!metagraph) return 0;
  const auto it = metagraph->find(std::string(hotkey));
  return it == metagraph->end() ? 0 : it->second.stake;
}

std::string access_policy::describe() const {
  return fmt::format("{} denied hotkeys, {}", denied.size(),
                     metagraph ? fmt::format("metagraph of {} neurons", metagraph->size())
                               : std::string("no metagraph (registration rules off)"));
}

namespace {

/// Empty when `text` is an SS58 address, else the decoder's reason.
std::string ss58_problem(std::string_view text) {
  std::error_code ec;
  return ss58::decode(text, ec) ? std::string() : ec.message();
}

std::string read_policy_file(const std::string& path) {
  std::string out, why;
  if (!cli::read_file(path, out, why)) throw policy_file_error(why);
  return out;
}

}  // namespace

std::unordered_set<std::string> parse_deny_list(std::string_view text, const std::string& origin) {
  std::unordered_set<std::string> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos || line[b] == '#') continue;
    const auto e = line.find_last_not_of(" \t\r");
    const std::string_view entry = line.substr(b, e - b + 1);
    if (const auto why = ss58_problem(entry); !why.empty())
      throw policy_file_error(fmt::format("{}:{}: '{}' is not an SS58 address ({})", origin,
                                          line_no, entry.substr(0, 80), why));
    out.emplace(entry);
  }
  return out;
}

neuron_map parse_metagraph(std::string_view text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's text reads "[json.exception.parse_error.101] parse error at line L, column C:
    // ..."; the bracketed id means nothing to an operator.
    std::string why = e.what();
    if (const auto p = why.find("] "); p != std::string::npos) why.erase(0, p + 2);
    throw policy_file_error(fmt::format("{}: not valid JSON: {}", origin, why));
  }
  if (!j.is_array())
    throw policy_file_error(fmt::format(
        "{}: expected a JSON list of {{\"hotkey\", \"stake\", \"validator_permit\"}}, got {}",
        origin, j.type_name()));
  neuron_map out;
  std::unordered_map<std::string, std::size_t> first_entry;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& n = j[i];
    auto refuse = [&](const std::string& what) {
      std::string who;
      if (n.is_object() && n.contains("hotkey") && n["hotkey"].is_string())
        who = " (hotkey " + n["hotkey"].get<std::string>().substr(0, 80) + ")";
      return policy_file_error(fmt::format("{}: entry {}{}: {}", origin, i, who, what));
    };
    if (!n.is_object()) throw refuse(fmt::format("expected an object, got {}", n.type_name()));
    if (!n.contains("hotkey") || !n["hotkey"].is_string())
      throw refuse("needs a string \"hotkey\"");
    const auto hotkey = n["hotkey"].get<std::string>();
    if (const auto why = ss58_problem(hotkey); !why.empty())
      throw refuse("the hotkey is not an SS58 address (" + why + ")");
    neuron v;
    if (n.contains("stake")) {
      const json& s = n["stake"];
      if (!s.is_number()) throw refuse("\"stake\" must be a number");
      v.stake = s.get<double>();
      if (!std::isfinite(v.stake) || v.stake < 0)
        throw refuse("\"stake\" must be a non-negative number");
    }
    if (n.contains("validator_permit")) {
      if (!n["validator_permit"].is_boolean())
        throw refuse("\"validator_permit\" must be true or false");
      v.validator_permit = n["validator_permit"].get<bool>();
    }
    if (const auto [it, fresh] = first_entry.emplace(hotkey, i); !fresh)
      throw refuse(fmt::format("the hotkey is listed again (first at entry {})", it->second));
    out.emplace(hotkey, v);
  }
  return out;
}

std::unordered_set<std::string> load_deny_list(const std::string& path) {
  return parse_deny_list(read_policy_file(path), path);
}

neuron_map load_metagraph(const std::string& path) {
  return parse_metagraph(read_policy_file(path), path);
}

}  // namespace bt::miner
