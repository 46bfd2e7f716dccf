// bt::request_context: who is calling, as the axon verified it, and how long the handler has.
//
// A handler receives it beside the synapse. The synapse's own `dendrite` block is whatever the
// client wrote in the JSON body and is not authenticated (PROTOCOL defect D5); the context is
// taken from the signed headers and the TCP connection, so policy belongs here.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace bt {

struct request_context {
  /// SS58 (format 42) of the caller's hotkey. The signature over
  /// "{nonce}.{hotkey}.{our hotkey}.{uuid}.{body_hash}" was checked against it (on a plain JSON
  /// route: Epistula-Signed-By, whose signature over the body was checked, PROTOCOL 12, or
  /// X-Bittensor-Hotkey, whose btauth/1 signature over the request was checked, PROTOCOL 14),
  /// unless the axon runs with `insecure_skip_verification` (then `verified` is false and this is a
  /// claim). For a request authenticated by its connection's session (a MAC instead of a
  /// signature, PROTOCOL 13) it is the hotkey whose signature opened that session.
  std::string_view hotkey{};
  /// The caller's dendrite instance id (bt_header_dendrite_uuid); on a plain JSON route the
  /// request's Epistula-Uuid (empty under btauth/1, which has none).
  std::string_view uuid{};
  /// The caller's nonce (wall-clock nanoseconds), already accepted by the nonce store; on a plain
  /// JSON route the Epistula-Timestamp in nanoseconds, or the X-Bittensor-Nonce.
  std::int64_t nonce = 0;
  /// Observed TCP peer address (never the client's claimed bt_header_dendrite_ip).
  std::string_view ip{};
  std::uint16_t port = 0;
  /// The synapse (route) name, e.g. "Dummy"; a plain JSON route's path, e.g. "/echo".
  std::string_view synapse_name{};
  bool verified = false;
  /// The scheme that authenticated the request: "bittensor", "session", "epistula" or "btauth"
  /// (auth_mode's names; "session" is bittensor's MAC'd form, PROTOCOL 13).
  std::string_view scheme{};

  /// When the request's own timeout (header `timeout`, capped) runs out. The axon answers 408 at
  /// this moment whether or not the handler has returned; its later result is discarded.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// Set by the axon when the request was answered without the handler (408) or the axon is
  /// shutting down past its drain deadline. Null when the context was built by hand (tests).
  const std::atomic<bool>* cancel_flag = nullptr;

  /// True once the handler's work is no longer wanted. Long handlers should poll this (it is a
  /// relaxed atomic load) and return early; the value they return is then ignored.
  bool cancelled() const noexcept {
    return cancel_flag != nullptr && cancel_flag->load(std::memory_order_relaxed);
  }
  /// cancelled(), or the deadline has passed (the 408 may not have been sent yet).
  bool expired() const noexcept {
    return cancelled() || std::chrono::steady_clock::now() >= deadline;
  }
  /// Time left before the deadline (zero or negative once it passed).
  std::chrono::steady_clock::duration remaining() const noexcept {
    return deadline - std::chrono::steady_clock::now();
  }
};

}  // namespace bt
