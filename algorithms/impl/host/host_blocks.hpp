#pragma once
/// \file host_blocks.hpp
/// Whole block products, column slabs of summed products, and row ranges of per-probe steps, spread over the threads
/// of a host execution space.
///
/// The host sweeps do their core contractions as one BLAS product per block of probes (jet_kernels.hpp,
/// apply_matrix). At the ranks the library is built for these products are small (192 x 512 x 32 at the target J^T
/// (BM_JT_Target) shape, a few hundred microseconds), and OpenBLAS runs them hardly faster on two threads than on one
/// (BM_JT_Target on one and two threads; docs/performance.md), so a chunk's
/// products left to the BLAS's own threads keep one thread of the space busy and the others waiting. Handing each
/// thread whole blocks, each multiplied by the single-threaded BLAS, uses them all. Every block's product is the same
/// call on the same shapes, always single-threaded, so its bits do not depend on the thread that ran it, on the number
/// of threads, nor on the chunk (a lone block runs in a parallel region too: see for_each_block_on_host_threads; under
/// a Kokkos Tools library every block runs on the calling thread instead: see spreads_blocks_over_threads).
///
/// Why an OpenMP loop and not a Kokkos kernel: the body calls the BLAS through Kokkos Kernels, which may launch
/// Kokkos work or fence on the same instance; Kokkos 4's OpenMP backend holds a per-instance mutex while a kernel
/// runs, so that would deadlock inside a Kokkos kernel, while from a plain OpenMP loop it runs serially on the calling
/// thread (both Kokkos 3.4 and 4.x run a kernel launched inside an OpenMP parallel region on that thread). BLAS
/// libraries run single-threaded inside an OpenMP parallel region (OpenBLAS's OpenMP build, MKL).

#include "t3k/algorithms/impl/host/row_range_threads.hpp"
#include "t3k/core/impl/jet_views.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP)
#include <omp.h>
#endif

namespace t3k::impl {

/// Whether a Kokkos Tools callback is set that the BLAS calls of the host loops can trigger: Kokkos Kernels pushes a
/// profiling region around each BLAS call (and launches kernels and fences where it has no BLAS). Tools keep one
/// region stack per process and expect these callbacks from one thread at a time. Allocation callbacks (the
/// AllocationTracker of tests and benchmarks) do not count: nothing in the loops allocates.
inline bool tool_watches_kernels() {
  auto const events = Kokkos::Tools::Experimental::get_callbacks();
  return events.push_region != nullptr || events.pop_region != nullptr || events.begin_parallel_for != nullptr ||
         events.begin_parallel_reduce != nullptr || events.begin_parallel_scan != nullptr ||
         events.begin_fence != nullptr;
}

/// Whether for_each_block_on_host_threads spreads blocks over more than one thread on `space`: an OpenMP space with
/// several threads, not already inside a parallel region (of any team size: a row range on the calling thread alone
/// is a region of one thread), and no tool watching kernels (tool_watches_kernels). Under
/// such a tool the blocks run in order on the calling thread, so that every callback comes from it; results then
/// come from the BLAS's own threads: still bitwise invariant to the chunking, possibly other last bits than without
/// the tool, and `auto` chunks sized for one thread.
template <class ExecutionSpace>
bool spreads_blocks_over_threads(ExecutionSpace const& space) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP) && defined(T3K_HAVE_KOKKOSKERNELS)
  if constexpr (std::is_same<ExecutionSpace, Kokkos::OpenMP>::value && runs_on_host<ExecutionSpace>()) {
    return space.concurrency() > 1 && omp_get_level() == 0 && !tool_watches_kernels();
  }
#endif
  (void)space;
  return false;
}

/// Threads for_each_block_on_host_threads runs blocks on for `space` (1 where it runs them in order).
template <class ExecutionSpace>
std::size_t block_threads(ExecutionSpace const& space) {
  return spreads_blocks_over_threads(space) ? std::size_t(space.concurrency()) : 1;
}

/// Runs body(b) for every block b in [0, n_blocks): on an OpenMP space with several threads (and Kokkos Kernels, so
/// that the body's products are BLAS calls rather than Kokkos kernels) each thread takes a contiguous range of
/// blocks; otherwise the blocks run in order on the calling thread. The body must write disjoint data per block.
/// **Blocking:** yes (every block is done on return).
template <class ExecutionSpace, class Body>
void for_each_block_on_host_threads(ExecutionSpace const& space, int n_blocks, Body const& body) {
  if (n_blocks > 0 && spreads_blocks_over_threads(space)) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP)
    // At least two threads even for one block: the BLAS must run single-threaded for every block, because a
    // product it runs on several threads can differ in the last bits from the same product on one (OpenBLAS sgemm
    // does, above its threading threshold), and a block's bits must not depend on how many blocks its chunk has.
    // Beside other processes' runnable threads, no more threads than the cores they leave (free_cores.hpp); the
    // blocks stay the same, so no bit changes.
    int const wanted = int(space.concurrency()) < n_blocks ? int(space.concurrency()) : (n_blocks > 1 ? n_blocks : 2);
    int const threads = n_blocks > 1 ? std::min(wanted, free_host_threads(int(space.concurrency()))) : 1;
    if (threads <= 1) {
#pragma omp parallel num_threads(1)
      {
        omp_set_num_threads(1);  // the BLAS single-threaded, as inside a region of several; ends with the region
        for (int b = 0; b < n_blocks; ++b) body(b);
      }
      return;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < n_blocks; ++b) body(b);
    return;
#endif
  }
  for (int b = 0; b < n_blocks; ++b) body(b);
}

/// Whether the calling thread is inside a row range of for_each_row_range_on_host_threads (set for the range's
/// duration, on that thread only).
inline bool& inside_row_range() {
  static thread_local bool inside = false;
  return inside;
}

/// Runs body(range) over row ranges that partition [0, rows): where for_each_block_on_host_threads spreads work on
/// `space`, one contiguous range of whole blocks of `block_size` rows per thread that runs, all in one parallel
/// region; otherwise body({0, rows, 0}) once on the calling thread (device backends: the body's kernels then cover
/// the whole chunk). For the per-probe stages of the sweeps: a thread carries its own probes through a whole run of
/// steps, each step a kernel or a block product on its rows, instead of every step being a parallel region that all
/// threads enter and leave, which costs a sizable share of two-thread time at the J^T target shape (BM_JT_Target;
/// docs/performance.md). Every range starts on a block, so the block products inside see the same blocks as over the
/// whole chunk, and per-entry kernels compute each entry as before: the bits do not change, however many ranges.
/// The region takes the space's threads (range_index < block_threads(space)) or fewer: the cores other processes
/// leave (free_cores.hpp), or the calling thread alone where the last regions did not pay for their threads
/// (row_range_threads.hpp), the BLAS then told to run single-threaded as it does inside a region of several. Inside a
/// range, Kokkos kernels of the sweep run as plain loops on the calling thread (parallel_for_rows): Kokkos 4's OpenMP
/// backend would serialize concurrent launches on one instance behind a mutex, and both 3.4 and 4.x would run them on
/// the calling thread anyway. The body must write disjoint data per range and must not throw; a buffer that steps of
/// different shapes share must place a range's rows at an offset none of them changes (the threads are at different
/// steps at the same time).
/// **Blocking:** yes.
template <class ExecutionSpace, class Body>
void for_each_row_range_on_host_threads(ExecutionSpace const& space, std::size_t rows, std::size_t block_size,
                                        Body const& body) {
  if (rows == 0) return;
  if (spreads_blocks_over_threads(space)) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP)
    std::size_t const n_blocks = (rows + block_size - 1) / block_size;
    std::size_t const concurrency = std::size_t(space.concurrency());
    RowRangeThreadChoice& choice = row_range_thread_choice<Body>();
    // At least two ranges for a lone block, as for_each_block_on_host_threads (the BLAS must run single-threaded).
    int const all_threads = int(concurrency < n_blocks ? concurrency : (n_blocks > 1 ? n_blocks : 2));
    std::int64_t const start = wall_nanoseconds();
    // Beside other processes' runnable threads, no more threads than the cores they leave (free_cores.hpp).
    int const free_threads = free_host_threads(all_threads);
    bool const alone = free_threads <= 1 || choice.next_runs_alone(rows, free_threads);
    int const threads = alone ? 1 : free_threads;
    std::atomic<std::int64_t> work{0};
    // One range per thread that runs: the calling thread alone takes all rows in one range, so that its block
    // products and kernels run over the whole chunk as on a one-thread space.
    std::size_t const parts = std::size_t(threads);
#pragma omp parallel num_threads(threads)
    {
      // In a region of one thread omp_in_parallel() is false and the BLAS would use the threads it is allowed;
      // this setting ends with the region.
      if (alone) omp_set_num_threads(1);
      std::int64_t const cpu_start = alone ? 0 : thread_cpu_nanoseconds();
      std::size_t const t = std::size_t(omp_get_thread_num()), nt = std::size_t(omp_get_num_threads());
      // This thread's ranges [parts t / nt, parts (t + 1) / nt), in order. Range p: blocks [ceil(n_blocks p /
      // parts), ceil(n_blocks (p + 1) / parts)), so that it never starts before block p (parts <= n_blocks, or a
      // lone block in range 0): probe_pack_slot relies on it.
      for (std::size_t p = parts * t / nt; p < parts * (t + 1) / nt; ++p) {
        std::size_t const first = (n_blocks * p + parts - 1) / parts * block_size;
        std::size_t const last = min_of(rows, (n_blocks * (p + 1) + parts - 1) / parts * block_size);
        if (first < last) {
          inside_row_range() = true;
          body(RowRange{first, last - first, int(p)});
          inside_row_range() = false;
        }
      }
      if (!alone) {
        std::int64_t const cpu_end = thread_cpu_nanoseconds();
        work.fetch_add(cpu_start < 0 || cpu_end < 0 ? -(std::int64_t(1) << 40) : cpu_end - cpu_start,
                       std::memory_order_relaxed);
      }
    }
    if (alone) {
      choice.record_alone(wall_nanoseconds() - start, rows);
    } else {
      choice.record(wall_nanoseconds() - start, work.load(std::memory_order_relaxed), threads, rows);
    }
    return;
#endif
  }
  (void)block_size;  // only the OpenMP ranges need it
  body(RowRange{0, rows, 0});
}

/// Kokkos::parallel_for(label, RangePolicy<ExecutionSpace>(space, 0, n), f) for the host kernels of the sweeps, or,
/// inside a row range of for_each_row_range_on_host_threads, the same loop in order on the calling thread.
template <class ExecutionSpace, class Functor>
void parallel_for_rows(ExecutionSpace const& space, char const* label, int n, Functor const& f) {
  if (inside_row_range()) {
    for (int i = 0; i < n; ++i) f(i);
    return;
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n), f);
}

/// parallel_for_rows for a kernel of `work_per_index` units per index (small_kernels.hpp): also on the calling
/// thread, without a launch, where the whole kernel is too small to pay for a parallel region (runs_inline).
template <class ExecutionSpace, class Functor>
void parallel_for_rows(ExecutionSpace const& space, char const* label, int n, std::size_t work_per_index,
                       Functor const& f) {
  if (runs_inline<ExecutionSpace>(std::size_t(n) * work_per_index)) {
    for (int i = 0; i < n; ++i) f(i);
    return;
  }
  parallel_for_rows(space, label, n, f);
}

/// Narrowest column slab for_each_column_slab_on_host_threads hands a thread, and the multiple its slab edges fall
/// on (a whole number of 64-byte lines of float and double rows).
constexpr std::size_t column_slab_width = 32;

/// Runs body(begin, end) over contiguous column ranges [begin, end) that partition [0, n_cols): one range per thread
/// where for_each_block_on_host_threads spreads work on `space` (edges on multiples of column_slab_width, none
/// narrower), otherwise body(0, n_cols) once on the calling thread. For products whose inner sum must keep its order
/// (a sum over probe blocks accumulated into one matrix): each thread owns whole columns of the result and adds
/// every block's term to them in block order, and the ranges depend only on n_cols and the thread count, never on
/// the data or the chunk, so every entry comes from the same sequence of calls whatever the chunking.
/// **Blocking:** yes.
template <class ExecutionSpace, class Body>
void for_each_column_slab_on_host_threads(ExecutionSpace const& space, std::size_t n_cols, Body const& body) {
  std::size_t const threads = block_threads(space);
  std::size_t const slabs = threads < n_cols / column_slab_width ? threads : n_cols / column_slab_width;
  if (slabs <= 1) {
    body(std::size_t(0), n_cols);
    return;
  }
  auto edge = [&](std::size_t t) {
    return t == slabs ? n_cols : n_cols * t / slabs / column_slab_width * column_slab_width;
  };
  for_each_block_on_host_threads(space, int(slabs),
                                 [&](int t) { body(edge(std::size_t(t)), edge(std::size_t(t) + 1)); });
}

}  // namespace t3k::impl
