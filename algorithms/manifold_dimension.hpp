#pragma once
/// \file manifold_dimension.hpp
/// The dimension of the manifold of T3s of given ranks, unshared or with shared Tucker factors, and the feasible
/// ranks it is counted at (docs/math.md, "The dimension of the model").

#include "t3k/core/error.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {

/// Ranks a T3 of its mode shapes actually has at generic cores.
struct FeasibleRanks {
  std::vector<std::size_t> tucker_ranks;  ///< n_0..n_{d-1}
  std::vector<std::size_t> tt_ranks;      ///< r_0..r_d, with r_0 = r_d = 1
};

namespace impl {

/// Saturating product: past size_t it is larger than any rank it is compared with.
inline std::size_t saturating_product(std::size_t a, std::size_t b) {
  std::size_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? ~std::size_t(0) : out;
}

/// Lowers `n` and `r` (boundary ranks already 1) to a fixed point of the feasibility bounds: a group's Tucker rank
/// n_g <= min(N_g, sum over its modes i of min(N_g, r_i r_{i+1})) (for a one-mode group: min(N_i, r_i r_{i+1})),
/// r_e <= min(r_{e-1} n_{e-1}, n_e r_{e+1}). Every bound only lowers, so the iteration ends.
inline void lower_to_feasible(std::vector<std::size_t> const& big_n,
                              std::vector<std::vector<std::size_t>> const& groups, std::vector<std::size_t>& n,
                              std::vector<std::size_t>& r) {
  std::size_t const d = n.size();
  for (bool changed = true; changed;) {
    changed = false;
    auto lower = [&changed](std::size_t& v, std::size_t cap) {
      if (v > cap) {
        v = cap;
        changed = true;
      }
    };
    for (auto const& group : groups) {
      std::size_t const big = big_n[group.front()];
      std::size_t ceiling = 0;
      for (std::size_t i : group) ceiling += min_of(big, saturating_product(r[i], r[i + 1]));
      for (std::size_t i : group) lower(n[i], min_of(big, ceiling));
    }
    for (std::size_t e = 1; e < d; ++e) {
      lower(r[e], min_of(saturating_product(r[e - 1], n[e - 1]), saturating_product(n[e], r[e + 1])));
    }
  }
}

inline FeasibleRanks feasible_ranks_of(std::string const& where, std::vector<std::size_t> const& mode_shapes,
                                       std::vector<std::size_t> const& tucker_ranks,
                                       std::vector<std::size_t> const& tt_ranks, ModeSharing const& sharing) {
  check_t3_shape_lists(where, mode_shapes, tucker_ranks, tt_ranks);
  if (sharing.mode_shapes() != mode_shapes) {
    throw DimensionMismatch(concat(where, ": mode shapes ", shape_string(mode_shapes), ", the sharing is for ",
                                   shape_string(sharing.mode_shapes())));
  }
  sharing.check_tucker_ranks(tucker_ranks, where);
  FeasibleRanks out{tucker_ranks, tt_ranks};
  // The all-ones boundary vectors squash the boundary bonds without changing the tensor (docs/math.md).
  out.tt_ranks.front() = 1;
  out.tt_ranks.back() = 1;
  lower_to_feasible(mode_shapes, sharing.groups(), out.tucker_ranks, out.tt_ranks);
  return out;
}

inline std::size_t dimension_at_feasible_ranks(std::vector<std::size_t> const& mode_shapes, FeasibleRanks const& f,
                                               ModeSharing const& sharing) {
  auto const& n = f.tucker_ranks;
  auto const& r = f.tt_ranks;
  std::size_t dim = 0;
  // One choice of an n_g-dimensional row space in R^{N_g} per factor (a Grassmannian), whatever the group size.
  for (auto const& group : sharing.groups()) {
    std::size_t const i = group.front();
    dim += n[i] * (mode_shapes[i] - n[i]);
  }
  // The TT cores, less one invertible r_e x r_e change of basis per interior bond (r_e r_{e+1} n_e >= r_e^2 at
  // feasible ranks, so the difference is never negative).
  for (std::size_t i = 0; i < n.size(); ++i) dim += r[i] * n[i] * r[i + 1];
  for (std::size_t e = 1; e + 1 < r.size(); ++e) dim -= r[e] * r[e];
  return dim;
}

}  // namespace impl

/// The ranks that T3s of these shapes have at generic cores: the boundary ranks become 1 (the all-ones boundary
/// vectors sum them out), then every rank is lowered to what its neighbours allow, to a fixed point:
/// n_i <= min(N_i, r_i r_{i+1}), r_e <= min(r_{e-1} n_{e-1}, n_e r_{e+1}). A T3 with ranks above these represents a
/// tensor of (at most) these ranks, and t3_svd capped at them loses nothing.
/// \param mode_shapes N_0..N_{d-1}   \param tucker_ranks n_0..n_{d-1}   \param tt_ranks r_0..r_d
/// \return the feasible ranks   **Throws:** InvalidArgument, DimensionMismatch for bad shape lists.
inline FeasibleRanks feasible_ranks(std::vector<std::size_t> const& mode_shapes,
                                    std::vector<std::size_t> const& tucker_ranks,
                                    std::vector<std::size_t> const& tt_ranks) {
  impl::check_t3_shape_lists("t3k::feasible_ranks", mode_shapes, tucker_ranks, tt_ranks);
  return impl::feasible_ranks_of("t3k::feasible_ranks", mode_shapes, tucker_ranks, tt_ranks,
                                 ModeSharing::unshared(mode_shapes));
}

/// feasible_ranks with shared Tucker factors: a group's rank is bounded by its group ceiling
/// n_g <= min(N_g, sum over its modes i of min(N_g, r_i r_{i+1})), not by each mode's own r_i r_{i+1} (a shared
/// basis serves all modes of the group together, so lowering it at one mode would untie the group).
/// \param mode_shapes N_0..N_{d-1}   \param tucker_ranks n_0..n_{d-1}, equal within every group
/// \param tt_ranks r_0..r_d   \param sharing the groups (for `mode_shapes`)
/// \return the feasible ranks, equal within every group
/// **Throws:** InvalidArgument, DimensionMismatch for bad shape lists, a sharing for other mode shapes, or Tucker
/// ranks that differ within a group.
inline FeasibleRanks feasible_ranks(std::vector<std::size_t> const& mode_shapes,
                                    std::vector<std::size_t> const& tucker_ranks,
                                    std::vector<std::size_t> const& tt_ranks, ModeSharing const& sharing) {
  return impl::feasible_ranks_of("t3k::feasible_ranks", mode_shapes, tucker_ranks, tt_ranks, sharing);
}

/// The dimension of the manifold of T3s of these shapes and ranks: the number of independent directions in which
/// the tensor can move (docs/math.md, "The dimension of the model"). At the feasible ranks (feasible_ranks, which
/// this counts at, so boundary ranks != 1 and ranks above what the shapes allow count what the T3 can actually
/// represent):
///
///     dim = sum_i n_i (N_i - n_i) + sum_i r_i n_i r_{i+1} - sum_{e=1}^{d-1} r_e^2
///
/// (a row space per Tucker factor, the TT cores less a change of basis per interior bond). It is the rank of the
/// map from all core entries to the dense tensor at generic cores of the given ranks, and, at feasible ranks, the
/// number of gauged variations at the frame (docs/math.md, "Tangent vectors and the gauge").
/// \param mode_shapes N_0..N_{d-1}   \param tucker_ranks n_0..n_{d-1}   \param tt_ranks r_0..r_d
/// \return the dimension   **Throws:** InvalidArgument, DimensionMismatch for bad shape lists.
inline std::size_t manifold_dimension(std::vector<std::size_t> const& mode_shapes,
                                      std::vector<std::size_t> const& tucker_ranks,
                                      std::vector<std::size_t> const& tt_ranks) {
  impl::check_t3_shape_lists("t3k::manifold_dimension", mode_shapes, tucker_ranks, tt_ranks);
  auto const sharing = ModeSharing::unshared(mode_shapes);
  auto const f = impl::feasible_ranks_of("t3k::manifold_dimension", mode_shapes, tucker_ranks, tt_ranks, sharing);
  return impl::dimension_at_feasible_ranks(mode_shapes, f, sharing);
}

/// manifold_dimension with shared Tucker factors: the feasible ranks are the shared ones (feasible_ranks with the
/// sharing) and each group's factor is counted once, n_g (N_g - n_g), however many modes use it; the TT cores are
/// never shared and count as without sharing. With a trivial sharing this is the unshared dimension.
/// \param mode_shapes N_0..N_{d-1}   \param tucker_ranks n_0..n_{d-1}, equal within every group
/// \param tt_ranks r_0..r_d   \param sharing the groups
/// \return the dimension
/// **Throws:** as feasible_ranks with a sharing.
inline std::size_t manifold_dimension(std::vector<std::size_t> const& mode_shapes,
                                      std::vector<std::size_t> const& tucker_ranks,
                                      std::vector<std::size_t> const& tt_ranks, ModeSharing const& sharing) {
  auto const f = impl::feasible_ranks_of("t3k::manifold_dimension", mode_shapes, tucker_ranks, tt_ranks, sharing);
  return impl::dimension_at_feasible_ranks(mode_shapes, f, sharing);
}

/// manifold_dimension at the shapes and ranks of `x`. \param x the T3 \return the dimension
/// **Blocking:** no. **Throws:** nothing (a T3's shapes are valid).
template <class Scalar, class MemorySpace>
std::size_t manifold_dimension(TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  return manifold_dimension(x.mode_shapes(), x.tucker_ranks(), x.tt_ranks());
}

/// manifold_dimension at the shapes and ranks of `x` with shared Tucker factors.
/// \param x the T3   \param sharing the groups \return the dimension
/// **Blocking:** no. **Throws:** DimensionMismatch when `x` does not fit the sharing (ModeSharing::check_t3).
template <class Scalar, class MemorySpace>
std::size_t manifold_dimension(TuckerTensorTrain<Scalar, MemorySpace> const& x, ModeSharing const& sharing) {
  sharing.check_t3(x, "t3k::manifold_dimension");
  return manifold_dimension(x.mode_shapes(), x.tucker_ranks(), x.tt_ranks(), sharing);
}

}  // namespace t3k
