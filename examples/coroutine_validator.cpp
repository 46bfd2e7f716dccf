// docs/dendrite.md, "From a coroutine": a validator step as a C++20 coroutine on the caller's own
// io_context (the dendrite keeps it running while a call is in flight). Queries the axons given
// as IP:PORT:HOTKEY arguments with the dev key //Alice and prints each status.
//
//   example_coroutine_validator 127.0.0.1:8091:5F...
#include <bt/dendrite.hpp>
#include <bt/examples/dummy.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;

asio::awaitable<void> step(bt::dendrite& d, std::vector<bt::axon_info> axons) {
  bt::examples::dummy q;
  q.dummy_input = 3;
  auto answers = co_await d.async_forward(axons, q, 12.0, asio::use_awaitable);
  auto one = co_await d.async_call(axons[0], q, 5.0, asio::use_awaitable);
  for (std::size_t i = 0; i < answers.size(); ++i)
    std::cout << i << ": " << answers[i].dendrite.status_code.value_or(0) << "\n";
  std::cout << "again 0: " << one.dendrite.status_code.value_or(0) << "\n";
}

int main(int argc, char** argv) try {
  std::vector<bt::axon_info> axons;
  for (int i = 1; i < argc; ++i) axons.push_back(bt::axon_info::parse(argv[i]));  // IP:PORT:HOTKEY
  if (axons.empty()) throw std::invalid_argument("give at least one IP:PORT:HOTKEY");
  asio::io_context ioc;
  bt::dendrite d(bt::keypair::from_uri("//Alice"));  // its own I/O thread; we resume on ioc
  asio::co_spawn(ioc, step(d, axons), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  ioc.run();
} catch (const std::exception& e) {
  std::cerr << "example_coroutine_validator: " << e.what() << "\n";
  return 1;
}
