#include "miner_routes.hpp"

#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/examples/echo_route.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/json.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace bt::miner {
namespace {

/// The streaming example: each word of `text` as one chunk, "word\n", after waiting
/// `delay` before each. A coroutine on the I/O thread: a timer waits, no thread is held per stream.
/// Memory: the text it was given plus one chunk. The next word is found as the stream goes
/// (word_stream::next_word), never an index of every word first: for a body of one-letter words
/// such an index costs 8x the body, held for the whole deadline.
auto word_streamer(std::chrono::milliseconds delay) {
  namespace net = boost::asio;
  return [delay](bt::examples::word_stream& s, bt::stream_writer& out) -> net::awaitable<void> {
    net::steady_timer timer(co_await net::this_coro::executor);
    std::string chunk;
    // `word` views s.text, which outlives the handler; the position advances past each word.
    for (std::size_t pos = 0;
         const auto word = bt::examples::word_stream::next_word(s.text, pos);) {
      if (delay.count() > 0) {
        timer.expires_after(delay);
        auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
        if (ec) co_return;  // the deadline passed or the axon is stopping
      }
      chunk.assign(*word);
      chunk.push_back('\n');
      if (!co_await out.send(chunk)) co_return;  // client gone, deadline, or stopping
    }
  };
}

/// Set once shutdown begins: releases the Hang test route's handlers.
std::atomic<bool> g_stopping{false};

std::shared_ptr<const bt::synapse_descriptor> test_descriptor(
    std::string name, const std::vector<bt::dynamic_field_spec>& fields,
    const std::vector<std::string>& hash_fields = {}) {
  bt::error err;
  auto d = bt::make_dynamic_descriptor(std::move(name), fields, hash_fields, err);
  if (err) throw std::runtime_error("test route descriptor: " + err.message());
  return d;
}

/// --test-routes: Throw, Hang and Big (see the top of this file).
void attach_test_routes(bt::axon& ax) {
  ax.attach(test_descriptor("Throw", {}), [](bt::dynamic_synapse&, const bt::request_context&) {
    throw std::runtime_error("bt-axon --test-routes: Throw always throws");
  });
  ax.attach(test_descriptor("Hang", {}), [](bt::dynamic_synapse&, const bt::request_context&) {
    // Deliberately ignores ctx.cancelled(): a handler stuck for good, until shutdown.
    while (!g_stopping.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  ax.attach(test_descriptor("Big", {{"size", bt::field_kind::required}, {"data"}}, {"size"}),
            [](bt::dynamic_synapse& s, const bt::request_context&) {
              const bt::json* size = s.get("size");
              if (!size || !size->is_number_integer())
                throw bt::forward_error(400, "size must be an integer");
              const auto n = size->get<std::int64_t>();
              if (n < 0 || n > (std::int64_t{16} << 20))
                throw bt::forward_error(400, "size must be between 0 and 16777216");
              *s.get("data") = std::string(static_cast<std::size_t>(n), 'x');
            });
}

}  // namespace

void release_test_routes() {
  g_stopping = true;
}

void attach_miner_routes(bt::axon& ax, policy_holder& policy, const miner_config& cfg,
                         spdlog::logger& log) {
  const bt::route_options route_policy{
      .blacklist =
          [&policy](const bt::synapse&, const bt::request_context& caller) {
            return policy.current()->blacklist(caller.hotkey);
          },
      .priority =
          [&policy](const bt::synapse&, const bt::request_context& caller) {
            return policy.current()->priority(caller.hotkey);
          },
      .verify = {}};
  ax.set_route_options("Synapse", route_policy);  // the built-in ping, with the policy
  ax.attach<bt::examples::dummy>(
      [](bt::examples::dummy& s) {
        std::int64_t out = 0;
        if (__builtin_mul_overflow(s.dummy_input, 2, &out))
          throw bt::forward_error(400, "dummy_input * 2 does not fit in 64 bits");
        s.dummy_output = out;
      },
      route_policy);
  ax.attach<bt::examples::word_stream>(
      word_streamer(std::chrono::milliseconds(cfg.stream_delay_ms)), route_policy);
  // POST /echo (bt/examples/echo_route.hpp: the JSON body back with the verified signer), signed
  // with Epistula v2 or btauth/1 (the Bittensor SDK v11's http_auth), under the miner's policy
  // like the synapses.
  bt::examples::attach_echo_route(ax, {.auth = bt::auth_mode::epistula | bt::auth_mode::btauth,
                                       .blacklist =
                                           [&policy](const bt::request_context& caller) {
                                             return policy.current()->blacklist(caller.hotkey);
                                           },
                                       .priority =
                                           [&policy](const bt::request_context& caller) {
                                             return policy.current()->priority(caller.hotkey);
                                           }});
  if (cfg.test_routes) {
    attach_test_routes(ax);
    log.warn("--test-routes: the Throw, Hang and Big routes are attached (tests only)");
  }
}

}  // namespace bt::miner
