// The allocator policy of the long-running tools (bt-axon, bt-ping): glibc keeps freed memory
// at the top of its heaps instead of returning it to the kernel after every large request.
//
// Why: glibc returns a heap's free top to the kernel (madvise(MADV_DONTNEED) or sbrk) once it
// exceeds the trim threshold, 128 KiB by default. A request carrying a 64 KiB field frees that
// field's block when it ends; the block borders its arena's top, so every such request gives
// 64 KiB back and the next one faults the same pages in again (one madvise and 16 page faults of
// 4 KiB per 64 KiB ping; docs/performance.md, "Payloads"). glibc raises its thresholds by itself
// only after freeing an mmap'ed block, which blocks under 128 KiB never are.
//
// What: the threshold glibc's own dynamic rule would reach, fixed from the start: blocks of
// 2 MiB or more are mmap'ed (and go back to the kernel when freed), and a heap's free top is
// trimmed beyond 4 MiB (twice that, as glibc's rule keeps it). The memory this keeps: up to
// 4 MiB of freed memory per malloc arena (glibc makes at most 8 arenas per core), which the
// process reuses for its next allocations. A library does not set this (it is process-wide
// policy); docs/axon.md tells library users how to choose the same.
//
// Configurable: when GLIBC_TUNABLES names any glibc.malloc tunable, the operator chose the
// allocator's policy and it is left as configured.
#pragma once

#include <cstdlib>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace bt::cli {

inline constexpr int heap_mmap_threshold_bytes = 2 << 20;  // 2 MiB
inline constexpr int heap_trim_threshold_bytes = 4 << 20;  // 4 MiB

/// Applies the policy above; call first thing in main(), before any thread starts. Returns true
/// if it was applied (glibc, and no glibc.malloc tunable in the environment).
inline bool keep_freed_heap_memory() noexcept {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos)
    return false;
  // mallopt returns 1 on success; either setting alone also fixes the other at its default.
  return mallopt(M_MMAP_THRESHOLD, heap_mmap_threshold_bytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, heap_trim_threshold_bytes) == 1;
#else
  return false;
#endif
}

}  // namespace bt::cli
