// A Bittensor SDK v11 style validator: queries the POST /forward route of each miner given as
// IP:PORT:HOTKEY with btauth/1 (dendrite::btauth_call, PROTOCOL 14), signed with the dev key
// //Alice for the miner's hotkey, and checks each answer ({"dummy_output": 2n}). Prints one line
// per miner: "<hotkey>: <status> <answer or message>". Exit status 0 when every miner answered
// correctly, 1 otherwise, 2 for bad arguments. The miner may be examples/v11_miner.cpp or
// examples/python/v11_miner.py.
//
//   example_v11_validator 127.0.0.1:8091:5FHneW46...
#include <bt/dendrite.hpp>
#include <bt/json.hpp>

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<bt::axon_info> miners;
  try {
    for (int i = 1; i < argc; ++i) miners.push_back(bt::axon_info::parse(argv[i]));
    if (miners.empty()) throw std::invalid_argument("give at least one IP:PORT:HOTKEY");
  } catch (const std::exception& e) {
    std::cerr << "example_v11_validator: " << e.what() << "\n";
    return 2;
  }
  // verify_responses = required: each answer must carry the miner's signature over our request.
  bt::dendrite d(bt::keypair::from_uri("//Alice"),
                 {.verify_responses = bt::response_verification::required});
  const int input = 21;
  bool all_correct = true;
  for (const auto& miner : miners) {
    const auto r =
        d.btauth_call(miner, "POST", "/forward", bt::json{{"dummy_input", input}}.dump(), 12.0);
    const auto answer = bt::json::parse(r.body, nullptr, false);
    const bool correct = r.status == 200 && answer.is_object() &&
                         answer.value("dummy_output", bt::json()) == 2 * input;
    all_correct = all_correct && correct;
    std::cout << miner.hotkey << ": " << r.status << " " << (r.error ? r.status_message : r.body)
              << std::endl;
  }
  return all_correct ? 0 : 1;
}
