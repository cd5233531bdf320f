#pragma once
/// \file kokkos_scope.hpp
/// Kokkos for the lifetime of a `t3k` command, with its host thread pool started and stopped on the main thread's
/// core (thread_placement.hpp says why): on a machine whose cores other work holds, a pool started elsewhere cost
/// a `t3k jtr` of 0.2 s about 20 ms of waiting for a core (perf/busy_machine.py; docs/performance.md).

#include "drivers/thread_placement.hpp"

#include <Kokkos_Core.hpp>

#include <optional>

namespace t3k {
namespace cli {

/// Whether the host pool's start may be placed: Kokkos' OpenMP backend without hwloc (which binds threads
/// itself), more than one OpenMP thread, and no thread placement asked of the OpenMP runtime.
bool host_pool_start_may_be_placed();

/// Kokkos::initialize(argc, argv) on construction (throwing what it throws), Kokkos::finalize on destruction;
/// the host pool's threads start and stop on the calling thread's core and run anywhere its mask allows between.
class KokkosScope {
 public:
  KokkosScope(int& argc, char* argv[]);
  ~KokkosScope();
  KokkosScope(KokkosScope const&) = delete;
  KokkosScope& operator=(KokkosScope const&) = delete;

 private:
  ThreadPlacement placement_;
  std::optional<Kokkos::ScopeGuard> kokkos_;
};

}  // namespace cli
}  // namespace t3k
