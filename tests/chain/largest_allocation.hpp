// largest_allocation(f): runs f and returns the size of the largest single heap allocation made
// (on any thread) while it ran, through the sanitizers' malloc hooks; nullopt in a build without
// AddressSanitizer, where the hook does not exist (the tests then check only the outcome). Used
// to show that a decoder given a hostile element count does not reserve for it.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BT_TEST_HAVE_MALLOC_HOOKS 1
#endif
#endif
#if !defined(BT_TEST_HAVE_MALLOC_HOOKS) && defined(__SANITIZE_ADDRESS__)
#define BT_TEST_HAVE_MALLOC_HOOKS 1
#endif

#ifdef BT_TEST_HAVE_MALLOC_HOOKS
#include <sanitizer/allocator_interface.h>
#endif

namespace bt::test {

namespace detail {
inline std::atomic<std::size_t> largest_seen{0};
inline std::atomic<bool> watching{false};
inline void on_malloc(const volatile void*, std::size_t size) {
  if (!watching.load(std::memory_order_relaxed)) return;
  std::size_t cur = largest_seen.load(std::memory_order_relaxed);
  while (size > cur && !largest_seen.compare_exchange_weak(cur, size)) {
  }
}
inline void on_free(const volatile void*) {}
}  // namespace detail

template <class F>
std::optional<std::size_t> largest_allocation(F&& f) {
#ifdef BT_TEST_HAVE_MALLOC_HOOKS
  static const bool installed =
      __sanitizer_install_malloc_and_free_hooks(detail::on_malloc, detail::on_free) != 0;
  if (installed) {
    detail::largest_seen = 0;
    detail::watching = true;
    try {
      f();
    } catch (...) {
      detail::watching = false;
      throw;
    }
    detail::watching = false;
    return detail::largest_seen.load();
  }
#endif
  f();
  return std::nullopt;
}

}  // namespace bt::test
