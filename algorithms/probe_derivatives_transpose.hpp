#pragma once
/// \file probe_derivatives_transpose.hpp
/// The transpose J^T of the probe Jacobian (docs/math.md): residual jets of W probes back-projected
/// into a variation gradient, summed over probes or per probe, computed in chunks of probes.

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/probe_checks.hpp"
#include "t3k/algorithms/impl/transpose_assembly.hpp"
#include "t3k/algorithms/impl/transpose_workspace.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/communicator.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/impl/workspace.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <array>
#include <type_traits>
#include <vector>

namespace t3k {

/// Options of probe_derivatives_transpose.
struct TransposeOptions {
  /// true: V~, H~ summed over all probes (the Gauss-Newton gradient J^T r); false: one gradient per probe.
  bool sum_over_probes = true;
  /// Probes per pass of the whole J^T (every stage is applied to one chunk at a time). auto (the default, as for
  /// probe_derivatives and the optimizers): automatic_chunk_size for this call's shapes and space
  /// (estimate_chunk_size.hpp); none: all at once; a fixed size is rounded down to a multiple of the space's
  /// reduction block (reduction_block_size_for: 64 probes on host backends, 2048 on device backends; at least one
  /// block). Any chunk size gives bitwise the same result.
  ChunkSize chunk_size = ChunkSize::automatic();
};

namespace impl {

/// The t-th residual stack entry as a rank-3 (W, K+1, N) View.
template <class ResidualView>
auto residual_entry(ResidualView const& r, std::size_t t) {
  if constexpr (int(ResidualView::rank) == 4) {
    return Kokkos::subview(r, t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  } else {
    (void)t;
    return r;
  }
}

/// The result of a J^T call with frame shapes `sh`: n_t variations summed over the w samples, or n_t * w per
/// sample. Summed results accumulate and start at zero; per-sample results are fully overwritten (zeroed only when
/// there are no samples).
template <class Scalar, class MemorySpace, class ExecutionSpace>
T3Variation<Scalar, MemorySpace> transpose_result(ExecutionSpace const& space, std::string const& where,
                                                  FrameShapes const& sh, std::size_t nt, std::size_t w, bool summed) {
  T3Variation<Scalar, MemorySpace> out;
  std::size_t const n_stack = summed ? nt : nt * w;
  for (std::size_t i = 0; i < sh.d(); ++i) {
    out.tucker.emplace_back(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, where + "::tucker_" + std::to_string(i)), n_stack,
        sh.no[i], sh.big_n[i]);
    out.tt.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, where + "::tt_" + std::to_string(i)),
                        n_stack, sh.rl[i], sh.nu[i], sh.rr[i + 1]);
    if (summed || w == 0) {
      fill_contiguous(space, out.tucker[i], Scalar(0));
      fill_contiguous(space, out.tt[i], Scalar(0));
    }
  }
  return out;
}

template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class ResidualView>
void transpose_sweep(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                     std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp,
                     std::vector<ResidualView> const& residuals, std::size_t nt, int k1, bool summed,
                     std::size_t chunk_rows, T3Variation<Scalar, MemorySpace> const& out) {
  using Mem = MemorySpace;
  using J3 = Jet3<Scalar, Mem>;
  using J3c = Jet3<Scalar const, Mem>;
  using J4 = Jet4<Scalar, Mem>;
  using J4c = Jet4<Scalar const, Mem>;
  using Term = KhatriRaoTerm<Scalar, Mem>;
  FrameShapes const sh = frame_shapes(frame);
  std::size_t const d = sh.d();
  std::size_t const n_probes = ww[0].extent(0);
  std::size_t const c = chunk_rows;
  auto const &big_n = sh.big_n, &nu = sh.nu, &no = sh.no, &rl = sh.rl, &rr = sh.rr;

  auto built = build_workspace<Scalar, Mem>(
      space, "t3k::probe_derivatives_transpose::workspace", [&](WorkspaceArena<Scalar, Mem>& arena) {
        return transpose_layout(arena, sh, c, nt, k1, reduction_block_size_for<ExecutionSpace>());
      });
  auto& w = built.first;
  // Once per call: O_i with axes (a, b, o), the factor of E in step (3), and the transposed factors
  // (TransposeWorkspace): a matrix (rows x cols) is a (1, rows, cols) core whose last two axes swap.
  auto transpose = [&](J3 const& out, Scalar const* matrix) {
    permute_core_axes(space, "t3k::probe_derivatives_transpose::transposed_factor", out, matrix, CoreAxes::last_two);
  };
  for (std::size_t i = 0; i < d; ++i) {
    permute_core_axes(space, "t3k::probe_derivatives_transpose::outer_by_right", w.outer_by_right[i],
                      frame.outer_tt(i).data(), CoreAxes::last_two);
    transpose(w.up_transposed[i], frame.up_tucker(i).data());
    transpose(w.right_transposed[i], frame.right_tt(i).data());
    transpose(w.outer_transposed[i], frame.outer_tt(i).data());
  }

  constexpr std::size_t block_size = reduction_block_size_for<ExecutionSpace>();
  for (std::size_t s0 = 0, rows = 0; s0 < n_probes; s0 += rows) {
    rows = rows_of_next_pass(space, c, n_probes - s0, [&] {
      return transpose_layout_bytes<Scalar>(MeasurementKind::probes, sh, nt, k1, false, block_size);
    });
    // Rows [g.first, g.first + g.count) of the chunk's workspace jets (g: a row range, or the whole chunk) where the
    // chunk's layout for these widths puts them, so that the whole-chunk assembly of step (3) reads what ranges wrote.
    auto r3 = [&](RowRange const& g, J3 j, std::size_t width) {
      return J3(j.data() + g.first * j.extent(1) * width, g.count, j.extent(1), width);
    };
    auto c3 = [&](RowRange const& g, J3 j, std::size_t width) { return J3c(r3(g, j, width)); };
    // The flat buffers as (rows, K1, p, q) jets, a chunk row every K1 p q entries (the chunk's layout, as above).
    auto t4 = [&](RowRange const& g, int b, std::size_t p, std::size_t q) {
      return range_rows<Scalar, Mem>(w.transient[b].data(), k1 * p * q, g, k1, p, q);
    };
    auto kr4 = [&](RowRange const& g, int b, std::size_t p, std::size_t q) {
      return range_rows<Scalar, Mem>(w.khatri_rao[b].data(), k1 * p * q, g, k1, p, q);
    };
    // Step (2) runs every core in one parallel region, and its Khatri-Rao jets are only read by the product that
    // follows them: there a chunk row is every K1 times the buffer's widest row, an offset no core's shape changes
    // (kr4's moves with the core, as the whole-chunk assembly of step (3) needs).
    auto kr4_per_range = [&](RowRange const& g, int b, std::size_t p, std::size_t q) {
      return range_rows<Scalar, Mem>(w.khatri_rao[b].data(), k1 * w.khatri_rao_width, g, k1, p, q);
    };
    auto flat = [&](J4 j) { return J3(j.data(), j.extent(0), j.extent(1), j.extent(2) * j.extent(3)); };
    auto flat_c = [&](J4 j) { return J3c(flat(j)); };
    auto mat = [&](Scalar const* data, std::size_t m, std::size_t n) { return as_matrix<Scalar, Mem>(data, m, n); };
    RowRange const chunk{0, rows, 0};

    // Steps (1) and (2) are per probe: each thread carries its row range through all of them in one parallel region
    // (for_each_row_range_on_host_threads; device backends: the whole chunk).
    for_each_row_range_on_host_threads(space, rows, block_size, [&](RowRange const& g) {
      // (1) Pack the probe pairs omega_i and residuals r_i (orders < K1) into contiguous jets, the operands of
      //     block matrix products; xi_i = U_i omega_i; deta~_i = U_i r_i.
      int const first_probe = int(s0 + g.first);
      for (std::size_t i = 0; i < d; ++i) {
        auto u_transposed = mat(w.up_transposed[i].data(), big_n[i], nu[i]);
        pack_probe_pair(space, "t3k::probe_derivatives_transpose::pack_probes", r3(g, w.omega[i], big_n[i]), ww[i],
                        pp[i], first_probe);
        apply_matrix(space, "t3k::probe_derivatives_transpose::xi", r3(g, w.xi[i], nu[i]), c3(g, w.omega[i], big_n[i]),
                     u_transposed, MatrixSide::cols_out, false);
        for (std::size_t t = 0; t < nt; ++t) {
          pack_residual(space, "t3k::probe_derivatives_transpose::pack_residuals", r3(g, w.resid[t][i], big_n[i]),
                        residual_entry(residuals[i], t), first_probe);
          apply_matrix(space, "t3k::probe_derivatives_transpose::deta", r3(g, w.deta[t][i], nu[i]),
                       c3(g, w.resid[t][i], big_n[i]), u_transposed, MatrixSide::cols_out, false);
        }
      }
      // (2) Left to right, i = 0..d-2, by the adjoint recurrences of docs/math.md as written: the Khatri-Rao jets
      // first, then
      //     one product with L_i each (inner dimension rL_i * nU_i; contracting mu[i] . L_i first and the jets after
      //     would be a product with inner dimension rL_i and a pass over its rL_i * nU_i * rL_{i+1} output per jet):
      //     mu[i+1] = (mu[i] ⊛ xi_i) . L_i; tau~[i+1] = (mu[i] ⋆ deta~_i + [i >= 1] xi_i ⋆ tau~[i]) . L_i
      //     (docs/math.md's ⋆: (x ⋆ y)^(n) = sum_l x^(l) y^(l+n). As a KhatriRaoTerm, x ⋆ y is {x, y,
      //     correlate_y_fixed} or {y, x, correlate_v_fixed}, whichever puts the jet's two axes in the order of the
      //     core's.)
      fill_ones_jet(space, r3(g, w.mu[0], 1));
      for (std::size_t i = 0; i + 1 < d; ++i) {
        auto lmat = mat(frame.left_tt(i).data(), rl[i] * nu[i], rl[i + 1]);
        khatri_rao_then_apply_matrix(
            space, "t3k::probe_derivatives_transpose::mu_xi", kr4_per_range(g, 0, rl[i], nu[i]),
            Term{c3(g, w.mu[i], rl[i]), c3(g, w.xi[i], nu[i]), JetPairing::product}, Term{}, false,
            "t3k::probe_derivatives_transpose::mu", r3(g, w.mu[i + 1], rl[i + 1]), lmat, MatrixSide::cols_out);
        for (std::size_t t = 0; t < nt; ++t) {
          khatri_rao_then_apply_matrix(
              space, "t3k::probe_derivatives_transpose::tau_kr", kr4_per_range(g, 1, rl[i], nu[i]),
              Term{c3(g, w.mu[i], rl[i]), c3(g, w.deta[t][i], nu[i]), JetPairing::correlate_y_fixed},
              Term{c3(g, w.tau[t][i], rl[i]), c3(g, w.xi[i], nu[i]), JetPairing::correlate_v_fixed}, i >= 1,
              "t3k::probe_derivatives_transpose::tau", r3(g, w.tau[t][i + 1], rl[i + 1]), lmat, MatrixSide::cols_out);
        }
      }
      fill_ones_jet(space, r3(g, w.nu[d], 1));
    });
    // (3) Right to left, i = d-1..0, each core finished on the way: N = xi_i ⊛ nu[i+1] and
    //     S = nu[i+1] ⋆ deta~_i + [i <= d-2] xi_i ⋆ sigma~[i+1] give nu[i] = R_i . N and sigma~[i] = R_i . S
    //     (i >= 1) and are also the operands of the H~_i assembly (assemble_tt_summed); then eta_i, dxi~_i and V~_i.
    //     The per-probe part of each (core, residual) runs on row ranges as above; the assembly sums over the whole
    //     chunk after it.
    for (std::size_t i = d; i-- > 0;) {
      bool const has_right = i + 1 < d;
      bool const has_left = i >= 1;
      auto r_transposed = mat(w.right_transposed[i].data(), nu[i] * rr[i + 1], rr[i]);  // R_i^T (i >= 1)
      for (std::size_t t = 0; t < nt; ++t) {
        for_each_row_range_on_host_threads(space, rows, block_size, [&](RowRange const& g) {
          // eta_i = E ⊛_b nu[i+1] with E = mu[i] . O_i; F = O_i . nu[i+1] for dxi~_i. E has axes (b, o) (a product
          // with O_i permuted to (a, b, o)), so that eta_i and dxi~_i sum over b with contiguous outputs o: the axpy
          // form of contract_jets, vectorized over o, rather than one dot product over b per o.
          auto em = t4(g, 0, rr[i + 1], no[i]);
          auto fm = t4(g, 1, rl[i], no[i]);
          if (t == 0) {
            if (has_left) {
              khatri_rao_then_apply_matrix(
                  space, "t3k::probe_derivatives_transpose::xi_nu", kr4(g, 0, nu[i], rr[i + 1]),
                  Term{c3(g, w.xi[i], nu[i]), c3(g, w.nu[i + 1], rr[i + 1]), JetPairing::product}, Term{}, false,
                  "t3k::probe_derivatives_transpose::nu", r3(g, w.nu[i], rr[i]), r_transposed, MatrixSide::cols_out);
            }
            apply_matrix(space, "t3k::probe_derivatives_transpose::mu_o", flat(em), c3(g, w.mu[i], rl[i]),
                         mat(w.outer_by_right[i].data(), rl[i], rr[i + 1] * no[i]), MatrixSide::cols_out, false);
            contract_jets(space, "t3k::probe_derivatives_transpose::eta", r3(g, w.eta, no[i]), J4c(em),
                          ContractAxis::first, c3(g, w.nu[i + 1], rr[i + 1]), JetPairing::product, false);
            if (has_left) {
              apply_matrix(space, "t3k::probe_derivatives_transpose::o_nu", flat(fm), c3(g, w.nu[i + 1], rr[i + 1]),
                           mat(w.outer_transposed[i].data(), rr[i + 1], rl[i] * no[i]), MatrixSide::cols_out, false);
            }
          }
          auto sigma_kr = kr4(g, 1, nu[i], rr[i + 1]);
          Term const deta_nu{c3(g, w.deta[t][i], nu[i]), c3(g, w.nu[i + 1], rr[i + 1]), JetPairing::correlate_v_fixed};
          Term const xi_sigma{c3(g, w.xi[i], nu[i]), c3(g, w.sigma[t][i + 1], rr[i + 1]),
                              JetPairing::correlate_y_fixed};
          if (has_left) {
            khatri_rao_then_apply_matrix(space, "t3k::probe_derivatives_transpose::sigma_kr", sigma_kr, deta_nu,
                                         xi_sigma, has_right, "t3k::probe_derivatives_transpose::sigma",
                                         r3(g, w.sigma[t][i], rr[i]), r_transposed, MatrixSide::cols_out);
          } else {
            khatri_rao_jets(space, "t3k::probe_derivatives_transpose::sigma_kr", sigma_kr, deta_nu, xi_sigma,
                            has_right);
          }
          // dxi~_i = [i <= d-2] E ⋆_b sigma~[i+1] + [i >= 1] F ⋆_a tau~[i], orders < Kl.
          auto dxi = r3(g, w.dxi, no[i]);
          if (has_right) {
            contract_jets(space, "t3k::probe_derivatives_transpose::dxi", dxi, J4c(em), ContractAxis::first,
                          c3(g, w.sigma[t][i + 1], rr[i + 1]), JetPairing::correlate_y_fixed, false);
          }
          if (has_left) {
            contract_jets(space, "t3k::probe_derivatives_transpose::dxi", dxi, J4c(fm), ContractAxis::first,
                          c3(g, w.tau[t][i], rl[i]), JetPairing::correlate_y_fixed, has_right);
          }
          if (!has_left && !has_right) fill_zero_jet(space, dxi);  // d = 1: V enters z only
        });
        J3c const tau_i = has_left ? c3(chunk, w.tau[t][i], rl[i]) : J3c();
        J3c const sigma_kr = flat_c(kr4(chunk, 1, nu[i], rr[i + 1]));
        J3c const frame_kr = flat_c(kr4(chunk, 0, nu[i], rr[i + 1]));
        J3c const dxi = c3(chunk, w.dxi, no[i]);
        if (summed) {
          auto out_v = Kokkos::subview(out.tucker[i], t, Kokkos::ALL, Kokkos::ALL);
          auto out_h = Kokkos::subview(out.tt[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
          // Block partials (device backends, chunks of several blocks) as a (blocks * rows of the core) matrix.
          std::size_t const blocks = summed_block_partials(rows, block_size);
          auto partials = [&](std::size_t core_rows, std::size_t cols) {
            return Matrix<Scalar, Mem>(w.partials.data(), blocks * core_rows, blocks > 0 ? cols : 0);
          };
          assemble_tucker_summed(space, out_v, c3(chunk, w.eta, no[i]), c3(chunk, w.resid[t][i], big_n[i]), dxi,
                                 c3(chunk, w.omega[i], big_n[i]), partials(no[i], big_n[i]));
          assemble_tt_summed(space, out_h, c3(chunk, w.mu[i], rl[i]), sigma_kr, tau_i, frame_kr, has_left,
                             partials(rl[i], nu[i] * rr[i + 1]));
        } else {
          auto out_v = Kokkos::subview(out.tucker[i], std::make_pair(t * n_probes, (t + 1) * n_probes), Kokkos::ALL,
                                       Kokkos::ALL);
          auto out_h = Kokkos::subview(out.tt[i], std::make_pair(t * n_probes, (t + 1) * n_probes), Kokkos::ALL,
                                       Kokkos::ALL, Kokkos::ALL);
          auto r_t = residual_entry(residuals[i], t);
          TuckerAssembly<ExecutionSpace, Scalar, Mem, ProbeView, decltype(r_t)> tucker{
              c3(chunk, w.eta, no[i]), dxi, ww[i], pp[i], r_t, s0};
          TtAssembly<ExecutionSpace, Scalar, Mem> tt{c3(chunk, w.mu[i], rl[i]), tau_i, sigma_kr, frame_kr, has_left};
          tucker.per_probe(space, out_v, s0);
          tt.per_probe(space, out_h, s0);
        }
      }
    }
  }
}

}  // namespace impl

/// J^T: back-projects residual jets into a variation gradient (docs/math.md).
///
/// For every variation v: sum_s sum_i sum_{k<=K} <J(v)_{s,i}^(k), r_{s,i}^(k)> = sum_i <V_i, V~_i> + <H_i, H~_i>.
///
/// \param space execution space the kernels run on
/// \param frame orthogonal frame of the base point
/// \param ww, pp probe vectors and directions, one (W, N_i) View per mode
/// \param residuals one View per mode, (W, K+1, N_i) for one residual or (n_t, W, K+1, N_i) for a stack of n_t;
///        only orders < K1 = min(K, d-1) + 1 are read
/// \param options sum_over_probes and chunk_size
/// \return summed: a variation stack of n_t entries; per probe: n_t * W entries, index t * W + s.
///         The result is ungauged (apply gauge_project for the Riemannian gradient).
/// Summed results are bitwise identical for every chunk size on a given backend, thread count and build.
/// Memory: one workspace of `chunk_size` probe rows, a copy of the frame's outer cores and the result (see the memory
/// model).
/// **Blocking:** no. **Throws:** DimensionMismatch naming the mode and both shapes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class ResidualView>
T3Variation<Scalar, MemorySpace> probe_derivatives_transpose(ExecutionSpace const& space,
                                                             OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                             std::vector<ProbeView> const& ww,
                                                             std::vector<ProbeView> const& pp,
                                                             std::vector<ResidualView> const& residuals,
                                                             TransposeOptions const& options = {}) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  static_assert(Kokkos::is_view<ResidualView>::value && (int(ResidualView::rank) == 3 || int(ResidualView::rank) == 4),
                "t3k::probe_derivatives_transpose: residuals must be rank-3 (W, K+1, N_i) or rank-4 "
                "(n_t, W, K+1, N_i) Views");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename ResidualView::memory_space>::accessible,
                "t3k::probe_derivatives_transpose: residuals are not accessible from the execution space");
  std::string const where = "t3k::probe_derivatives_transpose";
  auto const shapes = frame.mode_shapes();
  std::size_t const d = frame.n_modes();
  std::size_t const w = impl::check_probe_stack(where, "ww", ww, shapes);
  std::size_t const wp = impl::check_probe_stack(where, "pp", pp, shapes);
  if (wp != w) throw DimensionMismatch(impl::concat(where, ": ww has ", w, " probes but pp has ", wp));
  if (residuals.size() != d) {
    throw DimensionMismatch(impl::concat(where, ": got ", residuals.size(), " residual arrays for d = ", d, " modes"));
  }
  constexpr bool stacked = int(ResidualView::rank) == 4;
  std::size_t const nt = stacked ? residuals[0].extent(0) : 1;
  std::size_t const order_plus_one = residuals[0].extent(stacked ? 2 : 1);
  if (order_plus_one == 0) throw InvalidArgument(where + ": residuals have no orders (extent K+1 is 0)");
  for (std::size_t i = 0; i < d; ++i) {
    auto expected = std::vector<std::size_t>{w, order_plus_one, shapes[i]};
    if (stacked) expected.insert(expected.begin(), nt);
    impl::check_shape(where, impl::concat("residuals[", i, "]"), residuals[i], expected);
  }
  bool const summed = options.sum_over_probes;
  auto const sh = impl::frame_shapes(frame);
  ChunkSize const chunk =
      impl::resolve_chunk_size<ExecutionSpace, Scalar>(options.chunk_size, sh, order_plus_one - 1, w, nt);
  auto out = impl::transpose_result<Scalar, MemorySpace>(space, where, sh, nt, w, summed);
  if (w > 0 && nt > 0) {
    impl::transpose_sweep(space, frame, ww, pp, residuals, nt, impl::general_jet_length(order_plus_one - 1, d), summed,
                          impl::rows_per_chunk(chunk, w, reduction_block_size_for<ExecutionSpace>()), out);
  }
  return out;
}

/// J^T of a probe set sharded across the ranks of `comm` (docs/math.md): ww, pp and the residuals hold this
/// rank's rows. Summed (sum_over_probes = true): this rank's rows are summed chunk by chunk, and one reduction over
/// the ranks finishes the sum; the result is the same bits on every rank and equals the single-process J^T of the
/// whole probe set to rounding. Per probe: the result stays sharded (this rank's rows, index t * W_local + s).
/// chunk_size auto balances this rank's workspace against this rank's rows, which is automatic_chunk_size with
/// n_shards = comm.size() (W_local = ceil(W / n_shards) is rank 0's row count; ranks holding one row fewer may
/// pick a chunk one block smaller). Memory per rank: the single-process model at W_local rows, plus the host copy
/// of the summed result that the reduction stages (one variation, as large as the summed gradient itself).
/// **Blocking:** yes with several ranks (collective), no with one. **Throws:** as the single-process overload; the
/// shape checks are collective, so a bad input on one rank throws on every rank.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class ResidualView>
T3Variation<Scalar, MemorySpace> probe_derivatives_transpose(ExecutionSpace const& space, Communicator const& comm,
                                                             OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                             std::vector<ProbeView> const& ww,
                                                             std::vector<ProbeView> const& pp,
                                                             std::vector<ResidualView> const& residuals,
                                                             TransposeOptions const& options = {}) {
  T3Variation<Scalar, MemorySpace> out;
  impl::collective_check(comm, [&] { out = probe_derivatives_transpose(space, frame, ww, pp, residuals, options); });
  if (options.sum_over_probes) allreduce_sum(space, comm, out);
  return out;
}

}  // namespace t3k
