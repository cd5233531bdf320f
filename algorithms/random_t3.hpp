#pragma once
/// \file random_t3.hpp
/// Seeded random T3s, reproducible across backends.

#include "t3k/core/impl/host_random.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cmath>
#include <cstdint>

namespace t3k {

/// A T3 with i.i.d. normal entries, Tucker cores scaled by 1/sqrt(N_i) and TT cores by 1/sqrt(r_i n_i), so that
/// probes with unit-scale vectors stay of order one for any d.
///
/// The numbers are drawn on the host in a fixed order (Tucker core 0, TT core 0, Tucker core 1, ...) and copied
/// into `MemorySpace`: the same seed gives the same T3 on every backend.
/// **Blocking:** yes. **Throws:** InvalidArgument, DimensionMismatch for bad shape lists.
template <class Scalar, class ExecutionSpace, class MemorySpace = typename ExecutionSpace::memory_space>
TuckerTensorTrain<Scalar, MemorySpace> random_t3(ExecutionSpace const& space,
                                                 std::vector<std::size_t> const& mode_shapes,
                                                 std::vector<std::size_t> const& tucker_ranks,
                                                 std::vector<std::size_t> const& tt_ranks, std::uint64_t seed) {
  impl::check_t3_shape_lists("t3k::random_t3", mode_shapes, tucker_ranks, tt_ranks);
  auto x = zero_t3<Scalar, ExecutionSpace, MemorySpace>(space, mode_shapes, tucker_ranks, tt_ranks);
  impl::HostNormalGenerator gen(seed);
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto u = Kokkos::create_mirror_view(Kokkos::HostSpace{}, x.tucker_core(i));
    auto g = Kokkos::create_mirror_view(Kokkos::HostSpace{}, x.tt_core(i));
    double const su = 1.0 / std::sqrt(double(u.extent(1)));
    double const sg = 1.0 / std::sqrt(double(g.extent(0) * g.extent(1)));
    for (std::size_t a = 0; a < u.extent(0); ++a)
      for (std::size_t j = 0; j < u.extent(1); ++j) u(a, j) = Scalar(su * gen.normal());
    for (std::size_t a = 0; a < g.extent(0); ++a)
      for (std::size_t b = 0; b < g.extent(1); ++b)
        for (std::size_t c = 0; c < g.extent(2); ++c) g(a, b, c) = Scalar(sg * gen.normal());
    Kokkos::deep_copy(space, x.tucker_core(i), u);
    Kokkos::deep_copy(space, x.tt_core(i), g);
  }
  space.fence();
  return x;
}

}  // namespace t3k
