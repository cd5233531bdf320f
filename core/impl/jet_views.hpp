#pragma once
/// \file jet_views.hpp
/// Jets as Views: an edge variable of dimension n for a chunk of `rows` probes is a jet array (rows, L, n), L stored
/// Taylor coefficients before the vector axis; a core contracted with a jet gives a jet of matrices (rows, L, P, Q).
/// All are contiguous LayoutRight workspace or cores, reshaped freely through unmanaged Views. Not API.

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace t3k {
namespace impl {

/// Rows [first, first + count) of a chunk: the range_index-th range for_each_row_range_on_host_threads hands out.
struct RowRange {
  std::size_t first = 0, count = 0;
  int range_index = 0;
};

template <class Scalar, class MemorySpace>
using Jet3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Scalar, class MemorySpace>
using Jet4 = Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
/// Rows g of a chunk-sized workspace jet j (chunk rows, L, capacity) as a (g.count, L, width) jet, width <=
/// capacity: the range's rows start at g.first * L * capacity, an offset that no width changes, so that threads at
/// different steps of a sweep (for_each_row_range_on_host_threads) never share entries of a buffer that the steps lay
/// out by their own widths. The whole chunk (g.first = 0) is j's rows as every step lays them out.
template <class Scalar, class MemorySpace>
Jet3<Scalar, MemorySpace> range_rows(Jet3<Scalar, MemorySpace> const& j, RowRange const& g, std::size_t width) {
  return Jet3<Scalar, MemorySpace>(j.data() + g.first * j.extent(1) * j.extent(2), g.count, j.extent(1), width);
}
/// range_rows for a flat buffer holding `row_capacity` entries per chunk row, seen as a (g.count, L, p, q) jet.
template <class Scalar, class MemorySpace>
Jet4<Scalar, MemorySpace> range_rows(Scalar* buffer, std::size_t row_capacity, RowRange const& g, std::size_t l,
                                     std::size_t p, std::size_t q) {
  return Jet4<Scalar, MemorySpace>(buffer + g.first * row_capacity, g.count, l, p, q);
}

/// Multi-index policies over LayoutRight arrays: the last index is the fastest on every backend (Kokkos' default
/// on CUDA/HIP is the first, which would make neighbouring threads touch entries a whole row apart).
template <class ExecutionSpace>
using Policy3 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                      Kokkos::IndexType<int>>;
template <class ExecutionSpace>
using Policy2 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                      Kokkos::IndexType<int>>;

}  // namespace impl
}  // namespace t3k
