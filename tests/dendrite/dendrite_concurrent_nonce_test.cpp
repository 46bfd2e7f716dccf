// Concurrent calls from ONE bt::dendrite to one bt::axon with several I/O threads: the dendrite's
// nonces leave in increasing order, but the axon's threads may record them in another order.
// With the default nonce rule (window, PROTOCOL "Anti-replay window") every call must be served;
// Python's strictly increasing rule refused the late ones with 401 "Nonce is too old".
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>

#include "fault_server.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/use_future.hpp>

#include <future>
#include <map>
#include <string>

using bt::examples::dummy;
using namespace bt::test;

namespace {

struct served_axon {
  bt::axon ax;

  explicit served_axon(std::size_t io_threads)
      : ax(bob(), [io_threads] {
          auto o = bt::axon_options::loopback();
          o.io_threads = io_threads;  // the default nonce store: nothing set
          o.max_workers = 4;
          return o;
        }()) {
    ax.attach<dummy>([](dummy& d) { d.dummy_output = 2 * d.dummy_input; });
    ax.start();
  }
  ~served_axon() { ax.stop(); }

  bt::axon_info info() const {
    auto i = ax.info();
    i.ip = "127.0.0.1";
    return i;
  }
};

/// Sends `n` concurrent Dummy calls through the dendrite's async fan-out and checks that every
/// one was served (the statuses seen are in the failure message).
void all_served(bt::dendrite& d, const bt::axon_info& info, std::size_t n, int input) {
  dummy q;
  q.dummy_input = input;
  std::future<std::vector<dummy>> f =
      d.async_forward(std::vector<bt::axon_info>(n, info), q, 20.0, boost::asio::use_future);
  // Generous bound: the calls end by their 20 s deadline at the latest; this proves "no hang".
  REQUIRE(f.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  const std::vector<dummy> rs = f.get();
  REQUIRE(rs.size() == n);
  std::map<std::string, int> seen;
  std::size_t ok = 0;
  for (const auto& r : rs) {
    const int code = r.dendrite.status_code.value_or(0);
    ++seen[std::to_string(code) + " " + r.dendrite.status_message.value_or("None")];
    ok += code == 200 && r.dummy_output == 2 * input;
  }
  std::string summary;
  for (const auto& [k, v] : seen) summary += std::to_string(v) + " x " + k + "; ";
  INFO(n << " concurrent calls: " << summary);
  CHECK(ok == n);
}

}  // namespace

TEST_CASE("one dendrite, 20 concurrent calls to a 2- and a 4-thread axon: all served",
          "[dendrite][axon][nonce]") {
  for (std::size_t io_threads : {2, 4}) {
    served_axon srv(io_threads);
    bt::dendrite d(alice(), {.threads = 2, .max_concurrency = 64});
    for (int round = 0; round < 10; ++round) {
      INFO("io_threads " << io_threads << ", round " << round);
      all_served(d, srv.info(), 20, round);
    }
  }
}

TEST_CASE("one dendrite, 200 concurrent calls to a 2-thread axon: all served",
          "[dendrite][axon][nonce]") {
  raise_fd_limit();  // 200 connections on each side
  served_axon srv(2);
  bt::dendrite d(alice(), {.threads = 2, .max_concurrency = 256, .max_idle_per_endpoint = 256});
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    all_served(d, srv.info(), 200, round + 1);
  }
}
