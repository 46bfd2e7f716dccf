// Uses the installed package the way a subnet's code would: starts an axon on a free loopback
// port, sends it one signed Dummy query with the dendrite, and checks the answer (status 200,
// dummy_output = 2 * dummy_input). Prints "status <code> output <value>" (run.cmake checks the
// line too) and exits 1 on any mismatch. It also round-trips a SCALE compact and hashes a storage
// prefix through bt::chain, so that the chain library and its dependencies link from the package.
#include <bt/axon.hpp>
#include <bt/chain/hashing.hpp>
#include <bt/chain/scale_reader.hpp>
#include <bt/chain/scale_writer.hpp>
#include <bt/dendrite.hpp>
#include <bt/keypair.hpp>
#include <bt/synapse.hpp>

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

namespace {

// The subnet template's Dummy, declared here as a subnet's own code declares its synapses (the
// package installs no example synapses).
struct dummy : bt::synapse {
  std::int64_t dummy_input = 0;
  std::optional<std::int64_t> dummy_output;

  BT_SYNAPSE(dummy, "Dummy", BT_FIELD(dummy_input, bt::required), BT_FIELD(dummy_output))
};

}  // namespace

int main() {
  bt::scale_writer w;
  w.compact(1u << 30);  // the smallest value of the compact's big-integer mode
  bt::scale_reader r(w.data());
  if (r.compact("value") != (1u << 30) || !r.at_end() || bt::twox128("Axons").size() != 16) {
    std::cerr << "consumer: bt::chain round trip failed\n";
    return 1;
  }

  bt::axon axon(bt::keypair::from_uri("//Bob"), bt::axon_options::loopback());
  axon.attach<dummy>([](dummy& d) { d.dummy_output = d.dummy_input * 2; });
  axon.start();
  bt::axon_info target = axon.info();
  target.ip = "127.0.0.1";

  bt::dendrite dendrite(bt::keypair::from_uri("//Alice"));
  dummy query;
  query.dummy_input = 21;
  const dummy answer = dendrite.call(target, query, 10.0);
  axon.stop();

  // bt::metrics from the package: the axon counted the call, and a miner's own metric renders.
  axon.metrics().counter("consumer_checks_total", "Checks.").get().inc();
  const std::string text = axon.metrics().render();
  if (text.find("bt_axon_requests_total{synapse=\"Dummy\",status=\"200\"} 1\n") ==
          std::string::npos ||
      text.find("consumer_checks_total 1\n") == std::string::npos) {
    std::cerr << "consumer: bt::metrics did not count the call\n" << text;
    return 1;
  }

  const int status = answer.dendrite.status_code.value_or(-1);
  const long long output = answer.dummy_output.value_or(-1);
  std::cout << "status " << status << " output " << output << "\n";
  if (status != 200 || output != 42) {
    std::cerr << "consumer: expected status 200 and output 42; message: "
              << answer.dendrite.status_message.value_or("") << "\n";
    return 1;
  }
  return 0;
}
