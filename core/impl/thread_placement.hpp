#pragma once
/// \file thread_placement.hpp
/// Where the threads that a library starts run while it starts them and stops them (t3k/core/kokkos_scope.hpp:
/// Kokkos' OpenMP pool). Linux CPU affinity masks; elsewhere nothing is moved. Not API.
///
/// Why: Linux counts a new thread as fully busy until its load history decays (a half-life of about 32 ms), and
/// where processes of other sessions share the cores (autogroups, cgroups) a process's weight on each core follows
/// its threads' load there. A pool thread started on another core than the main thread, which then sleeps because
/// the machine is busy, takes up to half of the weight of the core where the main thread works, for about 100 ms;
/// and each start and stop region waits for that thread to get a core beside other work. Started on the main
/// thread's core, its load sits where the main thread runs and it gets the core whenever the main thread waits.

#include "t3k/core/impl/process_threads.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace t3k::impl {

/// Whether `value` is "false" in any case, as OpenMP runtimes read OMP_PROC_BIND (strings.h's strcasecmp is not on
/// every platform).
inline bool is_false_in_any_case(char const* value) {
  char const* const word = "false";
  if (std::strlen(value) != std::strlen(word)) return false;
  for (std::size_t i = 0; word[i] != '\0'; ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != word[i]) return false;
  }
  return true;
}

/// Whether the user asked the OpenMP runtime to place threads (OMP_PROC_BIND other than "false", OMP_PLACES,
/// GOMP_CPU_AFFINITY, KMP_AFFINITY): then their placement is theirs alone. `lookup(name)` returns a variable's
/// value, or nullptr where it is unset (std::getenv).
template <class Lookup>
bool thread_binding_requested(Lookup const& lookup) {
  char const* const bind = lookup("OMP_PROC_BIND");
  if (bind != nullptr && !is_false_in_any_case(bind)) return true;  // the runtime reads it in any case
  for (char const* name : {"OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"}) {
    if (lookup(name) != nullptr) return true;
  }
  return false;
}

/// Pins the calling thread to the core it runs on while threads are started (they inherit its mask), then gives
/// it and them the calling thread's mask back; before they stop, gathers them on the calling thread's core again.
/// Does nothing where not `enabled`, where the calling thread may run on one core only, or off Linux. A thread
/// that ended meanwhile is skipped; a mask that cannot be set is left as it is (placement is no matter of
/// correctness).
class ThreadPlacement {
 public:
  explicit ThreadPlacement(bool enabled) {
#if defined(__linux__)
    if (!enabled || ::sched_getaffinity(0, sizeof mask_, &mask_) != 0 || CPU_COUNT(&mask_) < 2) return;
    int const core = ::sched_getcpu();
    if (core < 0 || core >= CPU_SETSIZE) return;
    before_ = process_thread_ids();
    active_ = pin_to(0, core);
#else
    (void)enabled;
#endif
  }

  /// The calling thread and the threads started since the constructor get the calling thread's first mask back.
  void release() {
    if (!active_) return;
#if defined(__linux__)
    started_.clear();
    for (int const id : process_thread_ids()) {
      if (std::find(before_.begin(), before_.end(), id) == before_.end()) started_.push_back(id);
    }
    for (int const id : started_) set_mask(id, mask_);
    set_mask(0, mask_);
#endif
  }

  /// The calling thread and the threads that release() gave their mask back run on the calling thread's core.
  void gather() {
    if (!active_) return;
#if defined(__linux__)
    int const core = ::sched_getcpu();
    if (core < 0 || core >= CPU_SETSIZE || !pin_to(0, core)) return;
    for (int const id : started_) pin_to(id, core);
#endif
  }

  /// The calling thread gets its first mask back (after gather(), once the threads stopped).
  void restore_caller() {
    if (!active_) return;
#if defined(__linux__)
    set_mask(0, mask_);
#endif
  }

  /// Whether the constructor pinned the calling thread.
  bool active() const { return active_; }
  /// The threads that release() found started since the constructor.
  std::vector<int> const& started_threads() const { return started_; }

 private:
#if defined(__linux__)
  static bool set_mask(int thread, cpu_set_t const& mask) {
    return ::sched_setaffinity(thread, sizeof mask, &mask) == 0;
  }
  static bool pin_to(int thread, int core) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    return set_mask(thread, one);
  }
  cpu_set_t mask_{};
#endif
  bool active_ = false;
  std::vector<int> before_, started_;
};

}  // namespace t3k::impl
