#pragma once
/// \file kokkos_scope.hpp
/// Kokkos for the lifetime of a scope, as Kokkos::ScopeGuard, with the host thread pool started and stopped on the
/// calling thread's core (impl/thread_placement.hpp says why): on a machine whose cores other work holds, a pool
/// started elsewhere cost a `t3k jtr` of 0.2 s about 20 ms of waiting for a core (perf/busy_machine.py). The `t3k`
/// tool and the Python module start Kokkos with it.

#include "t3k/core/impl/thread_placement.hpp"

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <functional>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace t3k {

/// Whether the host pool's start may be placed: Kokkos' OpenMP backend without hwloc (which binds threads
/// itself), more than one OpenMP thread, and no thread placement asked of the OpenMP runtime.
inline bool host_pool_start_may_be_placed() {
#if defined(KOKKOS_ENABLE_OPENMP) && !defined(KOKKOS_ENABLE_HWLOC)
  if (impl::thread_binding_requested([](char const* name) { return std::getenv(name); })) return false;
  // Asked before the pinning: a runtime that starts on its first call (LLVM's) counts the cores it may use then,
  // and must see the whole mask.
  return omp_get_max_threads() > 1;
#else
  return false;
#endif
}

/// What a KokkosScope does with the host pool's threads once Kokkos has started them.
enum class IdleHostThreads {
  /// They sleep until the next region on more than one thread (Kokkos' own behaviour).
  kept,
  /// The OpenMP runtime is asked to release them (omp_pause_resource_all): GCC's libgomp ends them and starts them
  /// again for the next region on more than one thread (a runtime that only lets them sleep changes nothing); they
  /// are released again before Kokkos stops and after. Linux counts a thread that has just run as busy for
  /// about 100 ms after it sleeps, which costs a short program a share of its core where other processes hold the
  /// cores and its regions all run on one thread (free_cores.hpp): beside two busy processes on two cores, `t3k
  /// jtr` took 0.915-1.051x the time of a one-thread run with the threads ended against 1.081-1.116x with them kept
  /// (perf/busy_machine.py, four runs each). Only where the start is placed (host_pool_start_may_be_placed), and not
  /// for programs that use Kokkos::Random, UniqueToken or ScatterView on the OpenMP space: Kokkos numbers the pool's
  /// threads once, as it starts (its hardware thread ids), and a thread started again has no number. The `t3k` tool
  /// and the Python module end them.
  released,
};

/// Kokkos::initialize(argc, argv) on construction (throwing what it throws) and Kokkos::finalize on destruction,
/// where Kokkos was not initialized before; where it was, nothing (on Kokkos 3 and 4 alike). The host pool's threads
/// start and stop on the calling thread's core and run anywhere its affinity mask allows in between; nothing is
/// placed where host_pool_start_may_be_placed() is false.
class KokkosScope {
 public:
  /// Kokkos::initialize(argc, argv), where Kokkos was not initialized before; `idle` says what then becomes of the
  /// host pool's threads. `start_alongside`, where given, runs right after Kokkos' start (not where Kokkos was
  /// initialized before), while the calling thread is still on its core: the threads that other pools start in it
  /// (a BLAS library's, as it loads) start on that core as the host pool's do, and get the calling thread's mask
  /// back with them. Where it throws, Kokkos is finalized again and the exception propagates.
  KokkosScope(int& argc, char* argv[], IdleHostThreads idle = IdleHostThreads::kept,
              std::function<void()> const& start_alongside = {})
      : owned_(!Kokkos::is_initialized()),
        placement_(owned_ && host_pool_start_may_be_placed()),
        release_idle_(placement_.active() && idle == IdleHostThreads::released) {
    if (!owned_) return;
    try {
      Kokkos::initialize(argc, argv);
    } catch (...) {
      placement_.restore_caller();
      throw;
    }
    try {
      if (start_alongside) start_alongside();
    } catch (...) {
      placement_.release();
      Kokkos::finalize();
      throw;
    }
    placement_.release();
    if (release_idle_) end_idle_host_threads();
  }
  /// Finalizes Kokkos where the constructor initialized it.
  ~KokkosScope() {
    if (!owned_ || !Kokkos::is_initialized()) return;
    // Threads started again since the constructor are not among those gather() places: released, Kokkos' stop
    // starts them anew on the calling thread's core; released after it too, so that none sleeps on while the
    // program ends (a Python interpreter's exit runs on for a while).
    if (release_idle_) end_idle_host_threads();
    placement_.gather();
    Kokkos::finalize();
    if (release_idle_) end_idle_host_threads();
    placement_.restore_caller();
  }
  KokkosScope(KokkosScope const&) = delete;
  KokkosScope& operator=(KokkosScope const&) = delete;

 private:
  static void end_idle_host_threads() {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP) && \
    (_OPENMP >= 201811 || (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9))
    omp_pause_resource_all(omp_pause_soft);  // OpenMP 5.0; GCC's runtime has it from GCC 9 but says 4.5 in _OPENMP
#endif
  }

  bool owned_;
  impl::ThreadPlacement placement_;
  bool release_idle_;
};

}  // namespace t3k
