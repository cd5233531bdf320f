#pragma once
// Orthogonality checks of Tucker factors and TT cores on the host, independent of the library's QR kernels: the
// largest entry of |Gram - I| over the unfolding that must have orthonormal rows.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace t3k_test {

/// max_{p,q} |sum_j U[p, j] U[q, j] - delta_pq| of a matrix that must have orthonormal rows (a Tucker factor).
template <class Matrix>
double row_orthogonality_residual(Matrix const& u) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, u);
  double worst = 0;
  for (std::size_t p = 0; p < h.extent(0); ++p)
    for (std::size_t q = 0; q < h.extent(0); ++q) {
      double acc = 0;
      for (std::size_t j = 0; j < h.extent(1); ++j) acc += double(h(p, j)) * double(h(q, j));
      worst = std::max(worst, std::abs(acc - (p == q ? 1.0 : 0.0)));
    }
  return worst;
}

/// Orthogonality of a 3-way core along `free_axis` (0: right-orthogonal, 1: outer-orthogonal, 2: left-orthogonal):
/// max_{x,x'} |sum over the other two axes of G[..x..] G[..x'..] - delta_xx'|.
template <class Core>
double core_orthogonality_residual(Core const& g, int free_axis) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
  std::size_t const e[3] = {h.extent(0), h.extent(1), h.extent(2)};
  std::size_t const k = e[free_axis];
  double worst = 0;
  for (std::size_t x = 0; x < k; ++x)
    for (std::size_t y = 0; y < k; ++y) {
      double acc = 0;
      for (std::size_t a = 0; a < e[(free_axis + 1) % 3]; ++a)
        for (std::size_t b = 0; b < e[(free_axis + 2) % 3]; ++b) {
          std::size_t ix[3], iy[3];
          ix[free_axis] = x;
          iy[free_axis] = y;
          ix[(free_axis + 1) % 3] = iy[(free_axis + 1) % 3] = a;
          ix[(free_axis + 2) % 3] = iy[(free_axis + 2) % 3] = b;
          acc += double(h(ix[0], ix[1], ix[2])) * double(h(iy[0], iy[1], iy[2]));
        }
      worst = std::max(worst, std::abs(acc - (x == y ? 1.0 : 0.0)));
    }
  return worst;
}

}  // namespace t3k_test
