#pragma once
/// \file t3_variation.hpp
/// Variations (tangent vectors in frame coordinates, docs/math.md), stacked: a batch of n_tangent variations
/// at one frame, or, for per-probe gradients, one variation per probe (the leading axis then runs over
/// tangent-major (t, s) pairs, index t * W + s).

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/orthogonal_frame.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {

/// V_i (stack, nO_i, N_i) and H_i (stack, rL_i, nU_i, rR_{i+1}) for i = 0..d-1.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct T3Variation {
  using scalar_type = Scalar;                                                     ///< float or double
  using memory_space = MemorySpace;                                               ///< where the cores live
  using tucker_type = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;  ///< V_i (stack, nO_i, N_i)
  using tt_type = Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace>;     ///< H_i (stack, rL_i, nU_i, rR_{i+1})

  std::vector<tucker_type> tucker;  ///< V_0..V_{d-1}
  std::vector<tt_type> tt;          ///< H_0..H_{d-1}

  std::size_t n_modes() const { return tt.size(); }  ///< d
  /// Length of the leading (stack) axis.
  std::size_t n_stack() const { return tt.empty() ? 0 : tt[0].extent(0); }
};

/// A zero variation stack of `n_stack` entries with the shapes the frame gives. **Blocking:** no.
template <class Scalar, class ExecutionSpace, class MemorySpace>
T3Variation<Scalar, MemorySpace> zero_variation(ExecutionSpace const& space,
                                                OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                std::size_t n_stack = 1) {
  T3Variation<Scalar, MemorySpace> v;
  auto const big_n = frame.mode_shapes();
  auto const nu = frame.up_ranks();
  auto const no = frame.outer_ranks();
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    v.tucker.emplace_back(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::variation::tucker_" + std::to_string(i)), n_stack,
        no[i], big_n[i]);
    v.tt.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::variation::tt_" + std::to_string(i)),
                      n_stack, rl[i], nu[i], rr[i + 1]);
    // Zeroed through the small-kernel dispatch: Kokkos' own initialization is a launch even for a few entries.
    impl::fill_contiguous(space, v.tucker.back(), Scalar(0));
    impl::fill_contiguous(space, v.tt.back(), Scalar(0));
  }
  return v;
}

namespace impl {
/// Checks a variation stack against a frame; returns the stack length.
template <class Scalar, class MemorySpace>
std::size_t check_variation(std::string const& where, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                            T3Variation<Scalar, MemorySpace> const& v) {
  std::size_t const d = frame.n_modes();
  if (v.tucker.size() != d || v.tt.size() != d) {
    throw DimensionMismatch(concat(where, ": the variation has ", v.tucker.size(), " Tucker and ", v.tt.size(),
                                   " TT cores for a frame with d = ", d));
  }
  std::size_t const n = v.tt[0].extent(0);
  auto const big_n = frame.mode_shapes();
  auto const nu = frame.up_ranks();
  auto const no = frame.outer_ranks();
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  for (std::size_t i = 0; i < d; ++i) {
    check_shape(where, concat("Tucker variation ", i), v.tucker[i], {n, no[i], big_n[i]});
    check_shape(where, concat("TT variation ", i), v.tt[i], {n, rl[i], nu[i], rr[i + 1]});
  }
  return n;
}
}  // namespace impl

}  // namespace t3k
