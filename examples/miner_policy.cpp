// The miner of docs/axon.md with a policy per route: a blacklist on the verified caller and a
// priority (higher first when the queue is contended). The registered hotkeys and their stakes
// stand for the subnet's metagraph (bt-axon reads them from --metagraph FILE or --netuid N).
//
//   example_miner_policy [PORT]     # default 8091; serves as the dev key //Alice
#include <bt/axon.hpp>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>

struct echo : bt::synapse {
  std::string text;
  std::optional<std::string> reply;
  BT_SYNAPSE(echo, "Echo", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(reply))
};

namespace {

// The metagraph: hotkey -> stake. caller.hotkey is a std::string_view (valid during the call).
const std::map<std::string, double, std::less<>> stakes = {
    {"5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty", 1000.0},  // //Bob
    {"5FLSigC9HGRKVhB9FiEo4Y3koPsNmBmLJbpXg2mp1hXcS59Y", 10.0},    // //Charlie
};

bool is_registered(std::string_view hotkey) {
  return stakes.contains(hotkey);
}

double stake_of(std::string_view hotkey) {
  const auto it = stakes.find(hotkey);
  return it == stakes.end() ? 0.0 : it->second;
}

}  // namespace

int main(int argc, char** argv) try {
  const auto port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 8091);
  bt::axon ax(bt::keypair::from_uri("//Alice"), {.ip = "::", .port = port});
  ax.attach<echo>([](echo& s, const bt::request_context&) { s.reply = s.text; },
                  {.blacklist =
                       [](const bt::synapse&, const bt::request_context& caller) {
                         return is_registered(caller.hotkey)
                                    ? bt::verdict::allow()
                                    : bt::verdict::deny("Unrecognized hotkey");
                       },
                   .priority =
                       [](const bt::synapse&, const bt::request_context& caller) {
                         return stake_of(caller.hotkey);  // higher first
                       }});
  ax.run([](bt::axon& a) { std::cout << bt::to_json_value(a.info()).dump() << std::endl; });
} catch (const std::exception& e) {
  std::cerr << "example_miner_policy: " << e.what() << "\n";
  return 1;
}
