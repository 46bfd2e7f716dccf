// fake-subtensor: the tests' loopback subtensor (fake_subtensor.hpp) as a program, for tests that
// run command-line tools against it.
//
//   fake-subtensor --session FILE [--session FILE]... [--fault
//   METHOD=close|drop|malformed|oversized:N|delay:MS]... [--port N] [--echo-requests]
//
// --port (default 0: any free port) lets a test stop the node and start another in its place.
// Its first stdout line is {"port": N, "url": "ws://127.0.0.1:N"} once it is listening (as
// bt-axon's ready line); it then serves until SIGTERM or SIGINT and exits 0. With --echo-requests,
// each request then adds a line {"request": "METHOD"} as it arrives, so that a test can wait for
// a client's request to be in flight. Bad arguments: a message on stderr and exit 2.
#include "support/fake_subtensor.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  // Block the stop signals before any thread starts, so that only sigwait below receives them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::vector<std::string> sessions;
  unsigned long port = 0;
  std::vector<std::pair<std::string, bt::test::fake_fault>> faults;
  bool echo = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--echo-requests") {
        echo = true;
      } else if (a == "--port" && i + 1 < argc) {
        const std::string v = argv[++i];
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 5 ||
            (port = std::stoul(v)) > 65535)
          throw std::invalid_argument("--port: expected 0-65535, got '" + v + "'");
      } else if ((a == "--session" || a == "--fault") && i + 1 < argc) {
        const std::string v = argv[++i];
        if (a == "--session") {
          sessions.push_back(v);
        } else {
          const auto eq = v.find('=');
          if (eq == std::string::npos || eq == 0)
            throw std::invalid_argument("--fault METHOD=KIND");
          faults.emplace_back(v.substr(0, eq), bt::test::parse_fake_fault(v.substr(eq + 1)));
        }
      } else {
        throw std::invalid_argument("unknown argument: " + a);
      }
    }
    if (sessions.empty()) throw std::invalid_argument("--session FILE is required");
    bt::test::fake_subtensor fake({}, static_cast<std::uint16_t>(port));
    for (const auto& s : sessions) fake.load(s);
    for (const auto& [m, f] : faults) fake.set_fault(m, f);
    if (echo) {
      fake.set_request_observer([](const std::string& method) {
        std::cout << bt::json{{"request", method}}.dump() << std::endl;  // flushed: tests wait
      });
    }
    std::cout << "{\"port\": " << fake.port() << ", \"url\": \"" << fake.url() << "\"}"
              << std::endl;
    int sig = 0;
    sigwait(&stop, &sig);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fake-subtensor: " << e.what() << "\n";
    return 2;
  }
}
