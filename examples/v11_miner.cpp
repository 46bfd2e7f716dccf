// A Bittensor SDK v11 style miner: a plain JSON route whose requests are authenticated by btauth/1
// (the SDK's signed HTTP requests, PROTOCOL 14) instead of a synapse. POST /forward takes
// {"dummy_input": n} and answers {"dummy_output": 2n, "caller": <the verified hotkey>}, the shape
// of examples/python/v11_miner.py, so either validator can query either miner. Prints its AxonInfo
// (one JSON line) once listening; serves until SIGINT/SIGTERM, then drains.
//
//   example_v11_miner [PORT [IP [HOTKEY_URI]]]   # defaults: 8091, "::" (all) and the dev key //Bob
#include <bt/axon.hpp>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

namespace {

// Runs on the worker pool once the request's btauth/1 signature (bound to this miner's hotkey,
// fresh, never seen before) verified.
bt::json_reply forward(std::string_view, const bt::json& body, const bt::request_context& caller) {
  if (!body.is_object() || !body.contains("dummy_input") ||
      !body["dummy_input"].is_number_integer())
    throw bt::forward_error(400, "expected {\"dummy_input\": <integer>}");
  const auto n = body["dummy_input"].get<std::int64_t>();
  return {.body = {{"dummy_output", n * 2}, {"caller", std::string(caller.hotkey)}}};
}

}  // namespace

int main(int argc, char** argv) try {
  const auto port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 8091);
  bt::axon ax(bt::keypair::from_uri(argc > 3 ? argv[3] : "//Bob"),
              {.ip = argc > 2 ? argv[2] : "::", .port = port});
  ax.route("POST", "/forward", forward, {.auth = bt::auth_mode::btauth});
  ax.run([](bt::axon& a) { std::cout << bt::to_json_value(a.info()).dump() << std::endl; });
} catch (const std::exception& e) {  // a bad key, a port in use: said, not thrown at the user
  std::cerr << "example_v11_miner: " << e.what() << "\n";
  return 1;
}
