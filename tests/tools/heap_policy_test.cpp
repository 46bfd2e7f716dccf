// tools/common/heap_policy.hpp: the allocator policy of bt-axon and bt-ping, checked on glibc's own
// accounting (mallinfo2) of this process's main arena. An executable of its own, because the
// policy is process-wide; not built under the sanitizers, whose allocators replace glibc's.
#include <heap_policy.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>

namespace {

/// Where the blocks escape to, so that the compiler cannot elide a malloc/free pair.
void* volatile escaped = nullptr;

/// A block of `n` bytes, written (so its pages are really in use), then freed; returns what
/// glibc's accounting said while it was live.
struct block_seen {
  std::size_t mmapped_blocks_live;
};

block_seen use_and_free(std::size_t n) {
  void* p = std::malloc(n);
  REQUIRE(p != nullptr);
  std::memset(p, 0x5a, n);
  escaped = p;
  const block_seen seen{mallinfo2().hblks};
  std::free(p);
  return seen;
}

}  // namespace

TEST_CASE("heap policy: a GLIBC_TUNABLES malloc setting is left as the operator chose") {
  REQUIRE(setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=131072", 1) == 0);
  CHECK_FALSE(bt::cli::keep_freed_heap_memory());
  REQUIRE(unsetenv("GLIBC_TUNABLES") == 0);
}

TEST_CASE("heap policy: freed blocks under 2 MiB stay in the heap, larger ones are mmap'ed") {
  REQUIRE(unsetenv("GLIBC_TUNABLES") == 0);
  REQUIRE(bt::cli::keep_freed_heap_memory());

  // 1.5 MiB: with glibc's defaults (mmap threshold 128 KiB) it would be an mmap'ed block, given
  // back to the kernel when freed. Under the policy it comes from the heap, and once freed the
  // heap's top keeps it (it is under the 4 MiB trim threshold) for the next allocation.
  const std::size_t before = mallinfo2().hblks;
  const block_seen mid = use_and_free(1536 * 1024);
  CHECK(mid.mmapped_blocks_live == before);
  CHECK(mallinfo2().keepcost >= 1536 * 1024);

  // Again: the same memory serves it, with no mmap'ed block either.
  const block_seen again = use_and_free(1536 * 1024);
  CHECK(again.mmapped_blocks_live == before);

  // 3 MiB, above the mmap threshold: its own mapping while live, unmapped when freed.
  const block_seen big = use_and_free(3 * 1024 * 1024);
  CHECK(big.mmapped_blocks_live == before + 1);
  CHECK(mallinfo2().hblks == before);

  // What is kept stays bounded by the trim threshold: freeing 6 MiB of heap blocks (each under
  // the mmap threshold, so from the heap) leaves the top trimmed back under 4 MiB plus a page.
  void* a = std::malloc(1900 * 1024);
  void* b = std::malloc(1900 * 1024);
  void* c = std::malloc(1900 * 1024);
  REQUIRE((a && b && c));
  escaped = a;
  escaped = b;
  escaped = c;
  std::memset(a, 1, 1900 * 1024);
  std::memset(b, 1, 1900 * 1024);
  std::memset(c, 1, 1900 * 1024);
  std::free(c);
  std::free(b);
  std::free(a);
  CHECK(mallinfo2().keepcost <= std::size_t{bt::cli::heap_trim_threshold_bytes} + 4096);
}
#else
TEST_CASE("heap policy: not glibc, so nothing is changed") {
  CHECK_FALSE(bt::cli::keep_freed_heap_memory());
}
#endif
