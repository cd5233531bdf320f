#pragma once
/// \file tangent_probe_derivatives.hpp
/// The forward Jacobian J (docs/math.md): probe jets of the tangent tensors T(v) of a stack of variations.

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/probe_checks.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/impl/workspace.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <array>
#include <vector>

namespace t3k {

/// Probe jets of a stack of tangents: one View (n_tangent, W, K+1, N_i) per mode.
template <class Scalar, class MemorySpace>
using TangentProbeJets = std::vector<Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace>>;

namespace impl {

/// The fused sweep of docs/math.md on all probes, `chunk_rows` at a time; frame edge jets are computed once
/// per chunk and shared by every tangent of the stack.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void tangent_probe_jet_sweep(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                             T3Variation<Scalar, MemorySpace> const& v, std::vector<ProbeView> const& ww,
                             std::vector<ProbeView> const& pp, int k1, TangentProbeJets<Scalar, MemorySpace> const& z,
                             ChunkSize const& chunk) {
  using Mem = MemorySpace;
  using J3 = Jet3<Scalar, Mem>;
  using J3c = Jet3<Scalar const, Mem>;
  using J4 = Jet4<Scalar, Mem>;
  using J4c = Jet4<Scalar const, Mem>;
  FrameShapes const sh = frame_shapes(frame);
  std::size_t const d = sh.d();
  std::size_t const nt = v.n_stack();
  std::size_t const n_probes = ww[0].extent(0);
  int const kl = linear_jet_length(k1);
  auto const &big_n = sh.big_n, &nu = sh.nu, &no = sh.no, &rl = sh.rl, &rr = sh.rr;

  std::size_t transient = 1, vec_max = 1;
  for (std::size_t i = 0; i < d; ++i) {
    transient = max_of(transient, max_of(max_of(rr[i] * nu[i], rl[i] * nu[i]), rl[i] * no[i]));
    transient = max_of(transient, max_of(max_of(nu[i] * rr[i + 1], no[i] * rr[i + 1]), nu[i] * rl[i + 1]));
    vec_max = max_of(vec_max, max_of(nu[i], no[i]));
  }
  struct Views {
    std::vector<J3> xi, mu, nu;             // frame edge jets
    std::vector<std::vector<J3>> dxi, tau;  // per tangent
    std::vector<J3> sigma, sigma_next;      // per tangent, current edge only
    J3 eta, deta, pack;
    std::array<Kokkos::View<Scalar*, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>, 3> t;
    // The cores of the right-to-left steps with axes reversed, (b, u, a) (permute_core_axes), filled once per call:
    // R_i, O_i, L_i and each tangent's H_i (empty where a step is Khatri-Rao first, or has no such factor).
    std::vector<J3> right_reversed, outer_reversed, left_reversed;
    std::vector<std::vector<J3>> h_reversed;
  };
  std::size_t const threads = block_threads(space);
  // Whether step i >= 1 of the right-to-left sweep forms the core products first (else Khatri-Rao jets first).
  auto product_first_right_step = [&](std::size_t i) {
    return i >= 1 && !khatri_rao_first<ExecutionSpace>(min_of(rr[i], rl[i]));
  };
  auto layout = [&](WorkspaceArena<Scalar, Mem>& arena, std::size_t c) {
    Views w;
    auto const cat = WorkspaceCategory::sweep;
    for (std::size_t i = 0; i < d; ++i) w.xi.push_back(arena.take3(cat, c, kl, nu[i]));
    for (std::size_t e = 0; e <= d; ++e) w.mu.push_back(arena.take3(cat, c, k1, e < d ? rl[e] : 0));
    for (std::size_t e = 0; e <= d; ++e) w.nu.push_back(arena.take3(cat, c, k1, e > 0 ? rr[e] : 0));
    w.dxi.resize(nt);
    w.tau.resize(nt);
    for (std::size_t t = 0; t < nt; ++t) {
      for (std::size_t i = 0; i < d; ++i) w.dxi[t].push_back(arena.take3(cat, c, kl, no[i]));
      for (std::size_t e = 0; e <= d; ++e) w.tau[t].push_back(arena.take3(cat, c, k1, (e > 0 && e < d) ? rl[e] : 0));
      w.sigma.push_back(arena.take3(cat, c, k1, impl::max_element_or(rr, 1)));
      w.sigma_next.push_back(arena.take3(cat, c, k1, impl::max_element_or(rr, 1)));
    }
    w.eta = arena.take3(cat, c, k1, vec_max);
    w.deta = arena.take3(cat, c, k1, vec_max);
    w.pack = arena.take3(cat, probe_pack_rows<ExecutionSpace>(c, threads), kl, impl::max_element_or(big_n, 1));
    for (auto& buffer : w.t) buffer = arena.take1(cat, c * k1 * transient);
    auto const fixed = WorkspaceCategory::fixed;
    w.h_reversed.resize(nt);
    for (std::size_t i = 0; i < d; ++i) {
      bool const used = product_first_right_step(i);
      w.right_reversed.push_back(arena.take3(fixed, used ? rr[i + 1] : 0, nu[i], rr[i]));
      w.outer_reversed.push_back(arena.take3(fixed, used ? rr[i + 1] : 0, no[i], rl[i]));
      w.left_reversed.push_back(arena.take3(fixed, used && i + 1 < d ? rl[i + 1] : 0, nu[i], rl[i]));
      for (std::size_t t = 0; t < nt; ++t)
        w.h_reversed[t].push_back(arena.take3(fixed, used ? rr[i + 1] : 0, nu[i], rl[i]));
    }
    return w;
  };
  std::size_t const c = sweep_chunk_rows<ExecutionSpace, Scalar, Mem>(chunk, n_probes, layout);
  auto built = build_workspace<Scalar, Mem>(space, "t3k::tangent_probe_derivatives::workspace",
                                            [&](WorkspaceArena<Scalar, Mem>& arena) { return layout(arena, c); });
  Views const& w = built.first;
  auto h_of = [&](std::size_t t, std::size_t i) { return v.tt[i].data() + t * rl[i] * nu[i] * rr[i + 1]; };
  // Once per call; the cores a step does not use are empty (the layout's).
  auto reverse = [&](J3 const& out, Scalar const* core) {
    permute_core_axes(space, "t3k::tangent_probe_derivatives::core_reversed", out, core, CoreAxes::reversed);
  };
  for (std::size_t i = 0; i < d; ++i) {
    reverse(w.right_reversed[i], frame.right_tt(i).data());
    reverse(w.outer_reversed[i], frame.outer_tt(i).data());
    reverse(w.left_reversed[i], frame.left_tt(i).data());
    for (std::size_t t = 0; t < nt; ++t) reverse(w.h_reversed[t][i], h_of(t, i));
  }

  // The chunk a pass works on starts at probe s0.
  std::size_t s0 = 0;
  // Every step is per probe: each thread carries its row range of the chunk through the whole sweep in one
  // parallel region (for_each_row_range_on_host_threads; one range of the whole chunk on device backends and one
  // thread). Buffers that the steps lay out by their own widths (eta, deta, sigma, the transient products) are seen
  // through range_rows, at offsets no step changes.
  auto pass = [&](RowRange const& g) {
    int const first_probe = int(s0 + g.first);
    auto r3 = [&](J3 const& j, std::size_t width) { return range_rows(j, g, width); };
    auto c3 = [&](J3 const& j, std::size_t width) { return J3c(range_rows(j, g, width)); };
    auto t4 = [&](int b, std::size_t p, std::size_t q) {
      return range_rows<Scalar, Mem>(w.t[b].data(), k1 * transient, g, k1, p, q);
    };
    auto flat = [&](J4 j) { return J3(j.data(), j.extent(0), k1, j.extent(2) * j.extent(3)); };
    // sigma of the current edge and of the next, swapped per range (not in the shared workspace).
    std::vector<J3> const* sigma = &w.sigma;
    std::vector<J3> const* sigma_next = &w.sigma_next;
    auto mat = [&](Scalar const* data, std::size_t m, std::size_t n) { return as_matrix<Scalar, Mem>(data, m, n); };
    auto v_of = [&](std::size_t t, std::size_t i) { return v.tucker[i].data() + t * no[i] * big_n[i]; };

    // (1) xi_i = U_i omega_i and dxi_i = V_i omega_i, every matrix applied to a block of probe vectors before the
    //     next block (one read of the probe vectors from memory).
    for (std::size_t i = 0; i < d; ++i) {
      auto product_of = [&](std::size_t q) {
        return q == 0
                   ? ProbePairProduct<Scalar, Mem>{r3(w.xi[i], nu[i]), mat(frame.up_tucker(i).data(), nu[i], big_n[i])}
                   : ProbePairProduct<Scalar, Mem>{r3(w.dxi[q - 1][i], no[i]), mat(v_of(q - 1, i), no[i], big_n[i])};
      };
      apply_to_probe_pair_products(space, "t3k::tangent_probe_derivatives::xi_dxi", 1 + nt, product_of, ww[i], pp[i],
                                   first_probe, probe_pack_slot(w.pack, g));
    }
    // (2) Right to left: nu[i] = (R_i . nu[i+1]) * xi_i; tau[i] = B * xi_i + F * dxi_i with
    //     B = H_i . nu[i+1] + [i <= d-2] L_i . tau[i+1] and F = O_i . nu[i+1]. Each product lands as (u, a), so
    //     that its contraction with xi_i or dxi_i sums whole rows into a contiguous output (the fast axpy form of
    //     contract_jets), and is formed from the cores with axes reversed (*_reversed) as a product of untransposed
    //     factors, which OpenBLAS runs in its small-matrix kernels (both as in the probe sweep).
    //     Wide ranks take the same sums Khatri-Rao jet first (khatri_rao_first):
    //     nu[i] = (xi_i ⊛ nu[i+1]) . R_i^T and
    //     tau[i] = (xi_i ⊛ nu[i+1]) . H_i^T + [i <= d-2] (xi_i ⊛ tau[i+1]) . L_i^T + (dxi_i ⊛ nu[i+1]) . O_i^T.
    fill_ones_jet(space, r3(w.nu[d], 1));
    for (std::size_t i = d - 1; i >= 1; --i) {
      if (khatri_rao_first<ExecutionSpace>(min_of(rr[i], rl[i]))) {
        auto xi_nu = t4(0, nu[i], rr[i + 1]);
        khatri_rao_then_apply_matrix(
            space, "t3k::tangent_probe_derivatives::xi_nu", xi_nu,
            KhatriRaoTerm<Scalar, Mem>{c3(w.xi[i], nu[i]), c3(w.nu[i + 1], rr[i + 1]), JetPairing::product},
            KhatriRaoTerm<Scalar, Mem>{}, false, "t3k::tangent_probe_derivatives::nu", r3(w.nu[i], rr[i]),
            mat(frame.right_tt(i).data(), rr[i], nu[i] * rr[i + 1]), MatrixSide::rows_out);
        for (std::size_t t = 0; t < nt; ++t) {
          apply_matrix(space, "t3k::tangent_probe_derivatives::tau", r3(w.tau[t][i], rl[i]), J3c(flat(xi_nu)),
                       mat(h_of(t, i), rl[i], nu[i] * rr[i + 1]), MatrixSide::rows_out, false);
          if (i + 1 < d) {
            auto xi_tau = t4(2, nu[i], rl[i + 1]);
            khatri_rao_then_apply_matrix(
                space, "t3k::tangent_probe_derivatives::xi_tau", xi_tau,
                KhatriRaoTerm<Scalar, Mem>{c3(w.xi[i], nu[i]), c3(w.tau[t][i + 1], rl[i + 1]), JetPairing::product},
                KhatriRaoTerm<Scalar, Mem>{}, false, "t3k::tangent_probe_derivatives::tau", r3(w.tau[t][i], rl[i]),
                mat(frame.left_tt(i).data(), rl[i], nu[i] * rl[i + 1]), MatrixSide::rows_out, true);
          }
          auto dxi_nu = t4(1, no[i], rr[i + 1]);
          khatri_rao_then_apply_matrix(
              space, "t3k::tangent_probe_derivatives::dxi_nu", dxi_nu,
              KhatriRaoTerm<Scalar, Mem>{c3(w.dxi[t][i], no[i]), c3(w.nu[i + 1], rr[i + 1]), JetPairing::product},
              KhatriRaoTerm<Scalar, Mem>{}, false, "t3k::tangent_probe_derivatives::tau", r3(w.tau[t][i], rl[i]),
              mat(frame.outer_tt(i).data(), rl[i], no[i] * rr[i + 1]), MatrixSide::rows_out, true);
        }
        continue;
      }
      auto dm = t4(0, nu[i], rr[i]);
      apply_matrix(space, "t3k::tangent_probe_derivatives::r_nu", flat(dm), c3(w.nu[i + 1], rr[i + 1]),
                   mat(w.right_reversed[i].data(), rr[i + 1], nu[i] * rr[i]), MatrixSide::cols_out, false);
      contract_jets(space, "t3k::tangent_probe_derivatives::nu", r3(w.nu[i], rr[i]), J4c(dm), ContractAxis::first,
                    c3(w.xi[i], nu[i]), JetPairing::product, false);
      auto fm = t4(1, no[i], rl[i]);
      apply_matrix(space, "t3k::tangent_probe_derivatives::o_nu", flat(fm), c3(w.nu[i + 1], rr[i + 1]),
                   mat(w.outer_reversed[i].data(), rr[i + 1], no[i] * rl[i]), MatrixSide::cols_out, false);
      for (std::size_t t = 0; t < nt; ++t) {
        auto bm = t4(2, nu[i], rl[i]);
        apply_matrix(space, "t3k::tangent_probe_derivatives::h_nu", flat(bm), c3(w.nu[i + 1], rr[i + 1]),
                     mat(w.h_reversed[t][i].data(), rr[i + 1], nu[i] * rl[i]), MatrixSide::cols_out, false);
        if (i + 1 < d) {
          apply_matrix(space, "t3k::tangent_probe_derivatives::l_tau", flat(bm), c3(w.tau[t][i + 1], rl[i + 1]),
                       mat(w.left_reversed[i].data(), rl[i + 1], nu[i] * rl[i]), MatrixSide::cols_out, true);
        }
        contract_jets(space, "t3k::tangent_probe_derivatives::tau", r3(w.tau[t][i], rl[i]), J4c(bm),
                      ContractAxis::first, c3(w.xi[i], nu[i]), JetPairing::product, false);
        contract_jets(space, "t3k::tangent_probe_derivatives::tau", r3(w.tau[t][i], rl[i]), J4c(fm),
                      ContractAxis::first, c3(w.dxi[t][i], no[i]), JetPairing::product, true);
      }
    }
    // (3) Left to right.
    fill_ones_jet(space, r3(w.mu[0], 1));
    for (std::size_t i = 0; i < d; ++i) {
      bool const has_right = i + 1 < d;  // i <= d-2
      auto em = t4(0, no[i], rr[i + 1]);
      apply_matrix(space, "t3k::tangent_probe_derivatives::mu_o", flat(em), c3(w.mu[i], rl[i]),
                   mat(frame.outer_tt(i).data(), rl[i], no[i] * rr[i + 1]), MatrixSide::cols_out, false);
      contract_jets(space, "t3k::tangent_probe_derivatives::eta", r3(w.eta, no[i]), J4c(em), ContractAxis::second,
                    c3(w.nu[i + 1], rr[i + 1]), JetPairing::product, false);
      auto cm = t4(1, nu[i], rl[i + 1]);
      if (has_right) {
        apply_matrix(space, "t3k::tangent_probe_derivatives::mu_l", flat(cm), c3(w.mu[i], rl[i]),
                     mat(frame.left_tt(i).data(), rl[i], nu[i] * rl[i + 1]), MatrixSide::cols_out, false);
      }
      for (std::size_t t = 0; t < nt; ++t) {
        auto am = t4(2, nu[i], rr[i + 1]);
        apply_matrix(space, "t3k::tangent_probe_derivatives::mu_h", flat(am), c3(w.mu[i], rl[i]),
                     mat(h_of(t, i), rl[i], nu[i] * rr[i + 1]), MatrixSide::cols_out, false);
        if (i >= 1) {
          apply_matrix(space, "t3k::tangent_probe_derivatives::sigma_r", flat(am), c3((*sigma)[t], rr[i]),
                       mat(frame.right_tt(i).data(), rr[i], nu[i] * rr[i + 1]), MatrixSide::cols_out, true);
        }
        contract_jets(space, "t3k::tangent_probe_derivatives::deta", r3(w.deta, nu[i]), J4c(am), ContractAxis::second,
                      c3(w.nu[i + 1], rr[i + 1]), JetPairing::product, false);
        if (has_right) {
          contract_jets(space, "t3k::tangent_probe_derivatives::deta", r3(w.deta, nu[i]), J4c(cm), ContractAxis::second,
                        c3(w.tau[t][i + 1], rl[i + 1]), JetPairing::product, true);
          contract_jets(space, "t3k::tangent_probe_derivatives::sigma", r3((*sigma_next)[t], rr[i + 1]), J4c(am),
                        ContractAxis::first, c3(w.xi[i], nu[i]), JetPairing::product, false);
          contract_jets(space, "t3k::tangent_probe_derivatives::sigma", r3((*sigma_next)[t], rr[i + 1]), J4c(em),
                        ContractAxis::first, c3(w.dxi[t][i], no[i]), JetPairing::product, true);
        }
        auto zt = Kokkos::subview(z[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
        write_probe_jets(space, "t3k::tangent_probe_derivatives::z", zt, first_probe, int(g.count),
                         mat(frame.up_tucker(i).data(), nu[i], big_n[i]), c3(w.deta, nu[i]),
                         mat(v_of(t, i), no[i], big_n[i]), c3(w.eta, no[i]));
      }
      if (has_right) {
        contract_jets(space, "t3k::tangent_probe_derivatives::mu", r3(w.mu[i + 1], rl[i + 1]), J4c(cm),
                      ContractAxis::first, c3(w.xi[i], nu[i]), JetPairing::product, false);
        std::swap(sigma, sigma_next);
      }
    }
  };
  for (; s0 < n_probes; s0 += c) {
    for_each_row_range_on_host_threads(space, min_of(c, n_probes - s0), reduction_block_size_for<ExecutionSpace>(),
                                       pass);
  }
}

}  // namespace impl

/// The forward Jacobian J written into caller-owned arrays: z[i] is (n_tangent, W, K+1, N_i) for every mode, and is
/// overwritten with the probe jets of the tangent tensors T(v_t). The same bits as tangent_probe_derivatives,
/// without allocating the output (see probe_derivatives_into for why it matters).
///
/// \param space execution space the kernels run on
/// \param frame orthogonal frame of the base point
/// \param v stack of n_tangent variations at the frame
/// \param ww, pp probe vectors and directions, one (W, N_i) View per mode
/// \param order K >= 0
/// \param z one (n_tangent, W, K+1, N_i) View per mode; must not overlap ww or pp
/// \param chunk_size probes per pass, as for tangent_probe_derivatives
/// **Blocking:** no. **Throws:** DimensionMismatch naming the array,
/// the mode and both shapes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void tangent_probe_derivatives_into(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                    T3Variation<Scalar, MemorySpace> const& v, std::vector<ProbeView> const& ww,
                                    std::vector<ProbeView> const& pp, std::size_t order,
                                    TangentProbeJets<Scalar, MemorySpace> const& z,
                                    ChunkSize chunk_size = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  std::string const where = "t3k::tangent_probe_derivatives";
  auto const shapes = frame.mode_shapes();
  std::size_t const nt = impl::check_variation(where, frame, v);
  std::size_t const w = impl::check_probe_stack(where, "ww", ww, shapes);
  std::size_t const wp = impl::check_probe_stack(where, "pp", pp, shapes);
  if (wp != w) throw DimensionMismatch(impl::concat(where, ": ww has ", w, " probes but pp has ", wp));
  if (z.size() != shapes.size()) {
    throw DimensionMismatch(impl::concat(where, ": got ", z.size(), " z arrays for d = ", shapes.size(),
                                         " modes; expected one (n_tangent x W x (K+1) x N_i) array per mode"));
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    impl::check_shape(where, impl::concat("z[", i, "]"), z[i], {nt, w, order + 1, shapes[i]});
  }
  if (nt > 0 && w > 0) {
    impl::tangent_probe_jet_sweep(space, frame, v, ww, pp, impl::general_jet_length(order, frame.n_modes()), z,
                                  chunk_size);
  }
}

/// The forward Jacobian J applied to a stack of variations: the probe jets of the tangent tensors T(v_t)
/// (docs/math.md), one View (n_tangent, W, K+1, N_i) per mode; orders >= d are zero.
///
/// \param space execution space the kernels run on
/// \param frame orthogonal frame of the base point
/// \param v stack of n_tangent variations at the frame (ungauged variations are fine: J acts on all entries)
/// \param ww, pp probe vectors and directions, one (W, N_i) View per mode (subviews and const Views are fine)
/// \param order K >= 0
/// \param chunk_size probes per pass (bounds the edge-jet workspace; results do not depend on it). `auto` (the
///        default): all probes at once on device backends, a cache-sized chunk on host backends.
/// **Blocking:** no. **Throws:** DimensionMismatch naming the mode and both shapes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
TangentProbeJets<Scalar, MemorySpace> tangent_probe_derivatives(ExecutionSpace const& space,
                                                                OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                                T3Variation<Scalar, MemorySpace> const& v,
                                                                std::vector<ProbeView> const& ww,
                                                                std::vector<ProbeView> const& pp, std::size_t order,
                                                                ChunkSize chunk_size = ChunkSize::automatic()) {
  // Shapes for the output; tangent_probe_derivatives_into checks every argument.
  auto const shapes = frame.mode_shapes();
  std::size_t const w = impl::check_probe_stack("t3k::tangent_probe_derivatives", "ww", ww, shapes);
  TangentProbeJets<Scalar, MemorySpace> z;
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    z.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                      "t3k::tangent_probe_derivatives::z_" + std::to_string(i)),
                   v.n_stack(), w, order + 1, shapes[i]);
  }
  tangent_probe_derivatives_into(space, frame, v, ww, pp, order, z, chunk_size);
  return z;
}

}  // namespace t3k
