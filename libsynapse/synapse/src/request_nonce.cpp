#include "bt/request_nonce.hpp"

#include <atomic>
#include <chrono>

namespace bt {

std::int64_t next_request_nonce() noexcept {
  // One counter for the whole process: per-object counters would let two objects signing with
  // the same hotkey in the same nanosecond collide.
  static std::atomic<std::int64_t> last{0};
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  std::int64_t prev = last.load(std::memory_order_relaxed);
  for (;;) {
    const std::int64_t next = now > prev ? now : prev + 1;
    if (last.compare_exchange_weak(prev, next, std::memory_order_relaxed)) return next;
  }
}

}  // namespace bt
