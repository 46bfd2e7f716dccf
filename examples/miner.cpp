// The miner of docs/axon.md: one synapse type, one forward function, and axon::run(), which
// serves until SIGINT/SIGTERM and then drains. Prints its AxonInfo (one JSON line) once listening.
//
//   example_miner [PORT [IP [HOTKEY_URI]]]     # defaults: 8091, "::" (all) and the dev key //Alice
//
// A real miner loads its hotkey from the wallet instead, starting from the tools' environment
// (BT_WALLET_PATH, BT_WALLET_NAME, BT_WALLET_HOTKEY) so that both find the same keys, and
// publishes the wallet's coldkey in AxonInfo (without it, AxonInfo says "coldkey":""):
//   auto c = bt::wallet_config::from_env(); c.name = "miner"; const bt::wallet w(c);
//   bt::error err; bt::axon_options o{.port = 8091};
//   if (auto coldkey = w.coldkeypub_ss58(err)) o.coldkey = *coldkey;
//   bt::axon ax(w.load_hotkey(), o);
#include <bt/axon.hpp>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

// A synapse type, declared once: each field named once, the route is "Echo".
struct echo : bt::synapse {
  std::string text;                  // required in Python (no default)
  std::optional<std::string> reply;  // Optional[str] = None, filled by the miner
  BT_SYNAPSE(echo, "Echo", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(reply))
};

int main(int argc, char** argv) try {
  const auto port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 8091);
  bt::axon ax(bt::keypair::from_uri(argc > 3 ? argv[3] : "//Alice"),
              {.ip = argc > 2 ? argv[2] : "::", .port = port});
  ax.attach<echo>([](echo& s) { s.reply = s.text; });  // runs on the worker pool
  ax.run([](bt::axon& a) { std::cout << bt::to_json_value(a.info()).dump() << std::endl; });
} catch (const std::exception& e) {  // a bad key, a port in use: said, not thrown at the user
  std::cerr << "example_miner: " << e.what() << "\n";
  return 1;
}
