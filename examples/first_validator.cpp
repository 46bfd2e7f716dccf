// The validator of docs/dendrite.md, "Writing a validator": one forward() of the subnet
// template's Dummy to the axons listed in a JSON file (a list of AxonInfo objects), with the
// hotkey of the wallet the tools use (BT_WALLET_PATH, BT_WALLET_NAME, BT_WALLET_HOTKEY).
//
//   example_first_validator AXONS.json
//
// Prints one line per axon; exits 1 with a message (not an uncaught exception) when the file or
// the hotkey cannot be read.
#include <bt/axon_info.hpp>
#include <bt/dendrite.hpp>
#include <bt/examples/dummy.hpp>  // the subnet template's Dummy synapse
#include <bt/json_body.hpp>
#include <bt/wallet.hpp>

#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

// The metagraph's axons, here from a file: [{"ip": "127.0.0.1", "port": 8091, "hotkey": "5F..."}]
std::vector<bt::axon_info> load_axons(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  bt::json list;
  if (bt::error e = bt::parse_json(text.str(), list); e) throw std::runtime_error(e.message());
  if (!list.is_array()) throw std::runtime_error(path + ": expected a JSON list of AxonInfo");
  std::vector<bt::axon_info> axons(list.size());
  for (std::size_t i = 0; i < list.size(); ++i)
    if (bt::error e = bt::axon_info_from_json(list[i], axons[i]); e)
      throw std::runtime_error(path + " [" + std::to_string(i) + "]: " + e.message());
  return axons;
}

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::cerr << "usage: example_first_validator AXONS.json\n";
    return 2;
  }
  const std::vector<bt::axon_info> axons = load_axons(argv[1]);
  bt::wallet w(bt::wallet_config::from_env());  // as the tools: BT_WALLET_* or the defaults
  bt::dendrite dendrite(w.load_hotkey());       // owns one I/O thread

  bt::examples::dummy query;
  query.dummy_input = 21;
  // One call per axon, at most options.max_concurrency at once, one deadline for all.
  const std::vector<bt::examples::dummy> answers = dendrite.forward(axons, query, 12.0);
  for (std::size_t uid = 0; uid < answers.size(); ++uid) {  // answers[i] belongs to axons[i]
    const auto& a = answers[uid];
    if (a.is_success() && a.dummy_output == 42)
      std::cout << uid << ": correct in " << *a.dendrite.process_time << " s\n";
    else
      std::cout << uid << ": " << a.dendrite.status_code.value_or(0) << " "
                << a.dendrite.status_message.value_or("") << "\n";
  }
} catch (const std::exception& e) {
  std::cerr << "example_first_validator: " << e.what() << "\n";
  return 1;
}
