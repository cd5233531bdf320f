#pragma once
/// \file tucker_tensor_train.hpp
/// The Tucker tensor train (T3): Tucker cores U_i (n_i x N_i) composed with TT cores G_i (r_i x n_i x r_{i+1}).
/// docs/math.md. Ranks are ragged (any n_i, r_i); boundary ranks r_0, r_d != 1 are allowed and summed with
/// all-ones boundary vectors.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace t3k {

/// A Tucker tensor train with ragged ranks, holding its cores in Views of `MemorySpace`.
///
/// Cores are LayoutRight: `tucker_core(i)(u, j)` is U_i[u, j] and `tt_core(i)(a, u, b)` is G_i[a, u, b].
/// Copies are shallow (Views are reference counted), like Views themselves.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class TuckerTensorTrain {
  static_assert(std::is_floating_point<Scalar>::value, "t3k::TuckerTensorTrain: Scalar must be float or double");
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "t3k::TuckerTensorTrain: MemorySpace must be a Kokkos memory space");

 public:
  using scalar_type = Scalar;                                                         ///< float or double
  using memory_space = MemorySpace;                                                   ///< where the cores live
  using tucker_core_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;  ///< U_i (n_i, N_i)
  using tt_core_type = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;     ///< G_i (r_i, n_i, r_{i+1})

  TuckerTensorTrain() = default;

  /// Builds a T3 from user cores.
  /// \param tucker_cores d Tucker cores, core i of shape (n_i, N_i)
  /// \param tt_cores d TT cores, core i of shape (r_i, n_i, r_{i+1})
  /// **Throws:** InvalidArgument for d = 0 or a zero extent, DimensionMismatch naming the core index and both shapes
  /// when neighbouring cores disagree.
  TuckerTensorTrain(std::vector<tucker_core_type> tucker_cores, std::vector<tt_core_type> tt_cores)
      : tucker_cores_(std::move(tucker_cores)), tt_cores_(std::move(tt_cores)) {
    validate("t3k::TuckerTensorTrain");
  }

  /// Number of modes d.
  std::size_t n_modes() const { return tt_cores_.size(); }
  tucker_core_type const& tucker_core(std::size_t i) const { return tucker_cores_[i]; }  ///< U_i
  tt_core_type const& tt_core(std::size_t i) const { return tt_cores_[i]; }              ///< G_i
  std::vector<tucker_core_type> const& tucker_cores() const { return tucker_cores_; }    ///< U_0..U_{d-1}
  std::vector<tt_core_type> const& tt_cores() const { return tt_cores_; }                ///< G_0..G_{d-1}

  /// N_0..N_{d-1}.
  std::vector<std::size_t> mode_shapes() const {
    std::vector<std::size_t> s;
    for (auto const& u : tucker_cores_) s.push_back(u.extent(1));
    return s;
  }
  /// n_0..n_{d-1}.
  std::vector<std::size_t> tucker_ranks() const {
    std::vector<std::size_t> s;
    for (auto const& u : tucker_cores_) s.push_back(u.extent(0));
    return s;
  }
  /// r_0..r_d (d + 1 entries).
  std::vector<std::size_t> tt_ranks() const {
    std::vector<std::size_t> s;
    for (auto const& g : tt_cores_) s.push_back(g.extent(0));
    if (!tt_cores_.empty()) s.push_back(tt_cores_.back().extent(2));
    return s;
  }

 private:
  void validate(std::string const& where) const {
    if (tt_cores_.empty()) throw InvalidArgument(where + ": a T3 needs at least one mode (got 0 TT cores)");
    if (tucker_cores_.size() != tt_cores_.size()) {
      throw DimensionMismatch(impl::concat(where, ": got ", tucker_cores_.size(), " Tucker cores and ",
                                           tt_cores_.size(), " TT cores; both must number d"));
    }
    std::size_t const d = tt_cores_.size();
    for (std::size_t i = 0; i < d; ++i) {
      auto const& u = tucker_cores_[i];
      auto const& g = tt_cores_[i];
      if (u.extent(0) == 0 || u.extent(1) == 0) {
        throw InvalidArgument(impl::concat(where, ": Tucker core ", i, " has shape ",
                                           impl::shape_string(impl::view_shape(u)), "; every extent must be >= 1"));
      }
      if (g.extent(0) == 0 || g.extent(1) == 0 || g.extent(2) == 0) {
        throw InvalidArgument(impl::concat(where, ": TT core ", i, " has shape ",
                                           impl::shape_string(impl::view_shape(g)), "; every extent must be >= 1"));
      }
      if (g.extent(1) != u.extent(0)) {
        throw DimensionMismatch(impl::concat(
            where, ": TT core ", i, " has shape ", impl::shape_string(impl::view_shape(g)), ", expected [", g.extent(0),
            " x ", u.extent(0), " x ", g.extent(2), "] (Tucker core ", i, " has ", u.extent(0), " rows)"));
      }
      if (i + 1 < d && g.extent(2) != tt_cores_[i + 1].extent(0)) {
        throw DimensionMismatch(impl::concat(where, ": TT core ", i + 1, " has shape ",
                                             impl::shape_string(impl::view_shape(tt_cores_[i + 1])),
                                             ", expected left rank ", g.extent(2), " (TT core ", i, " has shape ",
                                             impl::shape_string(impl::view_shape(g)), ")"));
      }
    }
  }

  std::vector<tucker_core_type> tucker_cores_;
  std::vector<tt_core_type> tt_cores_;
};

namespace impl {

/// Checks user-given shape lists for a T3: d >= 1, no zero extent, tt_ranks has d + 1 entries.
inline void check_t3_shape_lists(std::string const& where, std::vector<std::size_t> const& mode_shapes,
                                 std::vector<std::size_t> const& tucker_ranks,
                                 std::vector<std::size_t> const& tt_ranks) {
  std::size_t const d = mode_shapes.size();
  if (d == 0) throw InvalidArgument(where + ": mode_shapes is empty; a T3 needs at least one mode");
  if (tucker_ranks.size() != d) {
    throw DimensionMismatch(concat(where, ": tucker_ranks has ", tucker_ranks.size(), " entries, expected d = ", d));
  }
  if (tt_ranks.size() != d + 1) {
    throw DimensionMismatch(concat(where, ": tt_ranks has ", tt_ranks.size(), " entries, expected d + 1 = ", d + 1));
  }
  for (std::size_t i = 0; i < d; ++i) {
    if (mode_shapes[i] == 0) throw InvalidArgument(concat(where, ": mode_shapes[", i, "] is 0; modes must be >= 1"));
    if (tucker_ranks[i] == 0) throw InvalidArgument(concat(where, ": tucker_ranks[", i, "] is 0; ranks must be >= 1"));
  }
  for (std::size_t e = 0; e <= d; ++e) {
    if (tt_ranks[e] == 0) throw InvalidArgument(concat(where, ": tt_ranks[", e, "] is 0; ranks must be >= 1"));
  }
}

}  // namespace impl

/// A zero T3 with the given shapes, allocated in `ExecutionSpace`'s memory space (or `MemorySpace`).
/// **Blocking:** no (initialization is enqueued on `space`). **Throws:** InvalidArgument, DimensionMismatch.
template <class Scalar, class ExecutionSpace, class MemorySpace = typename ExecutionSpace::memory_space>
TuckerTensorTrain<Scalar, MemorySpace> zero_t3(ExecutionSpace const& space, std::vector<std::size_t> const& mode_shapes,
                                               std::vector<std::size_t> const& tucker_ranks,
                                               std::vector<std::size_t> const& tt_ranks) {
  impl::check_t3_shape_lists("t3k::zero_t3", mode_shapes, tucker_ranks, tt_ranks);
  using T3 = TuckerTensorTrain<Scalar, MemorySpace>;
  std::vector<typename T3::tucker_core_type> us;
  std::vector<typename T3::tt_core_type> gs;
  // Zeroed by fill_contiguous: a core of a few dozen entries is then no parallel region (small_kernels.hpp).
  for (std::size_t i = 0; i < mode_shapes.size(); ++i) {
    us.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::t3::tucker_core_" + std::to_string(i)),
                    tucker_ranks[i], mode_shapes[i]);
    gs.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::t3::tt_core_" + std::to_string(i)),
                    tt_ranks[i], tucker_ranks[i], tt_ranks[i + 1]);
    impl::fill_contiguous(space, us.back(), Scalar(0));
    impl::fill_contiguous(space, gs.back(), Scalar(0));
  }
  return T3(std::move(us), std::move(gs));
}

/// A deep copy of `x` (new allocations in the same memory space). **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> deep_copy_t3(ExecutionSpace const& space,
                                                    TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  auto y = zero_t3<Scalar, ExecutionSpace, MemorySpace>(space, x.mode_shapes(), x.tucker_ranks(), x.tt_ranks());
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    Kokkos::deep_copy(space, y.tucker_core(i), x.tucker_core(i));
    Kokkos::deep_copy(space, y.tt_core(i), x.tt_core(i));
  }
  return y;
}

/// Copy of `x` into another memory space (e.g. to the host for I/O). **Blocking:** yes (fences `space`).
template <class DestinationMemorySpace, class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, DestinationMemorySpace> copy_t3_to(ExecutionSpace const& space,
                                                             TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  using T3 = TuckerTensorTrain<Scalar, DestinationMemorySpace>;
  std::vector<typename T3::tucker_core_type> us;
  std::vector<typename T3::tt_core_type> gs;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    typename T3::tucker_core_type u(Kokkos::view_alloc(Kokkos::WithoutInitializing, x.tucker_core(i).label()),
                                    x.tucker_core(i).extent(0), x.tucker_core(i).extent(1));
    typename T3::tt_core_type g(Kokkos::view_alloc(Kokkos::WithoutInitializing, x.tt_core(i).label()),
                                x.tt_core(i).extent(0), x.tt_core(i).extent(1), x.tt_core(i).extent(2));
    Kokkos::deep_copy(space, u, x.tucker_core(i));
    Kokkos::deep_copy(space, g, x.tt_core(i));
    us.push_back(u);
    gs.push_back(g);
  }
  space.fence();
  return T3(std::move(us), std::move(gs));
}

}  // namespace t3k
