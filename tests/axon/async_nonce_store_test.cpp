// A replay store of one's own that answers asynchronously (nonce_store::answers_inline() false),
// completing in each of the ways the contract of bt/nonce_store.hpp allows: inside
// async_record, later on the connection's own event loop (the axon then resumes the request at
// once), and from a thread of the store's own. Every way must serve a fresh request, refuse its
// replay with the store's verdict, and survive a resumed request that calls async_record again
// before the completion returns (two requests pipelined on one connection).
#include <bt/axon.hpp>

#include <bt/examples/dummy.hpp>
#include <bt/json.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "support/dev_keys.hpp"
#include "support/dummy_request.hpp"
#include "support/python_client.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using bt::examples::dummy;

namespace {

enum class completes { inside_the_call, on_the_connection_loop, on_a_thread_of_its_own };

/// memory_nonce_store's decisions, reported through async_record only.
class async_store final : public bt::nonce_store {
 public:
  explicit async_store(completes how) : how_(how) {}
  ~async_store() override {
    std::lock_guard lk(m_);
    for (auto& t : threads_) t.join();
  }

  bool answers_inline() const noexcept override { return false; }

  void async_record(std::string_view hotkey, std::string_view uuid, std::int64_t nonce,
                    std::int64_t now_ns, std::int64_t expires_at_ns,
                    bt::nonce_completion done) noexcept override {
    ++async_calls;
    const bt::nonce_verdict v = inner_.record(hotkey, uuid, nonce, now_ns, expires_at_ns);
    switch (how_) {
      case completes::inside_the_call:
        done(v);
        return;
      case completes::on_the_connection_loop:
        for (auto* loop : loops_) {
          if (loop->get_executor().running_in_this_thread()) {
            boost::asio::post(*loop, [done, v] { done(v); });
            return;
          }
        }
        ++off_loop_calls;  // not expected: the axon calls from its I/O threads
        done(bt::nonce_verdict::unavailable);
        return;
      case completes::on_a_thread_of_its_own: {
        std::lock_guard lk(m_);
        threads_.emplace_back([done, v] { done(v); });
        return;
      }
    }
  }

  bt::nonce_verdict record(std::string_view, std::string_view, std::int64_t, std::int64_t,
                           std::int64_t) noexcept override {
    ++sync_calls;  // the axon must never block an I/O thread here
    return bt::nonce_verdict::unavailable;
  }

  void attach(std::span<boost::asio::io_context* const> loops) override {
    loops_.assign(loops.begin(), loops.end());
  }

  std::atomic<int> async_calls{0}, sync_calls{0}, off_loop_calls{0};

 private:
  completes how_;
  bt::memory_nonce_store inner_{{.rule = bt::nonce_rule::unique}};
  std::vector<boost::asio::io_context*> loops_;  // written by attach() before the loops run
  std::mutex m_;
  std::vector<std::thread> threads_;
};

std::int64_t output_of(const bt::test::reply& r) {
  const auto j = bt::json::parse(r.body, nullptr, false);
  REQUIRE(j.is_object());
  return j.at("dummy_output").get<std::int64_t>();
}

}  // namespace

TEST_CASE("an asynchronous store of one's own: every way of completing serves and refuses",
          "[axon][nonce_store]") {
  const auto how = GENERATE(completes::inside_the_call, completes::on_the_connection_loop,
                            completes::on_a_thread_of_its_own);
  CAPTURE(static_cast<int>(how));
  auto store = std::make_shared<async_store>(how);
  auto opt = bt::axon_options::loopback();
  opt.nonces = store;
  bt::axon ax(bt::test::bob(), std::move(opt));
  ax.attach<dummy>(
      [](dummy& s, const bt::request_context&) { s.dummy_output = s.dummy_input * 2; });
  ax.start();
  const std::uint16_t port = ax.port();

  SECTION("a fresh request is served, its replay refused with the store's verdict") {
    const auto req = bt::test::dummy_request(port, 21);
    const auto first = bt::test::roundtrip(port, req.wire(port));
    CHECK(first.status == 200);
    CHECK(output_of(first) == 42);
    const auto again = bt::test::roundtrip(port, req.wire(port));
    CHECK(again.status == 401);
    CHECK(again.body.find("Nonce was already used") != std::string::npos);
    CHECK(store->async_calls == 2);
  }
  SECTION(
      "two requests pipelined on one connection: the second's record starts from the first's "
      "completion") {
    bt::test::raw_client c(port);
    c.send(bt::test::dummy_request(port, 1).wire(port) +
           bt::test::dummy_request(port, 2).wire(port));
    const auto r1 = c.read();
    const auto r2 = c.read();
    CHECK(r1.status == 200);
    CHECK(r2.status == 200);
    CHECK(output_of(r1) == 2);
    CHECK(output_of(r2) == 4);
    CHECK(store->async_calls == 2);
  }
  ax.stop();
  CHECK(store->sync_calls == 0);
  CHECK(store->off_loop_calls == 0);
}
