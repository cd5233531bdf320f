#pragma once
/// \file small_kernels.hpp
/// One dispatch point for short range kernels: on synchronous host execution spaces (Serial, OpenMP) a kernel whose
/// work is below a threshold runs as a plain loop on the calling thread, without a Kokkos launch; otherwise it is
/// launched as a parallel_for. Not API.
///
/// Kokkos' OpenMP backend opens a parallel region for every kernel. A fit at small ranks runs thousands of kernels
/// over a few dozen entries (variation axpys, dots, gauge projections, core permutations), each of which costs a
/// region far more than its work: a wake-up per region on an idle machine under OMP_WAIT_POLICY=passive, a time
/// slice when other processes hold the cores. Every iteration of these kernels writes its own outputs, so running
/// them in index order on one thread gives the same bits as any thread count. Device backends, and host spaces
/// taking the device code paths (T3K_DEVICE_CODE_PATHS_ON_HOST), always launch.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/free_cores.hpp"
#include "t3k/core/impl/jet_views.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"

#include <atomic>
#include <cstddef>
#include <type_traits>

namespace t3k {
namespace impl {

/// Work below which a host kernel runs on the calling thread, in units of one multiply-add on one element. Two
/// threads save half the loop and pay a region: they break even at twice the region's cost in loop time, and the
/// threshold sits between the break-even of passive-waiting threads and that of spinning ones (BM_RegionThreshold,
/// an axpy launched and on the calling thread). On a machine whose cores are busy, the region costs more.
constexpr std::size_t default_inline_work_threshold = 32768;

/// The threshold in effect (default_inline_work_threshold unless a test changed it). 0 launches every kernel.
inline std::atomic<std::size_t>& inline_work_threshold_storage() {
  static std::atomic<std::size_t> threshold{default_inline_work_threshold};
  return threshold;
}
inline std::size_t inline_work_threshold() { return inline_work_threshold_storage().load(std::memory_order_relaxed); }
/// Sets the threshold (tests compare results with 0, every kernel launched, against a huge value, none launched)
/// and returns the previous one. Not for concurrent use with running kernels.
inline std::size_t set_inline_work_threshold(std::size_t threshold) {
  return inline_work_threshold_storage().exchange(threshold, std::memory_order_relaxed);
}

/// Whether a kernel on `ExecutionSpace` may run inline: a host space whose kernels complete before the launch
/// returns (Serial, OpenMP), so that a plain loop on the calling thread sees and leaves memory as a launch would.
template <class ExecutionSpace>
constexpr bool may_run_inline() {
  if constexpr (!runs_on_host<ExecutionSpace>()) {
    return false;
  } else {
    bool synchronous = false;
#ifdef KOKKOS_ENABLE_SERIAL
    synchronous = synchronous || std::is_same<ExecutionSpace, Kokkos::Serial>::value;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    synchronous = synchronous || std::is_same<ExecutionSpace, Kokkos::OpenMP>::value;
#endif
    return synchronous;
  }
}

/// Whether a kernel of `work` units (index count x work per index) runs on the calling thread: below the threshold,
/// or where other processes' runnable threads leave this one no second core (free_cores.hpp; not when a test set
/// the threshold to 0 to launch every kernel).
template <class ExecutionSpace>
bool runs_inline(std::size_t work) {
  if constexpr (!may_run_inline<ExecutionSpace>()) {
    return false;
  } else {
    std::size_t const threshold = inline_work_threshold();
    if (work < threshold) return true;
    if (threshold == 0) return false;
    int const pool = int(ExecutionSpace().concurrency());
    return pool <= 1 || free_host_threads(pool) <= 1;
  }
}

/// The rank-4 form of Policy2 / Policy3 (jet_views.hpp): the last index fastest on every backend.
template <class ExecutionSpace>
using Policy4 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<4, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                      Kokkos::IndexType<int>>;

/// f at every index of the extents in row-major order on the calling thread (for_each_index's host loop).
template <std::size_t R, class Functor>
void run_indices_in_order(int const (&extents)[R], Functor const& f) {
  if constexpr (R == 1) {
    for (int i = 0; i < extents[0]; ++i) f(i);
  } else if constexpr (R == 2) {
    for (int i = 0; i < extents[0]; ++i)
      for (int j = 0; j < extents[1]; ++j) f(i, j);
  } else if constexpr (R == 3) {
    for (int i = 0; i < extents[0]; ++i)
      for (int j = 0; j < extents[1]; ++j)
        for (int k = 0; k < extents[2]; ++k) f(i, j, k);
  } else {
    for (int i = 0; i < extents[0]; ++i)
      for (int j = 0; j < extents[1]; ++j)
        for (int k = 0; k < extents[2]; ++k)
          for (int l = 0; l < extents[3]; ++l) f(i, j, k, l);
  }
}

/// f(i0, ..., i{R-1}) for every index of [0, extents[0]) x ... x [0, extents[R-1]) (R = 1 to 4), the last index
/// fastest: in that order on the calling thread where runs_inline says so for the index count times
/// `work_per_index`, otherwise as Kokkos::parallel_for(label, policy, f) with a RangePolicy (R = 1) or a
/// right-iterating MDRangePolicy on `space`. Every index must write its own outputs (no reductions, no atomics).
/// **Blocking:** as a launch on `space` (inline runs are done on return).
template <class ExecutionSpace, std::size_t R, class Functor>
void for_each_index(ExecutionSpace const& space, char const* label, int const (&extents)[R], std::size_t work_per_index,
                    Functor const& f) {
  static_assert(R >= 1 && R <= 4, "t3k::impl::for_each_index: 1 to 4 index ranges");
  std::size_t count = 1;
  for (std::size_t r = 0; r < R; ++r) {
    if (extents[r] <= 0) return;
    count *= std::size_t(extents[r]);
  }
  // if constexpr: device backends never compile the host loop (their lambdas may be device-only).
  if constexpr (may_run_inline<ExecutionSpace>()) {
    if (runs_inline<ExecutionSpace>(count * (work_per_index > 0 ? work_per_index : 1))) {
      run_indices_in_order(extents, f);
      return;
    }
  }
  if constexpr (R == 1) {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, extents[0]), f);
  } else if constexpr (R == 2) {
    Kokkos::parallel_for(label, Policy2<ExecutionSpace>(space, {0, 0}, {extents[0], extents[1]}), f);
  } else if constexpr (R == 3) {
    Kokkos::parallel_for(label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {extents[0], extents[1], extents[2]}), f);
  } else {
    Kokkos::parallel_for(
        label, Policy4<ExecutionSpace>(space, {0, 0, 0, 0}, {extents[0], extents[1], extents[2], extents[3]}), f);
  }
}

/// Sets every entry of the contiguous View `v` to `value`: on the calling thread where runs_inline says so for its
/// size, otherwise Kokkos::deep_copy(space, v, value) (a fill kernel, or a memset for zeros where Kokkos has one).
template <class ExecutionSpace, class View>
void fill_contiguous(ExecutionSpace const& space, View const& v, typename View::const_value_type& value) {
  T3K_DEBUG_ASSERT(v.span_is_contiguous());
  if constexpr (may_run_inline<ExecutionSpace>()) {
    if (runs_inline<ExecutionSpace>(v.size())) {
      auto* const data = v.data();
      for (std::size_t e = 0; e < v.size(); ++e) data[e] = value;
      return;
    }
  }
  Kokkos::deep_copy(space, v, value);
}

}  // namespace impl
}  // namespace t3k
