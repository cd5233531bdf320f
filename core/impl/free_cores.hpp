#pragma once
/// \file free_cores.hpp
/// How many of the machine's cores other processes leave to this one's parallel regions on the host, read from the
/// count of runnable threads that Linux keeps (/proc/loadavg). Not API.
///
/// A region on more threads than the free cores waits at its end for a thread that another process's thread has
/// descheduled: on the 2-core VM of perf/busy_machine.py, beside two busy processes, a fit's regions on two threads
/// cost it more than all their work on one, and a second thread takes a core that other work wants. Timing regions
/// cannot tell in advance, and under load their times are too noisy to judge by, so the host regions take at most
/// the cores that the runnable count leaves free (read at most every free_cores_refresh_ns), and kernels run on the
/// calling thread where that is one. Every caller computes each entry by the same operations on any number of
/// threads (small_kernels.hpp, ordered_sum.hpp, host_blocks.hpp), so no bit of a result depends on the load. Where
/// the count cannot be read, every core counts as free.

#include "t3k/core/impl/clocks.hpp"
#include "t3k/core/impl/process_threads.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace t3k::impl {

/// Runnable threads on the machine now (all processes, this one's running threads included), or -1 where unknown:
/// the number before the '/' in the fourth field of /proc/loadavg.
inline int runnable_threads_now() {
#if defined(__linux__)
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1;
  double load[3];
  int running = -1, total = 0;
  int const read = std::fscanf(f, "%lf %lf %lf %d/%d", &load[0], &load[1], &load[2], &running, &total);
  std::fclose(f);
  return read == 5 && running >= 0 ? running : -1;
#else
  return -1;
#endif
}

/// Online processors of the machine (the runnable count is over all of them), or -1 where unknown.
inline int online_processors() {
#if defined(__linux__)
  long const n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? int(n) : -1;
#else
  return -1;
#endif
}

/// This process's threads that are runnable now (running or waiting for a core), or -1 where unknown. Costs an
/// open and a read per thread, so only read where the machine-wide count suggests that other processes hold cores.
inline int own_runnable_threads() {
  std::vector<int> const ids = process_thread_ids();
  if (ids.empty()) return -1;
  return int(std::count_if(ids.begin(), ids.end(), process_thread_runnable));
}

/// Threads a region may take when `runnable` threads are runnable on a machine of `processors`, `own_runnable` of
/// them this process's: the cores that the other processes' runnable threads leave, at least 1 and at most
/// `threads`. Unknown counts (< 0) leave `threads`.
inline int threads_on_free_cores(int runnable, int processors, int own_runnable, int threads) {
  if (runnable < 0 || processors <= 0 || own_runnable < 0) return threads;
  int const others = std::max(0, runnable - own_runnable);
  return std::clamp(processors - others, 1, std::max(threads, 1));
}

/// How often the runnable count is read again (it costs an open and a read, about 10 us; a region may take 20 us).
constexpr std::int64_t free_cores_refresh_ns = 10000000;

/// The calling thread's last reading of threads_on_free_cores.
class FreeCores {
 public:
  /// Threads a region on a pool of `pool_threads` may take at steady-clock time `now_ns`.
  int threads(std::int64_t now_ns, int pool_threads) {
    if (pool_threads != pool_threads_ || read_at_ns_ < 0 || now_ns - read_at_ns_ >= free_cores_refresh_ns) {
      int const runnable = runnable_threads_now(), processors = online_processors();
      // Counting the calling thread alone first: where even then the pool fits, this process's own threads (a pool
      // thread on its way to sleep, or spinning) need not be counted.
      int own = 1;
      if (runnable >= 0 && threads_on_free_cores(runnable, processors, 1, pool_threads) < pool_threads) {
        own = std::max(1, own_runnable_threads());
      }
      threads_ = threads_on_free_cores(runnable, processors, own, pool_threads);
      pool_threads_ = pool_threads;
      read_at_ns_ = now_ns;
    }
    return threads_;
  }

 private:
  std::int64_t read_at_ns_ = -1;
  int pool_threads_ = 0;
  int threads_ = 0;
};

/// The free cores as a test sets them (0: read the machine's counts).
inline std::atomic<int>& free_cores_override_storage() {
  static std::atomic<int> cores{0};
  return cores;
}
/// Makes free_host_threads answer min(cores, pool) (0 reads the machine again) and returns the previous setting.
/// For tests that compare results on one free core and on all; not for concurrent use with running kernels.
inline int set_free_cores_override(int cores) {
  return free_cores_override_storage().exchange(cores, std::memory_order_relaxed);
}

/// Threads a host region on a pool of `pool_threads` may take now: the calling thread's reading (a program may run
/// kernels from several threads of its own).
inline int free_host_threads(int pool_threads) {
  int const forced = free_cores_override_storage().load(std::memory_order_relaxed);
  if (forced > 0) return std::min(forced, std::max(pool_threads, 1));
  static thread_local FreeCores cores;
  return cores.threads(wall_nanoseconds(), pool_threads);
}

}  // namespace t3k::impl
