#include "drivers/kokkos_scope.hpp"

#include <cstdlib>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace t3k {
namespace cli {

bool host_pool_start_may_be_placed() {
#if defined(KOKKOS_ENABLE_OPENMP) && !defined(KOKKOS_ENABLE_HWLOC)
  if (thread_binding_requested([](char const* name) { return std::getenv(name); })) return false;
  // Asked before the pinning: a runtime that starts on its first call (LLVM's) counts the cores it may use then,
  // and must see the whole mask.
  return omp_get_max_threads() > 1;
#else
  return false;
#endif
}

KokkosScope::KokkosScope(int& argc, char* argv[]) : placement_(host_pool_start_may_be_placed()) {
  try {
    kokkos_.emplace(argc, argv);
  } catch (...) {
    placement_.restore_caller();
    throw;
  }
  placement_.release();
}

KokkosScope::~KokkosScope() {
  placement_.gather();
  kokkos_.reset();
  placement_.restore_caller();
}

}  // namespace cli
}  // namespace t3k
