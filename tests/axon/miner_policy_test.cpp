// bt-axon's access policy: the rules, the snapshot holder, and the strict file loaders (each bad
// entry refused with the file and the line or entry that is wrong).
#include "miner_policy.hpp"

#include <bt/keypair.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using bt::miner::access_policy;
using bt::miner::parse_deny_list;
using bt::miner::parse_metagraph;
using bt::miner::policy_file_error;

namespace {

std::string alice() {
  return bt::keypair::from_uri("//Alice").ss58_address();
}
std::string bob() {
  return bt::keypair::from_uri("//Bob").ss58_address();
}

/// The message of the policy_file_error `f` throws ("" if it does not throw).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const policy_file_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("miner policy: deny list and metagraph rules", "[policy]") {
  access_policy p;
  CHECK(p.blacklist(alice()).allowed);  // no rules: everyone
  p.denied.insert(bob());
  CHECK(p.blacklist(bob()).reason == "Blacklisted hotkey");
  p.metagraph = bt::miner::neuron_map{{alice(), {5.0, false}}};
  CHECK(p.blacklist(alice()).allowed);
  CHECK(p.priority(alice()) == 5.0);
  const auto carol = bt::keypair::from_uri("//Charlie").ss58_address();
  CHECK(p.blacklist(carol).reason == "Unrecognized hotkey");
  CHECK(p.priority(carol) == 0.0);
  p.allow_non_registered = true;
  CHECK(p.blacklist(carol).allowed);
  p.force_validator_permit = true;
  CHECK(p.blacklist(alice()).reason == "Non-validator hotkey");
  CHECK(p.describe() == "1 denied hotkeys, metagraph of 1 neurons");
}

TEST_CASE("miner policy: a replaced snapshot is seen whole by later readers", "[policy]") {
  bt::miner::policy_holder holder{access_policy{}};
  const auto before = holder.current();
  std::atomic<bool> stop{false};
  std::atomic<int> inconsistent{0};
  // Readers on other threads see either the old or the new snapshot, never a mix (TSan checks
  // the publication); the old snapshot stays valid for whoever still holds it.
  std::thread reader([&] {
    while (!stop.load()) {
      const auto p = holder.current();
      if (p->denied.size() != (p->metagraph ? 1u : 0u)) ++inconsistent;
    }
  });
  for (int i = 0; i < 200; ++i) {
    access_policy next;
    if (i % 2 == 0) {
      next.denied.insert(alice());
      next.metagraph = bt::miner::neuron_map{{bob(), {1.0, true}}};
    }
    holder.replace(std::move(next));
  }
  stop = true;
  reader.join();
  CHECK(inconsistent == 0);
  CHECK(before->denied.empty());
  CHECK(!holder.current()->metagraph.has_value());  // the last one published (i = 199)
}

TEST_CASE("miner policy: deny list lines", "[policy]") {
  const auto set =
      parse_deny_list("# comment\n\n  " + alice() + " \r\n" + bob() + "\n", "deny.txt");
  CHECK(set.size() == 2);
  CHECK(set.contains(alice()));
  CHECK(set.contains(bob()));
  // A typo is refused with the file, the line number and the entry.
  const auto msg = error_of([] { parse_deny_list("# ok\n" + alice() + "\n5Fnotakey\n", "d.txt"); });
  CHECK(msg.rfind("d.txt:3: '5Fnotakey' is not an SS58 address (", 0) == 0);
  // A hex public key is not an SS58 address either.
  CHECK(error_of([] {
          parse_deny_list("0x" + std::string(64, 'a'), "d.txt");
        }).rfind("d.txt:1:", 0) == 0);
  // A flipped checksum character.
  std::string bad = alice();
  bad.back() = bad.back() == 'A' ? 'B' : 'A';
  CHECK(!error_of([&] { parse_deny_list(bad, "d.txt"); }).empty());
}

TEST_CASE("miner policy: metagraph entries", "[policy]") {
  const auto ok = parse_metagraph(R"([{"hotkey":")" + alice() +
                                      R"(","stake":12.5,"validator_permit":true},{"hotkey":")" +
                                      bob() + R"("}])",
                                  "mg.json");
  REQUIRE(ok.size() == 2);
  CHECK(ok.at(alice()).stake == 12.5);
  CHECK(ok.at(alice()).validator_permit);
  CHECK(ok.at(bob()).stake == 0.0);

  // Truncated JSON: the parser's line and column, without nlohmann's exception id.
  const auto truncated = error_of([] { parse_metagraph("[{\"hotkey\":\n\"5", "mg.json"); });
  CHECK(truncated.rfind("mg.json: not valid JSON: parse error at line 2, column ", 0) == 0);
  CHECK(truncated.find("json.exception") == std::string::npos);

  CHECK(error_of([] { parse_metagraph("{}", "mg.json"); }).find("expected a JSON list") !=
        std::string::npos);
  CHECK(error_of([] { parse_metagraph("[1]", "mg.json"); }) ==
        "mg.json: entry 0: expected an object, got number");
  CHECK(error_of([] { parse_metagraph(R"([{"stake":1}])", "mg.json"); }) ==
        "mg.json: entry 0: needs a string \"hotkey\"");
  const auto typo = error_of([] { parse_metagraph(R"([{"hotkey":"5Fxyz"}])", "mg.json"); });
  CHECK(typo.rfind("mg.json: entry 0 (hotkey 5Fxyz): the hotkey is not an SS58 address (", 0) == 0);
  const auto entry = [](const std::string& extra) {
    return R"({"hotkey":")" + alice() + "\"" + extra + "}";
  };
  CHECK(error_of([&] { parse_metagraph("[" + entry(R"(,"stake":"1")") + "]", "m"); }) ==
        "m: entry 0 (hotkey " + alice() + "): \"stake\" must be a number");
  CHECK(error_of([&] { parse_metagraph("[" + entry(R"(,"stake":-1)") + "]", "m"); }) ==
        "m: entry 0 (hotkey " + alice() + "): \"stake\" must be a non-negative number");
  CHECK(error_of([&] { parse_metagraph("[" + entry(R"(,"validator_permit":1)") + "]", "m"); }) ==
        "m: entry 0 (hotkey " + alice() + "): \"validator_permit\" must be true or false");
  CHECK(error_of([&] { parse_metagraph("[" + entry("") + "," + entry("") + "]", "m"); }) ==
        "m: entry 1 (hotkey " + alice() + "): the hotkey is listed again (first at entry 0)");
}

TEST_CASE("miner policy: files that cannot be read say why", "[policy]") {
  const std::string missing = "/nonexistent-dir/deny.txt";
  CHECK(error_of([&] { bt::miner::load_deny_list(missing); }) ==
        "cannot read " + missing + ": No such file or directory");
  CHECK(error_of([] { bt::miner::load_metagraph("/"); }).rfind("cannot read /: ", 0) == 0);
}
