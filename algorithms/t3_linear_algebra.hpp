#pragma once
/// \file t3_linear_algebra.hpp
/// Inner product, norm, sum and scaling of T3s without forming dense tensors.

#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/core/impl/ordered_sum.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"

namespace t3k {

/// Frobenius inner product <X, Y> of two T3s of equal mode shapes (any ranks).
/// Sweeps M_{i+1}[b, b'] = sum_{a,a',u,u'} M_i[a, a'] G_i[a,u,b] (U_i UY_i^T)[u,u'] GY_i[a',u',b'], M_0 = ones.
/// **Blocking:** yes (returns a host value). **Throws:** DimensionMismatch when the mode shapes differ.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Scalar inner_product(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                     TuckerTensorTrain<Scalar, MemorySpace> const& y) {
  if (x.mode_shapes() != y.mode_shapes()) {
    throw DimensionMismatch("t3k::inner_product: mode shapes " + impl::shape_string(x.mode_shapes()) + " and " +
                            impl::shape_string(y.mode_shapes()) + " differ");
  }
  using V2 = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;
  using V3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;
  auto const rx = x.tt_ranks();
  auto const ry = y.tt_ranks();
  V2 m(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::inner_product::m"), rx[0], ry[0]);
  impl::fill_contiguous(space, m, Scalar(1));
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto ux = x.tucker_core(i);
    auto uy = y.tucker_core(i);
    auto gx = x.tt_core(i);
    auto gy = y.tt_core(i);
    int const nx = int(ux.extent(0)), ny = int(uy.extent(0)), nj = int(ux.extent(1));
    int const ax = int(rx[i]), ay = int(ry[i]), bx = int(rx[i + 1]), by = int(ry[i + 1]);
    V2 gram(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::inner_product::gram"), nx, ny);
    impl::for_each_index(
        space, "t3k::inner_product::gram", {nx, ny}, std::size_t(nj), KOKKOS_LAMBDA(int p, int q) {
          Scalar acc = 0;
          for (int j = 0; j < nj; ++j) acc += ux(p, j) * uy(q, j);
          gram(p, q) = acc;
        });
    // T[a', u, b'] = sum_{u'} gram[u, u'] GY[a', u', b']
    V3 t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::inner_product::t"), ay, nx, by);
    impl::for_each_index(
        space, "t3k::inner_product::t", {ay, nx, by}, std::size_t(ny), KOKKOS_LAMBDA(int a2, int p, int b2) {
          Scalar acc = 0;
          for (int q = 0; q < ny; ++q) acc += gram(p, q) * gy(a2, q, b2);
          t(a2, p, b2) = acc;
        });
    // Q[a, u, b'] = sum_{a'} M[a, a'] T[a', u, b']
    V3 qv(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::inner_product::q"), ax, nx, by);
    auto mm = m;
    impl::for_each_index(
        space, "t3k::inner_product::q", {ax, nx, by}, std::size_t(ay), KOKKOS_LAMBDA(int a, int p, int b2) {
          Scalar acc = 0;
          for (int a2 = 0; a2 < ay; ++a2) acc += mm(a, a2) * t(a2, p, b2);
          qv(a, p, b2) = acc;
        });
    // M'[b, b'] = sum_{a, u} G[a, u, b] Q[a, u, b']
    V2 next(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::inner_product::m"), bx, by);
    impl::for_each_index(
        space, "t3k::inner_product::m", {bx, by}, std::size_t(ax) * std::size_t(nx), KOKKOS_LAMBDA(int b, int b2) {
          Scalar acc = 0;
          for (int a = 0; a < ax; ++a)
            for (int p = 0; p < nx; ++p) acc += gx(a, p, b) * qv(a, p, b2);
          next(b, b2) = acc;
        });
    m = next;
  }
  int const bx = int(m.extent(0)), by = int(m.extent(1));
  auto mm = m;
  return impl::ordered_sum<Scalar>(
      space, "t3k::inner_product::close", bx * by, 1, KOKKOS_LAMBDA(int e, Scalar& acc) { acc += mm(e / by, e % by); });
}

/// Frobenius norm ||X||. **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Scalar norm(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  Scalar const sq = inner_product(space, x, x);
  return sq > 0 ? std::sqrt(sq) : Scalar(0);
}

/// alpha X as a T3 (the first TT core scaled, the others shared copies). **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> scale(ExecutionSpace const& space,
                                             TuckerTensorTrain<Scalar, MemorySpace> const& x, Scalar alpha) {
  auto y = deep_copy_t3(space, x);
  auto g = y.tt_core(0);
  impl::for_each_index(
      space, "t3k::scale", {int(g.extent(0)), int(g.extent(1)), int(g.extent(2))}, 1,
      KOKKOS_LAMBDA(int a, int u, int b) { g(a, u, b) *= alpha; });
  return y;
}

/// X + Y as a T3 of summed ranks: stacked Tucker cores [U_X; U_Y] and block-diagonal TT cores (boundary bonds too,
/// so that the all-ones boundary vectors pick up both chains). **Blocking:** no.
/// **Throws:** DimensionMismatch when the mode shapes differ.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> add(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                           TuckerTensorTrain<Scalar, MemorySpace> const& y) {
  if (x.mode_shapes() != y.mode_shapes()) {
    throw DimensionMismatch("t3k::add: mode shapes " + impl::shape_string(x.mode_shapes()) + " and " +
                            impl::shape_string(y.mode_shapes()) + " differ");
  }
  auto nx = x.tucker_ranks(), ny = y.tucker_ranks(), rx = x.tt_ranks(), ry = y.tt_ranks();
  std::vector<std::size_t> n(nx.size()), r(rx.size());
  for (std::size_t i = 0; i < n.size(); ++i) n[i] = nx[i] + ny[i];
  for (std::size_t e = 0; e < r.size(); ++e) r[e] = rx[e] + ry[e];
  auto z = zero_t3<Scalar, ExecutionSpace, MemorySpace>(space, x.mode_shapes(), n, r);
  for (std::size_t i = 0; i < n.size(); ++i) {
    using std::make_pair;
    std::size_t const nj = x.mode_shapes()[i];
    Kokkos::deep_copy(space, Kokkos::subview(z.tucker_core(i), make_pair(std::size_t(0), nx[i]), Kokkos::ALL),
                      x.tucker_core(i));
    Kokkos::deep_copy(space, Kokkos::subview(z.tucker_core(i), make_pair(nx[i], n[i]), Kokkos::ALL), y.tucker_core(i));
    (void)nj;
    auto gz = z.tt_core(i);
    auto gx = x.tt_core(i);
    auto gy = y.tt_core(i);
    int const ax = int(rx[i]), bx = int(rx[i + 1]), px = int(nx[i]);
    impl::for_each_index(
        space, "t3k::add::tt", {int(r[i]), int(n[i]), int(r[i + 1])}, 1, KOKKOS_LAMBDA(int a, int u, int b) {
          Scalar v = 0;
          if (a < ax && u < px && b < bx) v = gx(a, u, b);
          if (a >= ax && u >= px && b >= bx) v = gy(a - ax, u - px, b - bx);
          gz(a, u, b) = v;
        });
  }
  return z;
}

}  // namespace t3k
