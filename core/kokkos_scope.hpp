#pragma once
/// \file kokkos_scope.hpp
/// Kokkos for the lifetime of a scope, as Kokkos::ScopeGuard, with the host thread pool started and stopped on the
/// calling thread's core (impl/thread_placement.hpp says why): on a machine whose cores other work holds, a pool
/// started elsewhere cost a `t3k jtr` of 0.2 s about 20 ms of waiting for a core (perf/busy_machine.py). The `t3k`
/// tool and the Python module start Kokkos with it.

#include "t3k/core/impl/thread_placement.hpp"

#include <Kokkos_Core.hpp>

#include <cstdlib>

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

/// Kokkos::initialize(argc, argv) on construction (throwing what it throws) and Kokkos::finalize on destruction,
/// where Kokkos was not initialized before; where it was, nothing (on Kokkos 3 and 4 alike). The host pool's threads
/// start and stop on the calling thread's core and run anywhere its affinity mask allows in between; nothing is
/// placed where host_pool_start_may_be_placed() is false.
class KokkosScope {
 public:
  /// Kokkos::initialize(argc, argv), where Kokkos was not initialized before.
  KokkosScope(int& argc, char* argv[])
      : owned_(!Kokkos::is_initialized()), placement_(owned_ && host_pool_start_may_be_placed()) {
    if (!owned_) return;
    try {
      Kokkos::initialize(argc, argv);
    } catch (...) {
      placement_.restore_caller();
      throw;
    }
    placement_.release();
  }
  /// Finalizes Kokkos where the constructor initialized it.
  ~KokkosScope() {
    if (!owned_ || !Kokkos::is_initialized()) return;
    placement_.gather();
    Kokkos::finalize();
    placement_.restore_caller();
  }
  KokkosScope(KokkosScope const&) = delete;
  KokkosScope& operator=(KokkosScope const&) = delete;

 private:
  bool owned_;
  impl::ThreadPlacement placement_;
};

}  // namespace t3k
