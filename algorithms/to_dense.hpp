#pragma once
/// \file to_dense.hpp
/// Dense tensors and entries of a T3 (for small tensors, tests and users' checks).

#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"

namespace t3k {

/// The dense tensor of `x`, row-major over (N_0, .., N_{d-1}), as a flat View in x's memory space.
/// Built core by core: P_{i+1}[J, j, b] = sum_a P_i[J, a] B_i[a, j, b] with B_i = G_i x_2 U_i^T.
/// **Blocking:** no. **Throws:** InvalidArgument when the tensor has more than 2^31 entries.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Kokkos::View<Scalar*, MemorySpace> to_dense(ExecutionSpace const& space,
                                            TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  auto const shapes = x.mode_shapes();
  auto const n = x.tucker_ranks();
  auto const r = x.tt_ranks();
  std::size_t const total = impl::product(shapes);
  if (total > (std::size_t(1) << 31)) {
    throw InvalidArgument(
        impl::concat("t3k::to_dense: the tensor has ", total, " entries; to_dense is for small tensors"));
  }
  using V1 = Kokkos::View<Scalar*, MemorySpace>;
  // P_0 = ones(r_0): a (1 x r_0) "tensor".
  V1 partial(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::to_dense::partial"), r[0]);
  Kokkos::deep_copy(space, partial, Scalar(1));
  std::size_t leading = 1;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    int const ra = int(r[i]), rb = int(r[i + 1]), nu = int(n[i]), nj = int(shapes[i]);
    auto g = x.tt_core(i);
    auto u = x.tucker_core(i);
    Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace> b(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::to_dense::core_times_tucker"), ra, nj, rb);
    Kokkos::parallel_for(
        "t3k::to_dense::core_times_tucker", impl::Policy3<ExecutionSpace>(space, {0, 0, 0}, {ra, nj, rb}),
        KOKKOS_LAMBDA(int a, int j, int c) {
          Scalar acc = 0;
          for (int q = 0; q < nu; ++q) acc += g(a, q, c) * u(q, j);
          b(a, j, c) = acc;
        });
    V1 next(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::to_dense::partial"),
            leading * std::size_t(nj * rb));
    auto prev = partial;
    Kokkos::parallel_for(
        "t3k::to_dense::sweep", impl::Policy3<ExecutionSpace>(space, {0, 0, 0}, {int(leading), nj, rb}),
        KOKKOS_LAMBDA(int big_j, int j, int c) {
          Scalar acc = 0;
          for (int a = 0; a < ra; ++a) acc += prev(std::size_t(big_j) * ra + a) * b(a, j, c);
          next((std::size_t(big_j) * nj + j) * rb + c) = acc;
        });
    partial = next;
    leading *= std::size_t(nj);
  }
  // Sum the last bond against the all-ones boundary vector.
  int const rd = int(r.back());
  V1 dense(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::to_dense::dense"), total);
  auto last = partial;
  Kokkos::parallel_for(
      "t3k::to_dense::close", Kokkos::RangePolicy<ExecutionSpace>(space, 0, total), KOKKOS_LAMBDA(std::size_t e) {
        Scalar acc = 0;
        for (int c = 0; c < rd; ++c) acc += last(e * rd + c);
        dense(e) = acc;
      });
  return dense;
}

/// Entries X[idx(m, 0), .., idx(m, d-1)] for M index tuples; `indices` is (M, d) with 0 <= idx(m, i) < N_i.
/// **Blocking:** no. **Throws:** DimensionMismatch when indices is not (M x d).
template <class ExecutionSpace, class Scalar, class MemorySpace, class IndexView>
Kokkos::View<Scalar*, MemorySpace> t3_entries(ExecutionSpace const& space,
                                              TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                              IndexView const& indices) {
  static_assert(Kokkos::is_view<IndexView>::value && int(IndexView::rank) == 2,
                "t3k::t3_entries: indices must be a rank-2 View (M, d)");
  static_assert(std::is_integral<typename IndexView::non_const_value_type>::value,
                "t3k::t3_entries: indices must hold integers");
  if (indices.extent(1) != x.n_modes()) {
    throw DimensionMismatch(impl::concat("t3k::t3_entries: indices has shape ",
                                         impl::shape_string(impl::view_shape(indices)), ", expected [M x ", x.n_modes(),
                                         "]"));
  }
  auto const r = x.tt_ranks();
  int const m = int(indices.extent(0));
  int const r_max = int(impl::max_element_or(r, 1));
  using V2 = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;
  V2 cur(Kokkos::view_alloc(space, "t3k::t3_entries::chain"), m, r_max);
  V2 nxt(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::t3_entries::chain"), m, r_max);
  int const r0 = int(r[0]);
  Kokkos::parallel_for(
      "t3k::t3_entries::init", impl::Policy2<ExecutionSpace>(space, {0, 0}, {m, r0}),
      KOKKOS_LAMBDA(int e, int a) { cur(e, a) = Scalar(1); });
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto g = x.tt_core(i);
    auto u = x.tucker_core(i);
    int const ra = int(r[i]), rb = int(r[i + 1]), nu = int(g.extent(1));
    auto in = cur;
    auto out = nxt;
    Kokkos::parallel_for(
        "t3k::t3_entries::sweep", impl::Policy2<ExecutionSpace>(space, {0, 0}, {m, rb}), KOKKOS_LAMBDA(int e, int c) {
          int const j = int(indices(e, i));
          Scalar acc = 0;
          for (int a = 0; a < ra; ++a) {
            Scalar inner = 0;
            for (int q = 0; q < nu; ++q) inner += g(a, q, c) * u(q, j);
            acc += in(e, a) * inner;
          }
          out(e, c) = acc;
        });
    std::swap(cur, nxt);
  }
  Kokkos::View<Scalar*, MemorySpace> values(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::t3_entries"),
                                            m);
  int const rd = int(r.back());
  auto fin = cur;
  Kokkos::parallel_for(
      "t3k::t3_entries::close", Kokkos::RangePolicy<ExecutionSpace>(space, 0, m), KOKKOS_LAMBDA(int e) {
        Scalar acc = 0;
        for (int c = 0; c < rd; ++c) acc += fin(e, c);
        values(e) = acc;
      });
  return values;
}

/// The uniform form of to_dense (through its exact ragged image).
template <class ExecutionSpace, class Scalar, class MemorySpace>
Kokkos::View<Scalar*, MemorySpace> to_dense(ExecutionSpace const& space,
                                            UniformTuckerTensorTrain<Scalar, MemorySpace> const& x) {
  return to_dense(space, to_ragged(space, x));
}

}  // namespace t3k
