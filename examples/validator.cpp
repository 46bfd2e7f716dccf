// A validator in the subnet template's shape, with bt::dendrite: each step it sends every miner
// a Dummy query with a random input, scores the answer (correct = input * 2) and its latency,
// keeps a moving average of the scores, and prints a table.
//
//   example_validator                                  # demo: three local miners, started here
//   example_validator --axon 127.0.0.1:8091:5FHne... [--axon ...] [--uri //Alice] [--steps 3]
//
// Against a real subnet the axons come from the metagraph (bt-dendrite query --axons FILE takes
// the same list) and the scores go to set_weights; both are out of scope here.
#include <bt/axon.hpp>
#include <bt/dendrite.hpp>
#include <bt/examples/dummy.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using bt::examples::dummy;

struct miner_score {
  double moving = 0.0;  ///< exponential moving average of step scores (the template's alpha 0.1)
};

/// One answer's score: 0 when wrong or failed; otherwise 0.5 for correctness plus up to 0.5 for
/// speed (linear in the share of the timeout left).
double score(const dummy& q, const dummy& r, double timeout) {
  if (!r.is_success() || r.dummy_output != q.dummy_input * 2) return 0.0;
  const double t = r.dendrite.process_time.value_or(timeout);
  return 0.5 + 0.5 * std::clamp(1.0 - t / timeout, 0.0, 1.0);
}

/// Demo miners: an honest one, a wrong one and a slow one.
std::vector<std::unique_ptr<bt::axon>> start_demo_miners() {
  std::vector<std::unique_ptr<bt::axon>> miners;
  const char* uris[] = {"//Bob", "//Charlie", "//Dave"};
  for (int i = 0; i < 3; ++i) {
    auto opt = bt::axon_options::loopback();
    auto ax = std::make_unique<bt::axon>(bt::keypair::from_uri(uris[i]), opt);
    ax->attach<dummy>([i](dummy& d) {
      if (i == 1) {
        d.dummy_output = d.dummy_input + 1;  // wrong
        return;
      }
      if (i == 2) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // slow
      d.dummy_output = d.dummy_input * 2;
    });
    ax->start();
    miners.push_back(std::move(ax));
  }
  return miners;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<bt::axon_info> axons;
  std::string uri = "//Alice";
  int steps = 3;
  double timeout = 1.0;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--axon")
        axons.push_back(bt::axon_info::parse(value(), "--axon"));
      else if (a == "--uri")
        uri = value();
      else if (a == "--steps")
        steps = std::stoi(value());
      else if (a == "--timeout")
        timeout = std::stod(value());
      else
        throw std::invalid_argument("unknown argument " + a);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "validator: %s\nusage: %s [--axon IP:PORT:HOTKEY]... [--uri URI] "
                 "[--steps N] [--timeout SECONDS]\n",
                 e.what(), argv[0]);
    return 2;
  }

  std::vector<std::unique_ptr<bt::axon>> demo;
  if (axons.empty()) {
    demo = start_demo_miners();
    for (auto& m : demo) {
      auto info = m->info();
      info.ip = "127.0.0.1";
      axons.push_back(info);
    }
    std::printf("demo: 3 local miners (honest, wrong, slow)\n");
  }

  bt::dendrite dendrite(bt::keypair::from_uri(uri));
  std::vector<miner_score> scores(axons.size());
  std::mt19937_64 rng(std::random_device{}());

  for (int step = 1; step <= steps; ++step) {
    dummy q;
    q.dummy_input = static_cast<std::int64_t>(rng() % 1000);
    const auto results = dendrite.forward(axons, q, timeout);  // in the order of `axons`

    std::printf("\nstep %d: dummy_input = %lld\n", step, static_cast<long long>(q.dummy_input));
    std::printf("%-4s %-22s %-10s %-6s %-12s %-8s %-7s %-7s\n", "uid", "endpoint", "hotkey",
                "status", "latency(ms)", "correct", "score", "avg");
    for (std::size_t uid = 0; uid < results.size(); ++uid) {
      const dummy& r = results[uid];
      const double s = score(q, r, timeout);
      scores[uid].moving = 0.9 * scores[uid].moving + 0.1 * s;
      const std::string endpoint = axons[uid].ip + ":" + std::to_string(axons[uid].port);
      const std::string status =
          r.dendrite.status_code ? std::to_string(*r.dendrite.status_code) : "None";
      char latency[32] = "-";
      if (r.dendrite.process_time)
        std::snprintf(latency, sizeof latency, "%.3f", *r.dendrite.process_time * 1e3);
      std::printf("%-4zu %-22s %-10s %-6s %-12s %-8s %-7.3f %-7.3f\n", uid, endpoint.c_str(),
                  axons[uid].hotkey.substr(0, 8).c_str(), status.c_str(), latency,
                  r.dummy_output == q.dummy_input * 2 ? "yes" : "no", s, scores[uid].moving);
      if (!r.is_success()) std::printf("     %s\n", r.dendrite.status_message.value_or("").c_str());
    }
  }
  for (auto& m : demo) m->stop();
  return 0;
}
