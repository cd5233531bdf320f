#pragma once
/// \file transpose_workspace.hpp
/// The one place that decides what J^T allocates: the workspace layout used both by the allocation and by the
/// memory model (estimate_chunk_size.hpp). Not API.

#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/probe_checks.hpp"
#include "t3k/core/impl/workspace.hpp"

#include <array>
#include <vector>

namespace t3k {
namespace impl {

/// Workspace of one J^T call, carved from one allocation (see workspace.hpp). Every array the call allocates,
/// apart from the returned gradient, is here; its sizes are the memory model.
template <class Scalar, class MemorySpace>
struct TransposeWorkspace {
  using J3 = Jet3<Scalar, MemorySpace>;
  using Flat = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  std::vector<J3> omega, xi, mu, nu;                     // packed probe pairs, frame edge jets
  std::vector<std::vector<J3>> resid, deta, tau, sigma;  // per residual stack entry t (resid: packed residuals)
  J3 eta, dxi;                                           // per core, transient
  std::array<Flat, 2> transient;                         // E = mu . O_i and F = O_i . nu[i+1] of the current core
  std::vector<J3> outer_by_right;                        // O_i with axes (a, b, o), for E; filled once per call
  /// Factors of the right-hand products stored transposed, filled once per call, so that every product of the sweep
  /// multiplies by an untransposed factor (MatrixSide::cols_out), the form OpenBLAS runs in its small-matrix
  /// kernels (a transposed factor took its general path at these shapes: docs/performance.md). Each is a
  /// (1, rows, cols) jet holding one matrix: U_i^T (N_i x nU_i); R_i^T ((nU_i rR_{i+1}) x rR_i) and O_i^T
  /// (rR_{i+1} x (rL_i nO_i)) for i >= 1 (empty for i = 0, which has no such products).
  std::vector<J3> up_transposed, right_transposed, outer_transposed;
  /// Khatri-Rao jets of the current core: [0] the frame's (mu ⊛ xi left to right, N = xi ⊛ nu right to left),
  /// [1] the current residual's (the jets whose products with L_i and R_i give tau~ and sigma~), the operands of the
  /// sweeps' products and of the TT assembly.
  std::array<Flat, 2> khatri_rao;
  /// Entries per probe row and order that each Khatri-Rao buffer holds: the widest core's (rL nU or nU rR1).
  std::size_t khatri_rao_width = 1;
  /// Block partials of the summed assembly (summed_block_partials of them, each partial_entries(sh) long; empty where
  /// the assembly adds to the result directly).
  Flat partials;
};

/// Entries of one block partial of the summed assembly: the largest gradient core, H~_i (rL nU rR1) or V~_i (nO N).
inline std::size_t partial_entries(FrameShapes const& sh) {
  std::size_t entries = 0;
  for (std::size_t i = 0; i < sh.d(); ++i) {
    entries = max_of(entries, max_of(sh.rl[i] * sh.nu[i] * sh.rr[i + 1], sh.no[i] * sh.big_n[i]));
  }
  return entries;
}

/// Lays out the J^T workspace for `rows` probes per chunk and `nt` residual stacks on a space whose reduction block
/// is `block_rows`; used by the counting pass (the memory model) and by the real allocation alike. Summed and
/// per-probe results use the same workspace (the per-probe assembly reads the sweep's Khatri-Rao jets too).
template <class Scalar, class MemorySpace>
TransposeWorkspace<Scalar, MemorySpace> transpose_layout(WorkspaceArena<Scalar, MemorySpace>& arena,
                                                         FrameShapes const& sh, std::size_t rows, std::size_t nt,
                                                         int k1, std::size_t block_rows) {
  TransposeWorkspace<Scalar, MemorySpace> w;
  std::size_t const d = sh.d();
  int const kl = linear_jet_length(k1);
  auto const &big_n = sh.big_n, &nu = sh.nu, &no = sh.no, &rl = sh.rl, &rr = sh.rr;
  auto const sweep = WorkspaceCategory::sweep;
  std::size_t transient = 1, khatri_rao = 1, vec_max = 1;
  for (std::size_t i = 0; i < d; ++i) {
    transient = max_of(transient, max_of(no[i] * rr[i + 1], rl[i] * no[i]));
    khatri_rao = max_of(khatri_rao, max_of(rl[i] * nu[i], nu[i] * rr[i + 1]));
    vec_max = max_of(vec_max, no[i]);
  }
  for (std::size_t i = 0; i < d; ++i) w.omega.push_back(arena.take3(sweep, rows, kl, big_n[i]));
  for (std::size_t i = 0; i < d; ++i) w.xi.push_back(arena.take3(sweep, rows, kl, nu[i]));
  for (std::size_t e = 0; e <= d; ++e) w.mu.push_back(arena.take3(sweep, rows, k1, e < d ? rl[e] : 0));
  for (std::size_t e = 0; e <= d; ++e) w.nu.push_back(arena.take3(sweep, rows, k1, e > 0 ? rr[e] : 0));
  w.resid.resize(nt);
  w.deta.resize(nt);
  w.tau.resize(nt);
  w.sigma.resize(nt);
  for (std::size_t t = 0; t < nt; ++t) {
    for (std::size_t i = 0; i < d; ++i) w.resid[t].push_back(arena.take3(sweep, rows, k1, big_n[i]));
    for (std::size_t i = 0; i < d; ++i) w.deta[t].push_back(arena.take3(sweep, rows, k1, nu[i]));
    for (std::size_t e = 0; e <= d; ++e) {
      bool const interior = e > 0 && e < d;
      w.tau[t].push_back(arena.take3(sweep, rows, k1, interior ? rl[e] : 0));
      w.sigma[t].push_back(arena.take3(sweep, rows, k1, interior ? rr[e] : 0));
    }
  }
  w.eta = arena.take3(sweep, rows, k1, vec_max);
  w.dxi = arena.take3(sweep, rows, kl, vec_max);
  for (auto& buffer : w.transient) buffer = arena.take1(sweep, rows * std::size_t(k1) * transient);
  auto const assembly = WorkspaceCategory::assembly;
  for (auto& buffer : w.khatri_rao) buffer = arena.take1(assembly, rows * std::size_t(k1) * khatri_rao);
  w.khatri_rao_width = khatri_rao;
  w.partials = arena.take1(WorkspaceCategory::partials, summed_block_partials(rows, block_rows) * partial_entries(sh));
  auto const fixed = WorkspaceCategory::fixed;
  for (std::size_t i = 0; i < d; ++i) {
    w.outer_by_right.push_back(arena.take3(fixed, rl[i], rr[i + 1], no[i]));
    w.up_transposed.push_back(arena.take3(fixed, 1, big_n[i], nu[i]));
    w.right_transposed.push_back(arena.take3(fixed, i >= 1 ? 1 : 0, nu[i] * rr[i + 1], rr[i]));
    w.outer_transposed.push_back(arena.take3(fixed, i >= 1 ? 1 : 0, rr[i + 1], rl[i] * no[i]));
  }
  return w;
}

}  // namespace impl
}  // namespace t3k
