#pragma once
/// \file ordered_sum.hpp
/// Sums over an index range whose summation order depends on the range alone, so that a host sum may run on the
/// calling thread or on every thread and give the same bits. Not API.
///
/// Kokkos' OpenMP parallel_reduce adds per-thread partial sums: its bits depend on the thread count, and it opens a
/// parallel region however short the sum. The loss of a fit at small ranks is such a sum, evaluated every
/// iteration; where other processes hold the cores the region's wake-up costs more than the sum
/// (perf/busy_machine.py). On synchronous host spaces ordered_sum splits [0, n) into blocks of ordered_sum_block
/// indices, sums each block in index order, then the blocks in block order: inline where the work is below the
/// threshold of small_kernels.hpp, otherwise one block per iteration of a launched loop. Device backends (and host
/// spaces taking the device code paths) reduce with Kokkos::parallel_reduce as before.

#include "t3k/core/impl/small_kernels.hpp"

#include <cstddef>
#include <vector>

namespace t3k {
namespace impl {

/// Indices per block of a host ordered_sum.
constexpr std::size_t ordered_sum_block = 256;

/// sum over i in [0, n) of f's contributions, where f(i, acc) adds index i's term to acc (a Kokkos reduction
/// functor of Value), `work_per_index` units of work each (for runs_inline). On synchronous host spaces the order is
/// fixed by n: the same bits for any thread count, inline or launched. **Blocking:** yes.
template <class Value, class ExecutionSpace, class Index, class Functor>
Value ordered_sum(ExecutionSpace const& space, char const* label, Index n, std::size_t work_per_index,
                  Functor const& f) {
  Value total = 0;
  if (n <= 0) return total;
  // if constexpr: device backends never compile the host loops (their lambdas may be device-only).
  if constexpr (may_run_inline<ExecutionSpace>()) {
    std::size_t const count = std::size_t(n), block = ordered_sum_block;
    std::size_t const n_blocks = (count + block - 1) / block;
    auto const block_sum = [&](std::size_t c) {
      Value acc = 0;
      std::size_t const end = min_of(count, (c + 1) * block);
      for (std::size_t i = c * block; i < end; ++i) f(Index(i), acc);
      return acc;
    };
    if (n_blocks == 1 || runs_inline<ExecutionSpace>(count * (work_per_index > 0 ? work_per_index : 1))) {
      for (std::size_t c = 0; c < n_blocks; ++c) total += block_sum(c);
      return total;
    }
    std::vector<Value> partial(n_blocks);
    Value* const out = partial.data();
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n_blocks),
                         [&](std::size_t c) { out[c] = block_sum(c); });
    for (std::size_t c = 0; c < n_blocks; ++c) total += partial[c];
    return total;
  } else {
    (void)work_per_index;
    // Into a host scalar: returns when the sum is done.
    Kokkos::parallel_reduce(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n), f, total);
    return total;
  }
}

}  // namespace impl
}  // namespace t3k
