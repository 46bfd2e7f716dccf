// The dendrite's signing pool (dendrite_options::signing_threads): threads that make the sr25519
// (or ed25519) signatures of a fan-out's requests, so that a fan-out of N axons signs on every
// core while its I/O stays on the dendrite's loop. A call hands the pool the bytes to sign and
// suspends; a pool thread signs them and resumes the call on the call's own executor.
//
// Thread-safe. stop() drains: every job submitted before it is signed and completed (a call
// waiting for its signature always resumes, so its cancellation and deadline still end it).
#pragma once

#include <bt/keypair.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace bt::detail {

class signing_pool {
 public:
  /// `key` outlives the pool; `threads` >= 1. Completions are posted to `executor` (the
  /// dendrite's), which hands each to its handler's own executor.
  signing_pool(const keypair& key, unsigned threads, boost::asio::any_io_executor executor);
  ~signing_pool();
  signing_pool(const signing_pool&) = delete;
  signing_pool& operator=(const signing_pool&) = delete;

  /// Signs `message` into `out` on a pool thread, then completes `token` (signature void())
  /// on its associated executor. `message` and `out` stay valid until then.
  template <boost::asio::completion_token_for<void()> Token>
  auto async_sign(std::string_view message, signature_bytes& out, Token&& token) {
    return boost::asio::async_initiate<Token, void()>(
        [this, message, &out](auto handler) { submit(message, out, std::move(handler)); }, token);
  }

  /// Signs what is queued, completes it, and joins the threads. Idempotent; not from a pool
  /// thread.
  void stop();

 private:
  struct job {
    std::string_view message;
    signature_bytes* out;
    boost::asio::any_completion_handler<void()> handler;
  };

  void submit(std::string_view message, signature_bytes& out,
              boost::asio::any_completion_handler<void()> handler);
  void run();
  void complete(job j);

  const keypair& key_;
  boost::asio::any_io_executor executor_;
  std::mutex mu_;  // guards queue_, awake_ and stopping_
  std::condition_variable wake_;
  std::deque<job> queue_;
  std::size_t awake_ = 0;  ///< pool threads not waiting for a job
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace bt::detail
