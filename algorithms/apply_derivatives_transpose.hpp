#pragma once
/// \file apply_derivatives_transpose.hpp
/// The transpose J^T of the Jacobian of scalar measurements (entries, applies; docs/math.md): residual jets of W
/// samples back-projected into a variation gradient, summed over samples or per sample, computed in chunks of
/// samples with the probe kind's guarantees (every chunk size gives the same bits, exact memory model).

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/scalar_samples.hpp"
#include "t3k/algorithms/impl/scalar_transpose_workspace.hpp"
#include "t3k/algorithms/impl/transpose_assembly.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/core/communicator.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <vector>

namespace t3k {
namespace impl {

/// out(s, k, 0) = r(t, s0 + s, k), k < L: one residual stack entry's scalar jets, packed.
template <class Scalar, class MemorySpace, class ResidualView>
struct PackScalarResidualEntry {
  Jet3<Scalar, MemorySpace> out;
  ResidualView r;
  int t, s0;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int) const {
    if constexpr (int(ResidualView::rank) == 3) {
      out(s, k, 0) = r(t, s0 + s, k);
    } else {
      out(s, k, 0) = r(s0 + s, k);
    }
  }
};

/// V~[o, idx_s] += g(s, 0, o) for the chunk's samples in order: an entry's one-hot vector in the Tucker assembly, one
/// thread per row o of V~, each adding its samples in sample order (the same sequence for every chunking).
template <class Scalar, class MemorySpace, class IndexView>
struct ScatterEntryColumns {
  Matrix<Scalar, MemorySpace> out;
  Jet3<Scalar const, MemorySpace> g;
  IndexView idx;
  int mode, s0, rows;
  KOKKOS_INLINE_FUNCTION void operator()(int o) const {
    for (int s = 0; s < rows; ++s) out(o, int(idx(s0 + s, mode))) += g(s, 0, o);
  }
};

/// Per-sample V~: out(row0 + s, o, j) = sum_m g(s, m, o) omega(s, m, j), or for entries without jets
/// [j == idx_s] g(s, 0, o).
template <class Scalar, class MemorySpace, class IndexView>
struct ScalarTuckerPerSample {
  Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace> out;
  Jet3<Scalar const, MemorySpace> g, omega;
  IndexView idx;
  int mode, s0;
  std::size_t row0;
  bool packed;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int o, int j) const {
    Scalar acc = 0;
    if (packed) {
      for (int m = 0; m < int(g.extent(1)); ++m) acc += g(s, m, o) * omega(s, m, j);
    } else if (int(idx(s0 + s, mode)) == j) {
      acc = g(s, 0, o);
    }
    out(row0 + std::size_t(s), o, j) = acc;
  }
};

/// The scalar J^T sweep (docs/math.md), per chunk of samples:
/// (1) xi_i = U_i omega_i (omega_i packed and kept for the assembly); the residual jets r packed.
/// (2) Left to right: mu[i+1] = (mu[i] ⊛ xi_i) . L_i.
/// (3) Right to left: nu[i] = R_i . (xi_i ⊛ nu[i+1]); eta_i = (mu[i] . O_i) ⊛_b nu[i+1]; then per residual
///     H~_i[a,u,b] += sum_l mu[i]^(l)[a] Z^(l)[u,b] with Z = (xi_i ⋆ r) ⋆ nu[i+1] (the transpose of
///     r = <H_i, mu ⊛ xi ⊛ nu>), and V~_i[o,j] += sum_m (eta_i ⋆ r)^(m)[o] omega_i^(m)[j].
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class IndexView, class ResidualView>
void scalar_transpose_sweep(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                            ScalarSamples<ProbeView, IndexView> const& samples, ResidualView const& residuals,
                            std::size_t nt, int k1, bool summed, std::size_t chunk_rows,
                            T3Variation<Scalar, MemorySpace> const& out) {
  using Mem = MemorySpace;
  using J3 = Jet3<Scalar, Mem>;
  using J3c = Jet3<Scalar const, Mem>;
  using J4 = Jet4<Scalar, Mem>;
  using Term = KhatriRaoTerm<Scalar, Mem>;
  FrameShapes const sh = frame_shapes(frame);
  std::size_t const d = sh.d(), n_samples = samples.n_samples(), c = chunk_rows;
  int const kl = linear_jet_length(k1);
  bool const packed = samples.packs_omega(kl);
  auto const &big_n = sh.big_n, &nu = sh.nu, &no = sh.no, &rl = sh.rl, &rr = sh.rr;
  constexpr std::size_t block_size = reduction_block_size_for<ExecutionSpace>();
  auto built = build_workspace<Scalar, Mem>(space, "t3k::apply_derivatives_transpose::workspace",
                                            [&](WorkspaceArena<Scalar, Mem>& arena) {
                                              return scalar_transpose_layout(arena, sh, c, nt, k1, packed, block_size);
                                            });
  auto& w = built.first;
  for (std::size_t i = 0; i < d; ++i) {
    permute_core_axes(space, "t3k::apply_derivatives_transpose::outer_by_right", w.outer_by_right[i],
                      frame.outer_tt(i).data(), CoreAxes::last_two);
  }
  auto mat = [&](Scalar const* data, std::size_t m, std::size_t n) { return as_matrix<Scalar, Mem>(data, m, n); };
  // The widest Khatri-Rao row of any core (the buffers' capacity per coefficient, scalar_transpose_layout).
  std::size_t kr_width = 1;
  for (std::size_t i = 0; i < d; ++i) kr_width = max_of(kr_width, max_of(rl[i] * nu[i], nu[i] * rr[i + 1]));
  for (std::size_t s0 = 0, rows = 0; s0 < n_samples; s0 += rows) {
    rows = rows_of_next_pass(space, c, n_samples - s0, [&] {
      return transpose_layout_bytes<Scalar>(samples.kind, sh, nt, k1, packed, block_size);
    });
    // Rows g of a workspace jet where the chunk's layout for this width puts them (g: a row range or the whole
    // chunk), so that the whole-chunk assembly reads what the ranges wrote.
    auto r3 = [&](RowRange const& g, J3 const& j, std::size_t width) {
      return J3(j.data() + g.first * j.extent(1) * width, g.count, j.extent(1), width);
    };
    auto c3 = [&](RowRange const& g, J3 const& j, std::size_t width) { return J3c(r3(g, j, width)); };
    auto kr4 = [&](RowRange const& g, int b, std::size_t p, std::size_t q) {
      return range_rows<Scalar, Mem>(w.khatri_rao[b].data(), std::size_t(k1) * p * q, g, k1, p, q);
    };
    // Step (2) runs every core in one parallel region, where threads may be at different cores: there a chunk row
    // of the sweep's Khatri-Rao jets is K1 times the widest row, an offset no core's shape changes.
    auto kr4_per_range = [&](RowRange const& g, std::size_t p, std::size_t q) {
      return range_rows<Scalar, Mem>(w.khatri_rao[0].data(), std::size_t(k1) * kr_width, g, k1, p, q);
    };
    RowRange const chunk{0, rows, 0};
    // Steps (1) and (2) are per sample: each thread carries its row range through all of them in one parallel
    // region (for_each_row_range_on_host_threads; device backends: the whole chunk). A parallel region per kernel
    // costs more than these narrow kernels on two threads (BM_EntriesJT_Target).
    for_each_row_range_on_host_threads(space, rows, block_size, [&](RowRange const& g) {
      int const first = int(s0 + g.first);
      // (1)
      for (std::size_t i = 0; i < d; ++i) {
        apply_factor_to_samples(space, "t3k::apply_derivatives_transpose::xi", r3(g, w.xi[i], nu[i]),
                                mat(frame.up_tucker(i).data(), nu[i], big_n[i]), samples, i, first,
                                r3(g, w.omega[i], packed ? big_n[i] : 0));
      }
      for (std::size_t t = 0; t < nt; ++t) {
        for_each_jet_entry(
            space, "t3k::apply_derivatives_transpose::pack_residuals", int(g.count), k1, 1,
            PackScalarResidualEntry<Scalar, Mem, ResidualView>{r3(g, w.resid[t], 1), residuals, int(t), first});
      }
      // (2)
      fill_ones_jet(space, r3(g, w.mu[0], 1));
      for (std::size_t i = 0; i + 1 < d; ++i) {
        khatri_rao_then_apply_matrix(space, "t3k::apply_derivatives_transpose::mu_xi", kr4_per_range(g, rl[i], nu[i]),
                                     Term{c3(g, w.mu[i], rl[i]), c3(g, w.xi[i], nu[i]), JetPairing::product}, Term{},
                                     false, "t3k::apply_derivatives_transpose::mu", r3(g, w.mu[i + 1], rl[i + 1]),
                                     mat(frame.left_tt(i).data(), rl[i] * nu[i], rl[i + 1]), MatrixSide::cols_out);
      }
      fill_ones_jet(space, r3(g, w.nu[d], 1));
    });
    // (3) The per-sample part of each (core, residual) runs on row ranges as above; the assembly sums over the whole
    // chunk after it.
    for (std::size_t i = d; i-- > 0;) {
      J3c const omega = c3(chunk, w.omega[i], packed ? big_n[i] : 0);
      for (std::size_t t = 0; t < nt; ++t) {
        for_each_row_range_on_host_threads(space, rows, block_size, [&](RowRange const& g) {
          if (t == 0) {
            if (i >= 1) {
              khatri_rao_then_apply_matrix(
                  space, "t3k::apply_derivatives_transpose::xi_nu", kr4(g, 0, nu[i], rr[i + 1]),
                  Term{c3(g, w.xi[i], nu[i]), c3(g, w.nu[i + 1], rr[i + 1]), JetPairing::product}, Term{}, false,
                  "t3k::apply_derivatives_transpose::nu", r3(g, w.nu[i], rr[i]),
                  mat(frame.right_tt(i).data(), rr[i], nu[i] * rr[i + 1]), MatrixSide::rows_out);
            }
            auto const em = range_rows<Scalar, Mem>(w.transient.data(), std::size_t(k1) * rr[i + 1] * no[i], g, k1,
                                                    rr[i + 1], no[i]);
            apply_matrix(space, "t3k::apply_derivatives_transpose::mu_o", J3(em.data(), g.count, k1, rr[i + 1] * no[i]),
                         c3(g, w.mu[i], rl[i]), mat(w.outer_by_right[i].data(), rl[i], rr[i + 1] * no[i]),
                         MatrixSide::cols_out, false);
            contract_jets(space, "t3k::apply_derivatives_transpose::eta", r3(g, w.eta, no[i]),
                          Jet4<Scalar const, Mem>(em), ContractAxis::first, c3(g, w.nu[i + 1], rr[i + 1]),
                          JetPairing::product, false);
          }
          J3c const r = c3(g, w.resid[t], 1);
          khatri_rao_jets(space, "t3k::apply_derivatives_transpose::delta",
                          J4(r3(g, w.delta, nu[i]).data(), g.count, k1, nu[i], 1),
                          Term{c3(g, w.xi[i], nu[i]), r, JetPairing::correlate_y_fixed});
          khatri_rao_jets(space, "t3k::apply_derivatives_transpose::z", kr4(g, 1, nu[i], rr[i + 1]),
                          Term{c3(g, w.delta, nu[i]), c3(g, w.nu[i + 1], rr[i + 1]), JetPairing::correlate_v_fixed});
          khatri_rao_jets(space, "t3k::apply_derivatives_transpose::adjoint_eta",
                          J4(r3(g, w.adjoint_eta, no[i]).data(), g.count, kl, no[i], 1),
                          Term{c3(g, w.eta, no[i]), r, JetPairing::correlate_y_fixed});
        });
        auto const z = kr4(chunk, 1, nu[i], rr[i + 1]);
        J3c const g = c3(chunk, w.adjoint_eta, no[i]);
        J3c const z_flat(z.data(), rows, k1, nu[i] * rr[i + 1]);
        if (summed) {
          auto out_v = Kokkos::subview(out.tucker[i], t, Kokkos::ALL, Kokkos::ALL);
          auto out_h = Kokkos::subview(out.tt[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
          std::size_t const blocks = summed_block_partials(rows, block_size);
          auto partials = [&](std::size_t core_rows, std::size_t cols) {
            return Matrix<Scalar, Mem>(w.partials.data(), blocks * core_rows, blocks > 0 ? cols : 0);
          };
          assemble_tt_summed(space, out_h, c3(chunk, w.mu[i], rl[i]), z_flat, J3c(), J3c(), false,
                             partials(rl[i], nu[i] * rr[i + 1]));
          Matrix<Scalar, Mem> const v_matrix(out_v.data(), no[i], big_n[i]);
          if (packed) {
            add_block_products(space, "t3k::apply_derivatives_transpose::assemble_tucker", v_matrix, g, omega, J3c(),
                               J3c(), false, partials(no[i], big_n[i]));
          } else {
            Kokkos::parallel_for(
                "t3k::apply_derivatives_transpose::scatter_entries",
                Kokkos::RangePolicy<ExecutionSpace>(space, 0, int(no[i])),
                ScatterEntryColumns<Scalar, Mem, IndexView>{v_matrix, g, samples.indices, int(i), int(s0), int(rows)});
          }
        } else {
          auto out_v = Kokkos::subview(out.tucker[i], std::make_pair(t * n_samples, (t + 1) * n_samples), Kokkos::ALL,
                                       Kokkos::ALL);
          auto out_h = Kokkos::subview(out.tt[i], std::make_pair(t * n_samples, (t + 1) * n_samples), Kokkos::ALL,
                                       Kokkos::ALL, Kokkos::ALL);
          TtAssembly<ExecutionSpace, Scalar, Mem>{c3(chunk, w.mu[i], rl[i]), J3c(), z_flat, J3c(), false}.per_probe(
              space, out_h, s0);
          Kokkos::parallel_for("t3k::apply_derivatives_transpose::assemble_tucker_per_sample",
                               Policy3<ExecutionSpace>(space, {0, 0, 0}, {int(rows), int(no[i]), int(big_n[i])}),
                               ScalarTuckerPerSample<Scalar, Mem, IndexView>{out_v, g, omega, samples.indices, int(i),
                                                                             int(s0), s0, packed});
        }
      }
    }
  }
}

/// The shared body of the public scalar J^T calls: checks, chunk, result allocation, sweep.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class IndexView, class ResidualView>
T3Variation<Scalar, MemorySpace> scalar_derivatives_transpose(ExecutionSpace const& space, std::string const& where,
                                                              OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                              ScalarSamples<ProbeView, IndexView> const& samples,
                                                              ResidualView const& residuals,
                                                              TransposeOptions const& options) {
  static_assert(Kokkos::is_view<ResidualView>::value && (int(ResidualView::rank) == 2 || int(ResidualView::rank) == 3),
                "t3k: scalar residuals must be rank-2 (W, K+1) or rank-3 (n_t, W, K+1) Views");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename ResidualView::memory_space>::accessible,
                "t3k: residuals are not accessible from the execution space");
  constexpr bool stacked = int(ResidualView::rank) == 3;
  std::size_t const nt = stacked ? residuals.extent(0) : 1;
  std::size_t const order_plus_one = residuals.extent(stacked ? 2 : 1);
  if (order_plus_one == 0) throw InvalidArgument(where + ": residuals have no orders (extent K+1 is 0)");
  std::size_t const order = order_plus_one - 1;
  std::size_t const w = check_scalar_samples(space, where, samples, frame.mode_shapes(), order > 0);
  auto expected = std::vector<std::size_t>{w, order_plus_one};
  if (stacked) expected.insert(expected.begin(), nt);
  check_shape(where, "residuals", residuals, expected);
  bool const summed = options.sum_over_probes;
  auto const sh = frame_shapes(frame);
  ChunkSize const chunk =
      resolve_chunk_size<ExecutionSpace, Scalar>(samples.kind, options.chunk_size, sh, order, w, nt);
  // Per-sample Tucker rows of entries without jets are written whole too (ScalarTuckerPerSample).
  auto out = transpose_result<Scalar, MemorySpace>(space, where, sh, nt, w, summed);
  if (w > 0 && nt > 0) {
    scalar_transpose_sweep(space, frame, samples, residuals, nt, scalar_jet_length(order, sh.d()), summed,
                           rows_per_chunk(chunk, w, reduction_block_size_for<ExecutionSpace>()), out);
  }
  return out;
}

}  // namespace impl

/// J^T of applies (docs/math.md): back-projects residual jets of W applies into a variation gradient. For every
/// variation v: sum_s sum_{k<=K} J(v)_s^(k) r_s^(k) = sum_i <V_i, V~_i> + <H_i, H~_i>.
/// \param space execution space the kernels run on
/// \param frame orthogonal frame of the base point
/// \param ww, pp the samples' vectors and directions, one (W, N_i) View per mode; pp may be empty when K = 0
/// \param residuals (W, K+1) for one residual or (n_t, W, K+1) for a stack; orders above d are ignored
/// \param options sum_over_probes (here: over samples) and chunk_size (any chunk gives bitwise the same result)
/// \return as probe_derivatives_transpose: n_t entries summed, or n_t * W per sample (index t * W + s); ungauged
/// **Blocking:** no. **Throws:** DimensionMismatch naming the array and both shapes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class ResidualView>
T3Variation<Scalar, MemorySpace> apply_derivatives_transpose(
    ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame, std::vector<ProbeView> const& ww,
    std::vector<ProbeView> const& pp, ResidualView const& residuals, TransposeOptions const& options = {}) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  return impl::scalar_derivatives_transpose(
      space, "t3k::apply_derivatives_transpose", frame,
      impl::ScalarSamples<ProbeView, EntryIndices<MemorySpace>>{MeasurementKind::applies, ww, pp, {}}, residuals,
      options);
}

/// J^T of entries: as apply_derivatives_transpose with the one-hot vectors of indices(s, :) (docs/math.md). Without
/// jets (K = 0) the Tucker gradient adds each sample's row into the column of its index (no N_i factor).
/// **Blocking:** yes (indices are range-checked). **Throws:** InvalidArgument for an index out of range.
template <class ExecutionSpace, class Scalar, class MemorySpace, class IndexView,
          class ProbeView = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>, class ResidualView>
T3Variation<Scalar, MemorySpace> entry_derivatives_transpose(ExecutionSpace const& space,
                                                             OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                             IndexView const& indices, std::vector<ProbeView> const& pp,
                                                             ResidualView const& residuals,
                                                             TransposeOptions const& options = {}) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, IndexView, 2>::value, "");
  return impl::scalar_derivatives_transpose(
      space, "t3k::entry_derivatives_transpose", frame,
      impl::ScalarSamples<ProbeView, IndexView>{MeasurementKind::entries, {}, pp, indices}, residuals, options);
}

}  // namespace t3k
