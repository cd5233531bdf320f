#pragma once
/// \file kernel_lock.hpp
/// Where and how the Python module runs kernels: in Kokkos' default execution space, with the GIL released, one call
/// at a time (Kokkos' host backends do not take concurrent launches from several host threads).

#include <nanobind/nanobind.h>

#include <Kokkos_Core.hpp>

#include <mutex>

namespace t3k_python {

namespace nb = nanobind;

/// Where the module computes: the default execution space of the Kokkos it is built with.
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using Memory = ExecutionSpace::memory_space;

// Recursive: a fit's callback runs on the launching thread with the lock held and may call t3k functions itself.
inline std::recursive_mutex& kernel_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

/// Runs `f` (which must not touch Python objects) holding the kernel lock with the GIL released, in the one order
/// every path takes: a thread that waited for the lock while holding the GIL would deadlock against a fit whose
/// callback holds the lock and waits for the GIL.
template <class F>
void without_gil_locked(F&& f) {
  nb::gil_scoped_release release;
  std::lock_guard<std::recursive_mutex> lock(kernel_mutex());
  f();
}

/// Runs `f` (which must not touch Python objects) with the GIL released, one call at a time, and waits for its
/// kernels: the library's calls are asynchronous, and Python reads the results right after.
template <class F>
void run_kernels(F&& f) {
  without_gil_locked([&] {
    f();
    ExecutionSpace().fence();
  });
}

}  // namespace t3k_python
