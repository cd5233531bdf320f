#pragma once
/// \file scalar_transpose_workspace.hpp
/// What J^T of scalar measurements (entries, applies) allocates: the workspace layout used both by the allocation and
/// by the memory model (estimate_chunk_size.hpp). Not API.

#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/probe_checks.hpp"
#include "t3k/algorithms/impl/transpose_workspace.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/impl/workspace.hpp"

#include <vector>

namespace t3k {
namespace impl {

/// Workspace of one scalar J^T call, carved from one allocation; its sizes are the memory model.
template <class Scalar, class MemorySpace>
struct ScalarTransposeWorkspace {
  using J3 = Jet3<Scalar, MemorySpace>;
  using Flat = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  std::vector<J3> omega, xi, mu, nu;  // packed linear jets (empty for entries without jets), frame edge jets
  std::vector<J3> resid;              // packed residual jets per stack entry t: (rows, K1, 1)
  J3 eta, adjoint_eta, delta;         // per core: eta_i, eta_i ⋆ r (orders < Kl), xi_i ⋆ r
  Flat transient;                     // E = mu[i] . O_i of the current core
  std::vector<J3> outer_by_right;     // O_i with axes (a, b, o), filled once per call
  /// Khatri-Rao jets of the current core: [0] the sweeps' (mu ⊛ xi, xi ⊛ nu), [1] the assembly's
  /// Z = (xi ⋆ r) ⋆ nu, whose products with mu give H~.
  std::array<Flat, 2> khatri_rao;
  Flat partials;  // block partials of the summed assembly on device backends
};

/// Lays out the scalar J^T workspace for `rows` samples per chunk, `nt` residual stacks, `k1` = scalar_jet_length
/// coefficients, `packs_omega` (applies, or entries with jets: ScalarSamples::packs_omega).
template <class Scalar, class MemorySpace>
ScalarTransposeWorkspace<Scalar, MemorySpace> scalar_transpose_layout(WorkspaceArena<Scalar, MemorySpace>& arena,
                                                                      FrameShapes const& sh, std::size_t rows,
                                                                      std::size_t nt, int k1, bool packs_omega,
                                                                      std::size_t block_rows) {
  ScalarTransposeWorkspace<Scalar, MemorySpace> w;
  std::size_t const d = sh.d();
  int const kl = linear_jet_length(k1);
  auto const &big_n = sh.big_n, &nu = sh.nu, &no = sh.no, &rl = sh.rl, &rr = sh.rr;
  auto const sweep = WorkspaceCategory::sweep;
  std::size_t transient = 1, khatri_rao = 1;
  for (std::size_t i = 0; i < d; ++i) {
    transient = max_of(transient, no[i] * rr[i + 1]);
    khatri_rao = max_of(khatri_rao, max_of(rl[i] * nu[i], nu[i] * rr[i + 1]));
  }
  for (std::size_t i = 0; i < d; ++i) w.omega.push_back(arena.take3(sweep, rows, kl, packs_omega ? big_n[i] : 0));
  for (std::size_t i = 0; i < d; ++i) w.xi.push_back(arena.take3(sweep, rows, kl, nu[i]));
  for (std::size_t e = 0; e <= d; ++e) w.mu.push_back(arena.take3(sweep, rows, k1, e < d ? rl[e] : 0));
  for (std::size_t e = 0; e <= d; ++e) w.nu.push_back(arena.take3(sweep, rows, k1, e > 0 ? rr[e] : 0));
  for (std::size_t t = 0; t < nt; ++t) w.resid.push_back(arena.take3(sweep, rows, k1, 1));
  w.eta = arena.take3(sweep, rows, k1, max_element_or(no, 1));
  w.adjoint_eta = arena.take3(sweep, rows, kl, max_element_or(no, 1));
  w.delta = arena.take3(sweep, rows, k1, max_element_or(nu, 1));
  w.transient = arena.take1(sweep, rows * std::size_t(k1) * transient);
  for (auto& buffer : w.khatri_rao) buffer = arena.take1(WorkspaceCategory::assembly, rows * std::size_t(k1) * khatri_rao);
  w.partials = arena.take1(WorkspaceCategory::partials, summed_block_partials(rows, block_rows) * partial_entries(sh));
  for (std::size_t i = 0; i < d; ++i) {
    w.outer_by_right.push_back(arena.take3(WorkspaceCategory::fixed, rl[i], rr[i + 1], no[i]));
  }
  return w;
}

}  // namespace impl
}  // namespace t3k
