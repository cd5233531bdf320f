#pragma once
/// \file uniform_tucker_tensor_train.hpp
/// The uniform (padded, stacked) form of a T3: all cores stacked into two supercores padded with zeros to the
/// largest ranks, with per-core extents that mark the live block of each core. Zero padding leaves the tensor
/// unchanged, and the conversions to and from the ragged form round-trip exactly (they only copy).

#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

namespace t3k {

/// Stacked supercores: `tucker_supercore()(i, u, j)` = U_i[u, j] for u < n_i, j < N_i, else 0;
/// `tt_supercore()(i, a, u, b)` = G_i[a, u, b] for a < r_i, u < n_i, b < r_{i+1}, else 0.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class UniformTuckerTensorTrain {
 public:
  using scalar_type = Scalar;                                                               ///< float or double
  using memory_space = MemorySpace;                                                         ///< where the cores live
  using tucker_supercore_type = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;  ///< (d, n_max, N_max)
  using tt_supercore_type = Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace>;  ///< (d, r_max, n_max, r_max)

  UniformTuckerTensorTrain() = default;

  /// \param tucker_supercore (d, n_max, N_max)   \param tt_supercore (d, r_max, n_max, r_max)
  /// \param mode_shapes, tucker_ranks the live extents N_i and n_i (d entries each)
  /// \param tt_ranks the live extents r_0..r_d (d + 1 entries)
  /// **Throws:** InvalidArgument / DimensionMismatch when an extent exceeds the supercore or the lists disagree.
  UniformTuckerTensorTrain(tucker_supercore_type tucker_supercore, tt_supercore_type tt_supercore,
                           std::vector<std::size_t> mode_shapes, std::vector<std::size_t> tucker_ranks,
                           std::vector<std::size_t> tt_ranks)
      : tucker_supercore_(tucker_supercore),
        tt_supercore_(tt_supercore),
        mode_shapes_(std::move(mode_shapes)),
        tucker_ranks_(std::move(tucker_ranks)),
        tt_ranks_(std::move(tt_ranks)) {
    std::string const where = "t3k::UniformTuckerTensorTrain";
    impl::check_t3_shape_lists(where, mode_shapes_, tucker_ranks_, tt_ranks_);
    std::size_t const d = mode_shapes_.size();
    std::size_t const n_max = impl::max_element_or(tucker_ranks_, 0);
    std::size_t const big_n_max = impl::max_element_or(mode_shapes_, 0);
    std::size_t const r_max = impl::max_element_or(tt_ranks_, 0);
    if (tucker_supercore_.extent(0) != d || tucker_supercore_.extent(1) < n_max ||
        tucker_supercore_.extent(2) < big_n_max) {
      throw DimensionMismatch(impl::concat(where, ": Tucker supercore has shape ",
                                           impl::shape_string(impl::view_shape(tucker_supercore_)),
                                           ", expected at least [", d, " x ", n_max, " x ", big_n_max, "]"));
    }
    if (tt_supercore_.extent(0) != d || tt_supercore_.extent(1) < r_max || tt_supercore_.extent(2) < n_max ||
        tt_supercore_.extent(3) < r_max) {
      throw DimensionMismatch(impl::concat(where, ": TT supercore has shape ",
                                           impl::shape_string(impl::view_shape(tt_supercore_)), ", expected at least [",
                                           d, " x ", r_max, " x ", n_max, " x ", r_max, "]"));
    }
  }

  std::size_t n_modes() const { return mode_shapes_.size(); }  ///< d
  tucker_supercore_type const& tucker_supercore() const {
    return tucker_supercore_;
  }                                                                        ///< the stacked Tucker cores, zero-padded
  tt_supercore_type const& tt_supercore() const { return tt_supercore_; }  ///< the stacked TT cores, zero-padded
  std::vector<std::size_t> const& mode_shapes() const { return mode_shapes_; }    ///< N_0..N_{d-1}
  std::vector<std::size_t> const& tucker_ranks() const { return tucker_ranks_; }  ///< n_0..n_{d-1}
  std::vector<std::size_t> const& tt_ranks() const { return tt_ranks_; }          ///< r_0..r_d

 private:
  tucker_supercore_type tucker_supercore_;
  tt_supercore_type tt_supercore_;
  std::vector<std::size_t> mode_shapes_;
  std::vector<std::size_t> tucker_ranks_;
  std::vector<std::size_t> tt_ranks_;
};

/// Pads and stacks a ragged T3 into the uniform form. **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
UniformTuckerTensorTrain<Scalar, MemorySpace> to_uniform(ExecutionSpace const& space,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  using U = UniformTuckerTensorTrain<Scalar, MemorySpace>;
  auto const shapes = x.mode_shapes();
  auto const nranks = x.tucker_ranks();
  auto const rranks = x.tt_ranks();
  std::size_t const d = x.n_modes();
  std::size_t const n_max = impl::max_element_or(nranks, 1);
  std::size_t const big_n_max = impl::max_element_or(shapes, 1);
  std::size_t const r_max = impl::max_element_or(rranks, 1);
  typename U::tucker_supercore_type tucker(Kokkos::view_alloc(space, "t3k::uniform::tucker_supercore"), d, n_max,
                                           big_n_max);
  typename U::tt_supercore_type tt(Kokkos::view_alloc(space, "t3k::uniform::tt_supercore"), d, r_max, n_max, r_max);
  for (std::size_t i = 0; i < d; ++i) {
    auto ut = Kokkos::subview(tucker, i, std::make_pair(std::size_t(0), nranks[i]),
                              std::make_pair(std::size_t(0), shapes[i]));
    auto gt = Kokkos::subview(tt, i, std::make_pair(std::size_t(0), rranks[i]),
                              std::make_pair(std::size_t(0), nranks[i]), std::make_pair(std::size_t(0), rranks[i + 1]));
    auto u = x.tucker_core(i);
    auto g = x.tt_core(i);
    // Strided destinations: copy with kernels rather than deep_copy (legal in every space).
    Kokkos::parallel_for(
        "t3k::to_uniform::tucker",
        Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<2>>(space, {0, 0}, {u.extent(0), u.extent(1)}),
        KOKKOS_LAMBDA(std::size_t a, std::size_t j) { ut(a, j) = u(a, j); });
    Kokkos::parallel_for(
        "t3k::to_uniform::tt",
        Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3>>(space, {0, 0, 0},
                                                               {g.extent(0), g.extent(1), g.extent(2)}),
        KOKKOS_LAMBDA(std::size_t a, std::size_t b, std::size_t c) { gt(a, b, c) = g(a, b, c); });
  }
  return U(tucker, tt, shapes, nranks, rranks);
}

/// Cuts the live blocks out of the supercores (exact copies). **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> to_ragged(ExecutionSpace const& space,
                                                 UniformTuckerTensorTrain<Scalar, MemorySpace> const& ux) {
  auto x = zero_t3<Scalar, ExecutionSpace, MemorySpace>(space, ux.mode_shapes(), ux.tucker_ranks(), ux.tt_ranks());
  for (std::size_t i = 0; i < ux.n_modes(); ++i) {
    auto tucker = ux.tucker_supercore();
    auto tt = ux.tt_supercore();
    auto u = x.tucker_core(i);
    auto g = x.tt_core(i);
    Kokkos::parallel_for(
        "t3k::to_ragged::tucker",
        Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<2>>(space, {0, 0}, {u.extent(0), u.extent(1)}),
        KOKKOS_LAMBDA(std::size_t a, std::size_t j) { u(a, j) = tucker(i, a, j); });
    Kokkos::parallel_for(
        "t3k::to_ragged::tt",
        Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3>>(space, {0, 0, 0},
                                                               {g.extent(0), g.extent(1), g.extent(2)}),
        KOKKOS_LAMBDA(std::size_t a, std::size_t b, std::size_t c) { g(a, b, c) = tt(i, a, b, c); });
  }
  return x;
}

}  // namespace t3k
