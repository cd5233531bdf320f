#pragma once
/// \file clocks.hpp
/// The clocks that the host's thread choices read (free_cores.hpp, row_range_threads.hpp). Not API.

#include <chrono>
#include <cstdint>

#if defined(__unix__) || defined(__APPLE__)
#include <time.h>
#endif

namespace t3k::impl {

/// CPU time of the calling thread in nanoseconds; -1 where the platform has no per-thread clock (the row ranges'
/// timing rule then keeps all threads).
inline std::int64_t thread_cpu_nanoseconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return -1;
  return std::int64_t(t.tv_sec) * 1000000000 + std::int64_t(t.tv_nsec);
#else
  return -1;
#endif
}

/// Steady wall clock in nanoseconds.
inline std::int64_t wall_nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace t3k::impl
