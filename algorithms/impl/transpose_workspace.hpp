#pragma once
/// \file transpose_workspace.hpp
/// The one place that decides what J^T allocates: the workspace layout used both by the allocation and by the
/// memory model (estimate_chunk_size.hpp). Not API.

#include "algorithms/impl/frame_shapes.hpp"
#include "algorithms/impl/jet_kernels.hpp"
#include "algorithms/impl/probe_checks.hpp"
#include "core/impl/workspace.hpp"

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
  std::array<Flat, 3> transient;                         // sweep transients (jets of matrices)
  std::array<Flat, 3> assembly;                          // Khatri-Rao jets (Q or MN), PX, XN of the current core
};

/// Lays out the J^T workspace for `rows` probes per chunk and `nt` residual stacks; used by the counting pass (the
/// memory model) and by the real allocation alike.
template <class Scalar, class MemorySpace>
TransposeWorkspace<Scalar, MemorySpace> transpose_layout(WorkspaceArena<Scalar, MemorySpace>& arena,
                                                         FrameShapes const& sh, std::size_t rows, std::size_t nt,
                                                         int k1, bool summed) {
  TransposeWorkspace<Scalar, MemorySpace> w;
  std::size_t const d = sh.d();
  int const kl = linear_jet_length(k1);
  auto const &big_n = sh.big_n, &nu = sh.nu, &no = sh.no, &rl = sh.rl, &rr = sh.rr;
  auto const sweep = WorkspaceCategory::sweep;
  std::size_t transient = 1, assembly_mn = 1, assembly_px = 1, assembly_xn = 1, vec_max = 1;
  // Summed results contract Q (rL x nU per order, see assemble_tt_summed) where per-probe results use MN (rL x rR1).
  for (std::size_t i = 0; i < d; ++i) {
    transient = max_of(transient, max_of(nu[i] * rl[i + 1], rr[i] * nu[i]));
    transient = max_of(transient, max_of(no[i] * rr[i + 1], rl[i] * no[i]));
    assembly_mn = max_of(assembly_mn, summed ? rl[i] * nu[i] : rl[i] * rr[i + 1]);
    if (i + 1 < d) assembly_px = max_of(assembly_px, rl[i] * nu[i]);
    if (i >= 1) assembly_xn = max_of(assembly_xn, nu[i] * rr[i + 1]);
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
  w.assembly[0] = arena.take1(assembly, rows * std::size_t(k1) * assembly_mn);
  w.assembly[1] = arena.take1(assembly, d > 1 ? rows * std::size_t(k1) * assembly_px : 0);
  w.assembly[2] = arena.take1(assembly, d > 1 ? rows * std::size_t(k1) * assembly_xn : 0);
  return w;
}

}  // namespace impl
}  // namespace t3k
