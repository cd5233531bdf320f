#pragma once
/// \file row_range_threads.hpp
/// Whether the next row-range region of the host sweeps (for_each_row_range_on_host_threads) runs on all threads of
/// the space or on the calling thread alone, chosen from what the last regions on all threads cost. Not API.
///
/// Each row range is a parallel region. A second thread saves part of a range's work and costs a wake-up (threads
/// sleep between regions under t3k's OMP_WAIT_POLICY=passive) and a barrier; where other processes hold the cores,
/// the thread a region waits for is often descheduled, and the region takes longer on two threads than its whole
/// work on one (perf/busy_machine.py). Which wins depends on the shapes and on the machine's load at the time, so
/// regions on all threads are timed: their wall time against the CPU time their threads spent in the body. When the
/// best of regions_judged_together regions took above alone_when_wall_exceeds of its work, the next regions run on
/// the calling thread, for a streak that doubles while all threads keep losing (16 up to 1024 regions); then regions
/// on all threads are judged again. The ranges partition the rows on block boundaries and the BLAS runs
/// single-threaded either way, so the choice changes no bit of any result (host_blocks.hpp; SmallKernelTest's
/// row-range tests).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

#if defined(__unix__) || defined(__APPLE__)
#include <time.h>
#endif

namespace t3k::impl {

/// How for_each_row_range_on_host_threads picks its threads: by the timing rule above, or always all of them, or
/// always the calling thread alone (tests compare the two).
enum class RowRangeThreads { automatic, all, alone };

/// The mode in effect (automatic unless a test changed it).
inline std::atomic<RowRangeThreads>& row_range_threads_storage() {
  static std::atomic<RowRangeThreads> mode{RowRangeThreads::automatic};
  return mode;
}
/// Sets the mode and returns the previous one. Not for concurrent use with running sweeps.
inline RowRangeThreads set_row_range_threads(RowRangeThreads mode) {
  return row_range_threads_storage().exchange(mode, std::memory_order_relaxed);
}

/// CPU time of the calling thread in nanoseconds; -1 where the platform has no per-thread clock (then the rule
/// keeps all threads).
inline std::int64_t thread_cpu_nanoseconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return -1;
  return std::int64_t(t.tv_sec) * 1000000000 + std::int64_t(t.tv_nsec);
#else
  return -1;
#endif
}

/// Wall clock in nanoseconds.
inline std::int64_t wall_nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The timing rule's state for one calling thread.
class RowRangeThreadChoice {
 public:
  /// Regions on all threads whose wall time exceeds this fraction of their threads' summed CPU time did not pay for
  /// their threads: a second thread that saves less than a tenth of the time holds a core another process wants.
  static constexpr double alone_when_wall_exceeds = 0.9;
  /// Regions judged together, by the best of them: the first region on all threads after a streak alone pays for
  /// waking threads that went to sleep meanwhile, on any machine.
  static constexpr int regions_judged_together = 4;
  static constexpr int shortest_streak = 16;
  static constexpr int longest_streak = 1024;

  /// Whether the next region runs on the calling thread alone.
  bool next_runs_alone() {
    switch (row_range_threads_storage().load(std::memory_order_relaxed)) {
      case RowRangeThreads::all: return false;
      case RowRangeThreads::alone: return true;
      case RowRangeThreads::automatic: break;
    }
    if (alone_left_ > 0) {
      --alone_left_;
      return true;
    }
    return false;
  }

  /// Records a region on all threads: `wall` from before the region opened to after it closed, `work` the CPU time
  /// its threads spent in the body (both nanoseconds; work <= 0 when unmeasured).
  void record(std::int64_t wall, std::int64_t work) {
    if (work <= 0) return;
    best_ratio_ = std::min(best_ratio_, double(wall) / double(work));
    if (++judged_ < regions_judged_together) return;
    if (best_ratio_ > alone_when_wall_exceeds) {
      alone_left_ = streak_;
      streak_ = std::min(2 * streak_, longest_streak);
    } else {
      streak_ = shortest_streak;
    }
    judged_ = 0;
    best_ratio_ = std::numeric_limits<double>::infinity();
  }

 private:
  int alone_left_ = 0;
  int streak_ = shortest_streak;
  int judged_ = 0;
  double best_ratio_ = std::numeric_limits<double>::infinity();
};

/// The calling thread's choice (a program may run sweeps from several threads of its own).
inline RowRangeThreadChoice& row_range_thread_choice() {
  static thread_local RowRangeThreadChoice choice;
  return choice;
}

}  // namespace t3k::impl
