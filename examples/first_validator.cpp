// The validator of docs/dendrite.md, "Writing a validator": reads subnet NETUID's metagraph from
// a subtensor node and sends the subnet template's Dummy to every axon it serves, signed with the
// hotkey of the wallet the tools use (BT_WALLET_PATH, BT_WALLET_NAME, BT_WALLET_HOTKEY).
//
//   example_first_validator NODE NETUID     e.g.  ws://127.0.0.1:9944 1   or   finney 1
//
// Prints one line per axon (its hotkey, then the outcome); exits 1 with a message (not an
// uncaught exception) when the hotkey or the metagraph cannot be read.
#include <bt/chain/subtensor.hpp>  // bt::read_metagraph
#include <bt/dendrite.hpp>
#include <bt/examples/dummy.hpp>  // the subnet template's Dummy synapse
#include <bt/wallet.hpp>

#include <charconv>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

int main(int argc, char** argv) try {
  const std::string_view n = argc == 3 ? argv[2] : "";
  std::uint16_t netuid = 0;
  if (auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), netuid);
      n.empty() || ec != std::errc{} || end != n.data() + n.size()) {
    std::cerr << "usage: example_first_validator NODE NETUID (0-65535)\n";
    return 2;
  }
  bt::dendrite dendrite(bt::wallet(bt::wallet_config::from_env()).load_hotkey());  // 1 I/O thread
  // The metagraph at the head; its axons that are served at a routable address, in uid order.
  const std::vector<bt::axon_info> axons = bt::read_metagraph(argv[1], netuid).serving_axons();

  bt::examples::dummy query;
  query.dummy_input = 21;
  // One call per axon, at most options.max_concurrency at once, one deadline for all.
  const std::vector<bt::examples::dummy> answers = dendrite.forward(axons, query, 12.0);
  for (std::size_t i = 0; i < answers.size(); ++i) {  // answers[i] belongs to axons[i]
    const bt::terminal_info& d = answers[i].dendrite;
    std::cout << axons[i].hotkey << ": "
              << (answers[i].is_success() && answers[i].dummy_output == 42 ? "correct" : "wrong")
              << ", " << d.status_code.value_or(0) << " " << d.status_message.value_or("") << " in "
              << d.process_time.value_or(0) << " s\n";
  }
} catch (const std::exception& e) {
  std::cerr << "example_first_validator: " << e.what() << "\n";
  return 1;
}
