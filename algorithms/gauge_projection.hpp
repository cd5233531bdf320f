#pragma once
/// \file gauge_projection.hpp
/// The orthogonal gauge projection Π of docs/math.md: it maps any variation onto the gauged subspace
/// (G1) U_i V_i^T = 0 and (G2) L_i^T H_i = 0 for i <= d-2, orthogonally with respect to the corewise inner product.
/// It changes the tangent tensor T(v); on gauged variations T is an isometry.

#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <cstddef>
#include <string>

namespace t3k {

namespace impl {

/// Π applied in place to every stack entry of v, which must fit `frame` (unchecked).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void gauge_project_unchecked(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                             T3Variation<Scalar, MemorySpace> const& v) {
  using V3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;
  std::size_t const d = frame.n_modes();
  int const n = int(v.n_stack());
  if (n == 0) return;
  for (std::size_t i = 0; i < d; ++i) {
    // (G1): V_i <- V_i - (V_i U_i^T) U_i, with W[t,o,u] = sum_j V_i[t,o,j] U_i[u,j].
    auto vi = v.tucker[i];
    auto ui = frame.up_tucker(i);
    int const n_o = int(vi.extent(1)), n_j = int(vi.extent(2)), n_u = int(ui.extent(0));
    V3 w = allocate_uninitialized<V3>(space, "t3k::gauge_project::tucker_coefficients", n, n_o, n_u);
    for_each_index(
        space, "t3k::gauge_project::tucker_coefficients", {n, n_o, n_u}, std::size_t(n_j),
        KOKKOS_LAMBDA(int t, int o, int u) {
          Scalar acc = 0;
          for (int j = 0; j < n_j; ++j) acc += vi(t, o, j) * ui(u, j);
          w(t, o, u) = acc;
        });
    for_each_index(
        space, "t3k::gauge_project::tucker_subtract", {n, n_o, n_j}, std::size_t(n_u),
        KOKKOS_LAMBDA(int t, int o, int j) {
          Scalar acc = 0;
          for (int u = 0; u < n_u; ++u) acc += w(t, o, u) * ui(u, j);
          vi(t, o, j) -= acc;
        });
    if (i + 1 >= d) continue;  // H_{d-1} is free.
    // (G2): M[t,c,b] = sum_{a,u} L_i[a,u,c] H_i[t,a,u,b]; H_i[t,a,u,b] -= sum_c L_i[a,u,c] M[t,c,b].
    auto hi = v.tt[i];
    auto li = frame.left_tt(i);
    int const r_a = int(hi.extent(1)), r_b = int(hi.extent(3)), r_c = int(li.extent(2));
    V3 m = allocate_uninitialized<V3>(space, "t3k::gauge_project::tt_coefficients", n, r_c, r_b);
    for_each_index(
        space, "t3k::gauge_project::tt_coefficients", {n, r_c, r_b}, std::size_t(r_a) * std::size_t(n_u),
        KOKKOS_LAMBDA(int t, int c, int b) {
          Scalar acc = 0;
          for (int a = 0; a < r_a; ++a)
            for (int u = 0; u < n_u; ++u) acc += li(a, u, c) * hi(t, a, u, b);
          m(t, c, b) = acc;
        });
    for_each_index(
        space, "t3k::gauge_project::tt_subtract", {n, r_a * n_u, r_b}, std::size_t(r_c),
        KOKKOS_LAMBDA(int t, int au, int b) {
          int const a = au / n_u, u = au % n_u;
          Scalar acc = 0;
          for (int c = 0; c < r_c; ++c) acc += li(a, u, c) * m(t, c, b);
          hi(t, a, u, b) -= acc;
        });
  }
}

}  // namespace impl

/// Applies the orthogonal gauge projection Π in place to every stack entry of `v` (docs/math.md):
/// V_i <- V_i - (V_i U_i^T) U_i for all i, and H_i <- H_i - L_i (L_i^T H_i) for i <= d-2 (L_i as a (rL_i nU_i) x
/// rL_{i+1} matrix). Π is idempotent and self-adjoint in the corewise inner product.
/// \param space execution space the kernels run on
/// \param frame the frame of the base point
/// \param v variation stack at `frame`, overwritten through its Views
/// **Blocking:** no. **Throws:** DimensionMismatch naming the core and both shapes when v does not fit the frame.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void gauge_project_in_place(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                            T3Variation<Scalar, MemorySpace> const& v) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_variation("t3k::gauge_project_in_place", frame, v);
  impl::gauge_project_unchecked(space, frame, v);
}

/// Π(v) as a new variation stack (v is unchanged); see gauge_project_in_place.
/// \return the gauged copy. **Blocking:** no. **Throws:** DimensionMismatch when v does not fit the frame.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> gauge_project(ExecutionSpace const& space,
                                               OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                               T3Variation<Scalar, MemorySpace> const& v) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_variation("t3k::gauge_project", frame, v);
  auto w = copy_variation(space, v);
  impl::gauge_project_unchecked(space, frame, w);
  return w;
}

}  // namespace t3k
