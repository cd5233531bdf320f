#pragma once
/// \file tangent_space_projection.hpp
/// Orthogonal projection of a T3 onto the tangent space at X (docs/math.md): P_X(Y) = Π T*(Y), where T* is the
/// adjoint of v -> T(v) on the full variation space and Π the gauge projection. No dense tensor, no linear solve.

#include "t3k/algorithms/gauge_projection.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {

/// The gauged variation of the orthogonal projection of `y` onto the tangent space at the frame's base point X:
/// T(P_X(Y)) is the Frobenius-nearest tangent tensor to Y (docs/math.md).
///
/// With M_i = U_i UY_i^T and Gm_i = GY_i x_2 M_i, the interface matrices are swept from both ends,
/// PL_{i+1}[b,e] = sum_{a,c,u} PL_i[a,c] L_i[a,u,b] Gm_i[c,u,e] and PR_i[a,c] = sum_{u,b,e} R_i[a,u,b] Gm_i[c,u,e]
/// PR_{i+1}[b,e]; then H~_i = PL_i Gm_i PR_{i+1}^T (bond-wise) and V~_i[o,j] = sum_y (sum PL_i O_i PR_{i+1} GY_i)[o,y]
/// UY_i[y,j]; finally P_X(Y) = Π(V~, H~). Y's boundary bonds may have any rank: PL_0 and PR_d are all-ones rows,
/// which is the same as squashing Y's tails first (docs/math.md).
/// \param space execution space the kernels run on
/// \param frame the frame of X
/// \param y the T3 to project (any Tucker and TT ranks, same mode shapes as X)
/// \return a gauged variation stack of length 1
/// **Blocking:** no. **Throws:** DimensionMismatch when the mode shapes of y and the frame differ.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> project_onto_tangent_space(ExecutionSpace const& space,
                                                            OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                            TuckerTensorTrain<Scalar, MemorySpace> const& y) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  if (y.mode_shapes() != frame.mode_shapes()) {
    throw DimensionMismatch("t3k::project_onto_tangent_space: the T3 has mode shapes " +
                            impl::shape_string(y.mode_shapes()) + ", the frame " +
                            impl::shape_string(frame.mode_shapes()));
  }
  using V2 = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;
  using V3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;
  impl::ProfilingRegion region("t3k::project_onto_tangent_space");
  std::size_t const d = frame.n_modes();
  auto const nu = frame.up_ranks();
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  auto const ny = y.tucker_ranks();
  auto const ry = y.tt_ranks();
  auto out = zero_variation(space, frame, 1);

  // Gm_i[c,u,e] = sum_y GY_i[c,y,e] M_i[u,y] with M_i = U_i UY_i^T.
  std::vector<V3> gm(d);
  for (std::size_t i = 0; i < d; ++i) {
    auto ui = frame.up_tucker(i);
    auto uy = y.tucker_core(i);
    auto gy = y.tt_core(i);
    int const n_u = int(nu[i]), n_y = int(ny[i]), n_j = int(ui.extent(1));
    int const r_c = int(ry[i]), r_e = int(ry[i + 1]);
    auto m = impl::allocate_uninitialized<V2>(space, "t3k::project_onto_tangent_space::tucker_gram", n_u, n_y);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::tucker_gram", {n_u, n_y}, std::size_t(n_j),
        KOKKOS_LAMBDA(int u, int q) {
          Scalar acc = 0;
          for (int j = 0; j < n_j; ++j) acc += ui(u, j) * uy(q, j);
          m(u, q) = acc;
        });
    auto g = impl::allocate_uninitialized<V3>(space, "t3k::project_onto_tangent_space::projected_core", r_c, n_u, r_e);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::projected_core", {r_c, n_u, r_e}, std::size_t(n_y),
        KOKKOS_LAMBDA(int c, int u, int e) {
          Scalar acc = 0;
          for (int q = 0; q < n_y; ++q) acc += gy(c, q, e) * m(u, q);
          g(c, u, e) = acc;
        });
    gm[i] = g;
  }

  // PL_0 = ones (1 x rY_0); PL_{i+1}[b,e] = sum_{a,u} L_i[a,u,b] T[a,u,e], T[a,u,e] = sum_c PL_i[a,c] Gm_i[c,u,e].
  std::vector<V2> pl(d);
  pl[0] = V2(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::project_onto_tangent_space::left"), 1, ry[0]);
  impl::fill_contiguous(space, pl[0], Scalar(1));
  for (std::size_t i = 0; i + 1 < d; ++i) {
    auto p = pl[i];
    auto g = gm[i];
    auto li = frame.left_tt(i);
    int const r_a = int(rl[i]), r_b = int(rl[i + 1]), n_u = int(nu[i]), r_c = int(ry[i]), r_e = int(ry[i + 1]);
    auto tmp = impl::allocate_uninitialized<V3>(space, "t3k::project_onto_tangent_space::left_partial", r_a, n_u, r_e);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::left_partial", {r_a, n_u, r_e}, std::size_t(r_c),
        KOKKOS_LAMBDA(int a, int u, int e) {
          Scalar acc = 0;
          for (int c = 0; c < r_c; ++c) acc += p(a, c) * g(c, u, e);
          tmp(a, u, e) = acc;
        });
    auto next = impl::allocate_uninitialized<V2>(space, "t3k::project_onto_tangent_space::left", r_b, r_e);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::left", {r_b, r_e}, std::size_t(r_a) * std::size_t(n_u),
        KOKKOS_LAMBDA(int b, int e) {
          Scalar acc = 0;
          for (int a = 0; a < r_a; ++a)
            for (int u = 0; u < n_u; ++u) acc += li(a, u, b) * tmp(a, u, e);
          next(b, e) = acc;
        });
    pl[i + 1] = next;
  }

  // PR_d = ones (1 x rY_d); Q_i[c,u,b] = sum_e Gm_i[c,u,e] PR_{i+1}[b,e]; PR_i[a,c] = sum_{u,b} R_i[a,u,b] Q_i[c,u,b].
  std::vector<V2> pr(d + 1);
  pr[d] =
      V2(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::project_onto_tangent_space::right"), 1, ry[d]);
  impl::fill_contiguous(space, pr[d], Scalar(1));
  for (std::size_t i = d; i-- > 0;) {
    auto p = pr[i + 1];
    auto g = gm[i];
    int const r_b = int(rr[i + 1]), n_u = int(nu[i]), r_c = int(ry[i]), r_e = int(ry[i + 1]);
    auto q = impl::allocate_uninitialized<V3>(space, "t3k::project_onto_tangent_space::right_partial", r_c, n_u, r_b);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::right_partial", {r_c, n_u, r_b}, std::size_t(r_e),
        KOKKOS_LAMBDA(int c, int u, int b) {
          Scalar acc = 0;
          for (int e = 0; e < r_e; ++e) acc += g(c, u, e) * p(b, e);
          q(c, u, b) = acc;
        });
    // H~_i[a,u,b] = sum_c PL_i[a,c] Q_i[c,u,b].
    auto left = pl[i];
    auto h = Kokkos::subview(out.tt[i], 0, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    int const r_a = int(rl[i]);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::tt_variation", {r_a, n_u, r_b}, std::size_t(r_c),
        KOKKOS_LAMBDA(int a, int u, int b) {
          Scalar acc = 0;
          for (int c = 0; c < r_c; ++c) acc += left(a, c) * q(c, u, b);
          h(a, u, b) = acc;
        });
    if (i == 0) break;
    auto ri = frame.right_tt(i);
    int const r_a_right = int(rr[i]);
    auto next = impl::allocate_uninitialized<V2>(space, "t3k::project_onto_tangent_space::right", r_a_right, r_c);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::right", {r_a_right, r_c}, std::size_t(n_u) * std::size_t(r_b),
        KOKKOS_LAMBDA(int a, int c) {
          Scalar acc = 0;
          for (int u = 0; u < n_u; ++u)
            for (int b = 0; b < r_b; ++b) acc += ri(a, u, b) * q(c, u, b);
          next(a, c) = acc;
        });
    pr[i] = next;
  }

  // V~_i[o,j] = sum_y W[o,y] UY_i[y,j], W[o,y] = sum_{a,b} O_i[a,o,b] B[a,y,b], B[a,y,b] = sum_c PL_i[a,c] A[c,y,b],
  // A[c,y,b] = sum_e GY_i[c,y,e] PR_{i+1}[b,e].
  for (std::size_t i = 0; i < d; ++i) {
    auto left = pl[i];
    auto right = pr[i + 1];
    auto gy = y.tt_core(i);
    auto uy = y.tucker_core(i);
    auto oi = frame.outer_tt(i);
    int const r_a = int(rl[i]), r_b = int(rr[i + 1]), r_c = int(ry[i]), r_e = int(ry[i + 1]);
    int const n_y = int(ny[i]), n_o = int(oi.extent(1)), n_j = int(uy.extent(1));
    auto a_core =
        impl::allocate_uninitialized<V3>(space, "t3k::project_onto_tangent_space::outer_right", r_c, n_y, r_b);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::outer_right", {r_c, n_y, r_b}, std::size_t(r_e),
        KOKKOS_LAMBDA(int c, int q, int b) {
          Scalar acc = 0;
          for (int e = 0; e < r_e; ++e) acc += gy(c, q, e) * right(b, e);
          a_core(c, q, b) = acc;
        });
    auto b_core = impl::allocate_uninitialized<V3>(space, "t3k::project_onto_tangent_space::outer_left", r_a, n_y, r_b);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::outer_left", {r_a, n_y, r_b}, std::size_t(r_c),
        KOKKOS_LAMBDA(int a, int q, int b) {
          Scalar acc = 0;
          for (int c = 0; c < r_c; ++c) acc += left(a, c) * a_core(c, q, b);
          b_core(a, q, b) = acc;
        });
    auto w = impl::allocate_uninitialized<V2>(space, "t3k::project_onto_tangent_space::outer", n_o, n_y);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::outer", {n_o, n_y}, std::size_t(r_a) * std::size_t(r_b),
        KOKKOS_LAMBDA(int o, int q) {
          Scalar acc = 0;
          for (int a = 0; a < r_a; ++a)
            for (int b = 0; b < r_b; ++b) acc += oi(a, o, b) * b_core(a, q, b);
          w(o, q) = acc;
        });
    auto vt = Kokkos::subview(out.tucker[i], 0, Kokkos::ALL, Kokkos::ALL);
    impl::for_each_index(
        space, "t3k::project_onto_tangent_space::tucker_variation", {n_o, n_j}, std::size_t(n_y),
        KOKKOS_LAMBDA(int o, int j) {
          Scalar acc = 0;
          for (int q = 0; q < n_y; ++q) acc += w(o, q) * uy(q, j);
          vt(o, j) = acc;
        });
  }

  impl::gauge_project_unchecked(space, frame, out);
  return out;
}

}  // namespace t3k
