#pragma once
/// \file tie_variation.hpp
/// The tangent space of a shared model (docs/math.md, "Shared Tucker factors"): the orthogonal projection of gauged
/// variations at the frame of a tied T3 onto the variations whose Tucker parts move every group's factor by one
/// common direction.
///
/// The groups are few and their blocks small (nO_i x N_g per mode), so the projection runs on the host with LAPACK:
/// on the variation's own arrays where they are host memory, else on host copies that are copied back.

#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace t3k {

namespace impl {

/// `view` readable on the host after `space`'s work: `view` itself where its memory is host-accessible, else a new
/// host copy. No allocation is initialized on the host path: an initialization is a parallel region, and under a
/// sleeping wait policy every region wakes the threads (a fit ties several variations per iteration).
template <class ExecutionSpace, class View>
auto tie_host_view(ExecutionSpace const& space, View const& view) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible) {
    space.fence();
    return view;
  } else {
    Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight, Kokkos::HostSpace> h(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::tie_variation::host"), view.layout());
    Kokkos::deep_copy(space, h, view);
    space.fence();
    return h;
  }
}

/// Checks that `frame` is the frame of a T3 that can carry `sharing` with tied factors: the mode shapes are the
/// sharing's and, unless the sharing is trivial, the centre factors S_i are known, and within every group the up
/// factors U_i have one shape and agree to rounding (the frame of a tied T3 has equal U_i: they come from the same QR).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void check_tied_frame(ExecutionSpace const& space, std::string const& where,
                      OrthogonalFrame<Scalar, MemorySpace> const& frame, ModeSharing const& sharing) {
  if (frame.mode_shapes() != sharing.mode_shapes()) {
    throw DimensionMismatch(concat(where, ": the frame has mode shapes ", shape_string(frame.mode_shapes()),
                                   ", the sharing is for ", shape_string(sharing.mode_shapes())));
  }
  if (sharing.is_trivial()) return;
  if (!frame.has_centre()) {
    throw InvalidArgument(where +
                          ": the frame has no centre factors S_i; build it with t3k::orthogonal_frame from the T3");
  }
  auto const nu = frame.up_ranks();
  Scalar const tol = Scalar(1000) * std::numeric_limits<Scalar>::epsilon();
  for (auto const& group : sharing.groups()) {
    std::size_t const first = group.front();
    if (group.size() < 2) continue;
    auto const u0 = tie_host_view(space, frame.up_tucker(first));
    for (std::size_t i : group) {
      if (nu[i] != nu[first]) {
        throw DimensionMismatch(concat(where, ": modes ", first, " and ", i, " share a factor but the frame has ranks ",
                                       nu[first], " and ", nu[i], "; build the frame from a T3 with tied factors"));
      }
      if (i == first) continue;
      auto const ui = tie_host_view(space, frame.up_tucker(i));
      for (std::size_t e = 0; e < ui.span(); ++e) {
        if (!(std::abs(ui.data()[e] - u0.data()[e]) <= tol)) {
          throw InvalidArgument(concat(where, ": modes ", first, " and ", i,
                                       " share a factor but the frame's up factors differ; build the frame from a T3 "
                                       "with tied factors (t3k::tie_tucker_factors, t3k::grouped_t3_svd)"));
        }
      }
    }
  }
}

/// The projection applied in place to the Tucker variations of every group of two or more modes (unchecked).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void tie_variation_unchecked(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                             ModeSharing const& sharing, T3Variation<Scalar, MemorySpace> const& v) {
  std::size_t const n_stack = v.n_stack();
  if (n_stack == 0) return;
  using HostTucker = decltype(tie_host_view(space, v.tucker[0]));
  for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
    auto const& group = sharing.groups()[g];
    if (group.size() < 2) continue;  // one mode: the tie asks nothing
    int const n_u = int(frame.up_ranks()[group.front()]);
    int const n_j = int(sharing.group_shape(g));
    auto const u = tie_host_view(space, frame.up_tucker(group.front()));
    // The stacked centre factors A = [S_i; ...] (m x nU, m = sum of nO_i over the group) and their column space.
    std::vector<int> offset{0};
    for (std::size_t i : group) offset.push_back(offset.back() + int(frame.centre_tucker(i).extent(0)));
    int const m = offset.back();
    std::vector<HostTucker> hv;
    for (std::size_t i : group) hv.push_back(tie_host_view(space, v.tucker[i]));
    if (m == 0 || n_u == 0) {
      for (std::size_t k = 0; k < group.size(); ++k) Kokkos::deep_copy(hv[k], Scalar(0));
    } else {
      std::vector<Scalar> a(std::size_t(m) * std::size_t(n_u));
      for (std::size_t k = 0; k < group.size(); ++k) {
        auto const s = tie_host_view(space, frame.centre_tucker(group[k]));
        for (int o = 0; o < int(s.extent(0)); ++o)
          for (int q = 0; q < n_u; ++q) a[std::size_t(offset[k] + o) * n_u + q] = s(o, q);
      }
      std::vector<Scalar> p, sigma, qt;
      int const kk = host_thin_svd(m, n_u, a.data(), p, sigma, qt);
      // The numerical rank, with the threshold of a pseudo-inverse: directions of the factor that no mode of the group
      // uses do not change the tensor.
      Scalar const cut = Scalar(std::max(m, n_u)) * std::numeric_limits<Scalar>::epsilon() * sigma[0];
      int rank = 0;
      while (rank < kk && sigma[std::size_t(rank)] > cut) ++rank;
      std::vector<Scalar> w(std::size_t(m) * std::size_t(n_j));
      std::vector<Scalar> c(std::size_t(rank) * std::size_t(n_j));
      std::vector<Scalar> z(static_cast<std::size_t>(n_u));
      for (std::size_t t = 0; t < n_stack; ++t) {
        // W = [V_i; ...] (I - U^T U): the gauge (G1) for the common direction.
        for (std::size_t k = 0; k < group.size(); ++k) {
          auto const& vi = hv[k];
          for (int o = 0; o < offset[k + 1] - offset[k]; ++o) {
            for (int q = 0; q < n_u; ++q) {
              Scalar acc = 0;
              for (int j = 0; j < n_j; ++j) acc += vi(t, o, j) * u(q, j);
              z[std::size_t(q)] = acc;
            }
            Scalar* row = &w[std::size_t(offset[k] + o) * n_j];
            for (int j = 0; j < n_j; ++j) {
              Scalar acc = vi(t, o, j);
              for (int q = 0; q < n_u; ++q) acc -= z[std::size_t(q)] * u(q, j);
              row[j] = acc;
            }
          }
        }
        // [V_i; ...] <- P_r P_r^T W, P_r the leading `rank` left singular vectors of A.
        std::fill(c.begin(), c.end(), Scalar(0));
        for (int r = 0; r < m; ++r)
          for (int s = 0; s < rank; ++s) {
            Scalar const prs = p[std::size_t(r) * kk + s];
            for (int j = 0; j < n_j; ++j) c[std::size_t(s) * n_j + j] += prs * w[std::size_t(r) * n_j + j];
          }
        for (std::size_t k = 0; k < group.size(); ++k) {
          auto const& vi = hv[k];
          for (int o = 0; o < offset[k + 1] - offset[k]; ++o) {
            int const r = offset[k] + o;
            for (int j = 0; j < n_j; ++j) {
              Scalar acc = 0;
              for (int s = 0; s < rank; ++s) acc += p[std::size_t(r) * kk + s] * c[std::size_t(s) * n_j + j];
              vi(t, o, j) = acc;
            }
          }
        }
      }
    }
    // Host-accessible variations were projected in place; host copies go back, and must have completed before their
    // buffers are released at the end of the group.
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (hv[k].data() != v.tucker[group[k]].data()) Kokkos::deep_copy(space, v.tucker[group[k]], hv[k]);
    }
    space.fence();
  }
}

}  // namespace impl

/// Projects every stack entry of `v` in place onto the tangent space of the shared model at the frame's base point
/// (docs/math.md, "Shared Tucker factors"): the TT variations and the Tucker variations of single-mode groups are
/// kept, and the Tucker variations of every group g of two or more modes are replaced by the nearest (in the
/// corewise inner product) V_i = S_i D for i in g with one direction D (nU_g x N_g, D U_g^T = 0) common to the
/// group. On gauged variations this is the orthogonal projection, in the Frobenius inner product of the tangent
/// tensors, onto the tangents of curves that move the TT cores freely and every group's factor by one direction:
/// it is idempotent and self-adjoint, and a sharing without groups of two or more modes leaves `v` untouched. An
/// ungauged variation should be gauge_project-ed first (the composition is the orthogonal projection of all
/// variations onto the gauged tied ones).
/// \param space execution space for the copies between `MemorySpace` and the host
/// \param frame the frame of a T3 whose factors are tied as `sharing` asks, with its centre factors (as
///        t3k::orthogonal_frame builds it)
/// \param sharing the groups of modes that share a factor
/// \param v variation stack at `frame`, overwritten through its Views
/// **Blocking:** yes (host LAPACK; fences `space`). **Throws:** DimensionMismatch when `v` does not fit the frame or
/// the frame's shapes do not fit the sharing; InvalidArgument when the frame has no centre factors or its up factors
/// differ within a group.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void tie_variation_in_place(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                            ModeSharing const& sharing, T3Variation<Scalar, MemorySpace> const& v) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  std::string const where = "t3k::tie_variation_in_place";
  impl::check_variation(where, frame, v);
  impl::check_tied_frame(space, where, frame, sharing);
  if (!sharing.is_trivial()) impl::tie_variation_unchecked(space, frame, sharing, v);
}

/// The projection of tie_variation_in_place as a new variation stack (v is unchanged).
/// \param space execution space for the copies   \param frame the frame of a tied T3, with its centre factors
/// \param sharing the groups of modes that share a factor   \param v variation stack at `frame`
/// \return the projected copy (a plain copy when the sharing is trivial)
/// **Blocking:** yes. **Throws:** as tie_variation_in_place.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> tie_variation(ExecutionSpace const& space,
                                               OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                               ModeSharing const& sharing, T3Variation<Scalar, MemorySpace> const& v) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  std::string const where = "t3k::tie_variation";
  impl::check_variation(where, frame, v);
  impl::check_tied_frame(space, where, frame, sharing);
  auto w = copy_variation(space, v);
  if (!sharing.is_trivial()) impl::tie_variation_unchecked(space, frame, sharing, w);
  return w;
}

}  // namespace t3k
