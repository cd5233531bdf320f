#pragma once
/// \file row_range_threads.hpp
/// Whether the next row-range region of the host sweeps (for_each_row_range_on_host_threads) runs on all threads of
/// the space or on the calling thread alone, chosen from what the last regions on all threads cost. Not API.
///
/// Each row range is a parallel region. A second thread saves part of a range's work and costs a wake-up (threads
/// sleep between regions under t3k's OMP_WAIT_POLICY=passive) and a barrier. Beside other processes' runnable
/// threads the regions take no more threads than the cores those leave (free_cores.hpp); on the cores that are free,
/// whether a second thread pays depends on the region's size and on the machine, so each call site times its
/// regions. Regions on all threads are judged in groups of regions_judged_together by their summed wall time against
/// the time the same rows took on the calling thread alone (before the site ran alone, against the CPU time their
/// threads spent in the body); a group above alone_when_wall_exceeds of it sends the site's next regions to the
/// calling thread, for a streak that doubles while all threads keep losing (16 up to 1024 regions). Trying all
/// threads costs too: a region whose time alone could not save more than the least overhead a group of regions on
/// all threads has shown in this process (wall time beyond the work divided over the threads) runs alone untried.
/// The ranges partition the rows on block boundaries and the BLAS runs single-threaded either way, so the choice
/// changes no bit of any result (host_blocks.hpp; SmallKernelTest's row-range tests).

#include "t3k/core/impl/clocks.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

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

/// The least overhead of a region on all threads seen in this process, in nanoseconds (-1 until one was timed).
inline std::atomic<std::int64_t>& least_region_overhead_storage() {
  static std::atomic<std::int64_t> least{-1};
  return least;
}

/// The timing rule's state for one call site on one calling thread.
class RowRangeThreadChoice {
 public:
  /// Regions on all threads lose when their wall time exceeds this fraction of the same rows' time alone (or, before
  /// the site ran alone, of their threads' summed CPU time): a second thread that saves less than a tenth of the
  /// time holds a core another process wants.
  static constexpr double alone_when_wall_exceeds = 0.9;
  /// Regions judged together, by their sums: where other processes hold the cores, most regions on all threads
  /// wait for a descheduled thread and a few do not, so the sum, not the best, says what all threads cost.
  static constexpr int regions_judged_together = 4;
  static constexpr int shortest_streak = 16;
  static constexpr int longest_streak = 1024;
  /// Weight of the newest region in the time alone per row (an average over the last few regions).
  static constexpr double alone_weight = 0.25;

  /// `least_overhead`: where the least overhead of regions on all threads is kept (shared by every call site).
  explicit RowRangeThreadChoice(std::atomic<std::int64_t>& least_overhead = least_region_overhead_storage())
      : least_overhead_(&least_overhead) {}

  /// Whether the next region, of `rows` rows on `threads` threads, runs on the calling thread alone.
  bool next_runs_alone(std::size_t rows, int threads) {
    switch (row_range_threads_storage().load(std::memory_order_relaxed)) {
      case RowRangeThreads::all:
        return false;
      case RowRangeThreads::alone:
        return true;
      case RowRangeThreads::automatic:
        break;
    }
    if (alone_left_ > 0) {
      --alone_left_;
      return true;
    }
    std::int64_t const least = least_overhead_->load(std::memory_order_relaxed);
    if (least < 0 || threads < 2 || judged_ > 0) return false;  // unknown, or a group being judged
    if (alone_ns_per_row_ < 0) return true;                     // this site's time alone first
    // At most 1 - 1/threads of the time alone can be saved.
    return alone_ns_per_row_ * double(rows) * (1.0 - 1.0 / threads) <= double(least);
  }

  /// Records a region on the calling thread alone: `wall` nanoseconds over `rows` rows.
  void record_alone(std::int64_t wall, std::size_t rows) {
    if (rows == 0 || wall < 0) return;
    double const per_row = double(wall) / double(rows);
    alone_ns_per_row_ =
        alone_ns_per_row_ < 0 ? per_row : alone_ns_per_row_ + alone_weight * (per_row - alone_ns_per_row_);
  }

  /// Records a region of `rows` rows on `threads` threads: `wall` from before the region opened to after it closed,
  /// `work` the CPU time its threads spent in the body (both nanoseconds; work <= 0 when unmeasured).
  void record(std::int64_t wall, std::int64_t work, int threads, std::size_t rows) {
    if (work <= 0) return;
    group_wall_ += double(wall);
    group_work_ += double(work);
    group_rows_ += double(rows);
    group_overhead_ += std::max(0.0, double(wall) - double(work) / std::max(threads, 1));
    if (++judged_ < regions_judged_together) return;
    auto const overhead = std::int64_t(group_overhead_ / regions_judged_together);
    std::int64_t least = least_overhead_->load(std::memory_order_relaxed);
    while ((least < 0 || overhead < least) &&
           !least_overhead_->compare_exchange_weak(least, overhead, std::memory_order_relaxed)) {
    }
    double const alone = alone_ns_per_row_ < 0 ? group_work_ : alone_ns_per_row_ * group_rows_;
    if (group_wall_ > alone_when_wall_exceeds * alone) {
      alone_left_ = streak_;
      streak_ = std::min(2 * streak_, longest_streak);
    } else {
      streak_ = shortest_streak;
    }
    judged_ = 0;
    group_wall_ = group_work_ = group_rows_ = group_overhead_ = 0;
  }

 private:
  std::atomic<std::int64_t>* least_overhead_;
  int alone_left_ = 0;
  int streak_ = shortest_streak;
  int judged_ = 0;
  double group_wall_ = 0, group_work_ = 0, group_rows_ = 0, group_overhead_ = 0;
  double alone_ns_per_row_ = -1;  // the time alone per row, averaged over the last regions (-1: none yet)
};

/// The choice of call site `Site` (the body's type) on the calling thread (a program may run sweeps from several
/// threads of its own).
template <class Site>
RowRangeThreadChoice& row_range_thread_choice() {
  static thread_local RowRangeThreadChoice choice;
  return choice;
}

}  // namespace t3k::impl
