#pragma once
/// \file tangent_apply_derivatives.hpp
/// The Jacobian J of scalar measurements (entries, applies) on the tangent space (docs/math.md): the jets of the
/// tangent tensor T(v) measured at each sample, for a stack of variations.

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <vector>

namespace t3k {

/// J v of scalar measurements for a stack of n_t variations: (n_t, W, K+1).
template <class Scalar, class MemorySpace>
using TangentScalarJets = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;

namespace impl {

/// The scalar tangent sweep (docs/math.md): per chunk, xi_i = U_i omega_i and dxi_i = V_i omega_i, then left to right
///   mu[i+1]    = (mu[i] ⊛ xi_i) . L_i
///   sigma[i+1] = (mu[i] ⊛ xi_i) . H_i + [i >= 1] (sigma[i] ⊛ xi_i) . R_i + (mu[i] ⊛ dxi_i) . O_i
/// from mu[0] = 1, sigma[0] = 0; J v = sigma[d] (width rR_d = 1).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class IndexView>
void scalar_tangent_sweep(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                          T3Variation<Scalar, MemorySpace> const& v, ScalarSamples<ProbeView, IndexView> const& samples,
                          int k1, TangentScalarJets<Scalar, MemorySpace> const& out, ChunkSize const& chunk) {
  using Mem = MemorySpace;
  using J3c = Jet3<Scalar const, Mem>;
  using Term = KhatriRaoTerm<Scalar, Mem>;
  FrameShapes const sh = frame_shapes(frame);
  std::size_t const d = sh.d(), nt = v.n_stack(), n_samples = samples.n_samples();
  int const kl = linear_jet_length(k1);
  auto const &big_n = sh.big_n, &nu = sh.nu, &no = sh.no, &rl = sh.rl, &rr = sh.rr;
  std::size_t kr_mu = 1, kr_other = 1;
  for (std::size_t i = 0; i < d; ++i) {
    kr_mu = max_of(kr_mu, rl[i] * nu[i]);
    kr_other = max_of(kr_other, max_of(rr[i] * nu[i], rl[i] * no[i]));
  }
  std::size_t const rl_max = max_element_or(rl, 1), rr_max = max_element_or(rr, 1);
  std::size_t const omega_n = samples.packs_omega(kl) ? max_element_or(big_n, 1) : 0;
  struct Views {
    std::vector<Jet3<Scalar, Mem>> xi, sigma, sigma_next;
    std::vector<std::vector<Jet3<Scalar, Mem>>> dxi;  // [t][i]
    Jet3<Scalar, Mem> mu, mu_next, omega;
    Kokkos::View<Scalar*, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> kr_mu, kr_other;
  };
  auto layout = [&](WorkspaceArena<Scalar, Mem>& arena, std::size_t c) {
    Views w;
    auto const cat = WorkspaceCategory::sweep;
    for (std::size_t i = 0; i < d; ++i) w.xi.push_back(arena.take3(cat, c, kl, nu[i]));
    w.dxi.resize(nt);
    for (std::size_t t = 0; t < nt; ++t) {
      for (std::size_t i = 0; i < d; ++i) w.dxi[t].push_back(arena.take3(cat, c, kl, no[i]));
      w.sigma.push_back(arena.take3(cat, c, k1, rr_max));
      w.sigma_next.push_back(arena.take3(cat, c, k1, rr_max));
    }
    w.mu = arena.take3(cat, c, k1, rl_max);
    w.mu_next = arena.take3(cat, c, k1, rl_max);
    w.omega = arena.take3(cat, c, kl, omega_n);
    w.kr_mu = arena.take1(cat, c * k1 * kr_mu);
    w.kr_other = arena.take1(cat, c * k1 * kr_other);
    return w;
  };
  std::size_t const c = sweep_chunk_rows<ExecutionSpace, Scalar, Mem>(chunk, n_samples, layout);
  auto built = build_workspace<Scalar, Mem>(space, "t3k::tangent_apply_derivatives::workspace",
                                            [&](WorkspaceArena<Scalar, Mem>& arena) { return layout(arena, c); });
  Views const& w = built.first;
  auto mat = [&](Scalar const* data, std::size_t m, std::size_t n) { return as_matrix<Scalar, Mem>(data, m, n); };
  for (std::size_t s0 = 0; s0 < n_samples; s0 += c) {
    std::size_t const rows = min_of(c, n_samples - s0);
    auto rows_of = [&](Jet3<Scalar, Mem> const& j, std::size_t width) {
      return Jet3<Scalar, Mem>(j.data(), rows, j.extent(1), width);
    };
    auto crows_of = [&](Jet3<Scalar, Mem> const& j, std::size_t width) { return J3c(rows_of(j, width)); };
    for (std::size_t i = 0; i < d; ++i) {
      auto omega = rows_of(w.omega, omega_n > 0 ? big_n[i] : 0);
      apply_factor_to_samples(space, "t3k::tangent_apply_derivatives::xi", rows_of(w.xi[i], nu[i]),
                              mat(frame.up_tucker(i).data(), nu[i], big_n[i]), samples, i, int(s0), omega);
      for (std::size_t t = 0; t < nt; ++t) {
        auto const vt = mat(v.tucker[i].data() + t * no[i] * big_n[i], no[i], big_n[i]);
        if (samples.packs_omega(kl)) {  // omega_i is packed already
          apply_matrix(space, "t3k::tangent_apply_derivatives::dxi", rows_of(w.dxi[t][i], no[i]), J3c(omega), vt,
                       MatrixSide::rows_out, false);
        } else {
          apply_factor_to_samples(space, "t3k::tangent_apply_derivatives::dxi", rows_of(w.dxi[t][i], no[i]), vt,
                                  samples, i, int(s0), omega);
        }
      }
    }
    Jet3<Scalar, Mem> mu = w.mu, mu_next = w.mu_next;
    std::vector<Jet3<Scalar, Mem>> sigma = w.sigma, sigma_next = w.sigma_next;
    fill_ones_jet(space, rows_of(mu, 1));
    for (std::size_t i = 0; i < d; ++i) {
      Jet4<Scalar, Mem> const kr(w.kr_mu.data(), rows, k1, rl[i], nu[i]);
      khatri_rao_jets(space, "t3k::tangent_apply_derivatives::mu_xi", kr,
                      Term{crows_of(mu, rl[i]), crows_of(w.xi[i], nu[i]), JetPairing::product});
      J3c const kr_flat(kr.data(), rows, k1, rl[i] * nu[i]);
      for (std::size_t t = 0; t < nt; ++t) {
        auto next = rows_of(sigma_next[t], rr[i + 1]);
        apply_matrix(space, "t3k::tangent_apply_derivatives::sigma_h", next, kr_flat,
                     mat(v.tt[i].data() + t * rl[i] * nu[i] * rr[i + 1], rl[i] * nu[i], rr[i + 1]),
                     MatrixSide::cols_out, false);
        if (i >= 1) {
          khatri_rao_then_apply_matrix(
              space, "t3k::tangent_apply_derivatives::sigma_xi", Jet4<Scalar, Mem>(w.kr_other.data(), rows, k1, rr[i], nu[i]),
              Term{crows_of(sigma[t], rr[i]), crows_of(w.xi[i], nu[i]), JetPairing::product}, Term{}, false,
              "t3k::tangent_apply_derivatives::sigma_r", next, mat(frame.right_tt(i).data(), rr[i] * nu[i], rr[i + 1]),
              MatrixSide::cols_out, true);
        }
        khatri_rao_then_apply_matrix(
            space, "t3k::tangent_apply_derivatives::mu_dxi", Jet4<Scalar, Mem>(w.kr_other.data(), rows, k1, rl[i], no[i]),
            Term{crows_of(mu, rl[i]), crows_of(w.dxi[t][i], no[i]), JetPairing::product}, Term{}, false,
            "t3k::tangent_apply_derivatives::sigma_o", next, mat(frame.outer_tt(i).data(), rl[i] * no[i], rr[i + 1]),
            MatrixSide::cols_out, true);
      }
      if (i + 1 < d) {
        apply_matrix(space, "t3k::tangent_apply_derivatives::mu", rows_of(mu_next, rl[i + 1]), kr_flat,
                     mat(frame.left_tt(i).data(), rl[i] * nu[i], rl[i + 1]), MatrixSide::cols_out, false);
        std::swap(mu, mu_next);
      }
      std::swap(sigma, sigma_next);
    }
    for (std::size_t t = 0; t < nt; ++t) {
      write_scalar_jets(space, "t3k::tangent_apply_derivatives::write",
                        Kokkos::subview(out, t, Kokkos::ALL, Kokkos::ALL), crows_of(sigma[t], 1), int(s0));
    }
  }
}

template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class IndexView>
void tangent_scalar_derivatives_into(ExecutionSpace const& space, std::string const& where,
                                     OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                     T3Variation<Scalar, MemorySpace> const& v,
                                     ScalarSamples<ProbeView, IndexView> const& samples, std::size_t order,
                                     TangentScalarJets<Scalar, MemorySpace> const& out, ChunkSize chunk) {
  std::size_t const nt = check_variation(where, frame, v);
  std::size_t const w = check_scalar_samples(space, where, samples, frame.mode_shapes(), order > 0);
  check_shape(where, "out", out, {nt, w, order + 1});
  if (w == 0 || nt == 0) return;
  scalar_tangent_sweep(space, frame, v, samples, scalar_jet_length(order, frame.n_modes()), out, chunk);
}

}  // namespace impl

/// J v for applies (docs/math.md): out(t, s, k) = the Taylor coefficient of t^k of T(v_t) applied to sample s's
/// vectors w + t p, for each variation v_t of the stack (ungauged variations are fine: J acts on all entries).
/// \param space execution space the kernels run on
/// \param frame orthogonal frame of the base point
/// \param v a stack of n_t variations at the frame
/// \param ww, pp the samples' vectors and directions, one (W, N_i) View per mode; pp may be empty when order = 0
/// \param order K
/// \param out (n_t, W, K+1), written; orders above d are zero
/// \param chunk samples per pass of the sweep (the result does not depend on it)
/// **Blocking:** no. **Throws:** DimensionMismatch naming the array and both shapes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void tangent_apply_derivatives_into(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                    T3Variation<Scalar, MemorySpace> const& v, std::vector<ProbeView> const& ww,
                                    std::vector<ProbeView> const& pp, std::size_t order,
                                    TangentScalarJets<Scalar, MemorySpace> const& out,
                                    ChunkSize chunk = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  impl::tangent_scalar_derivatives_into(
      space, "t3k::tangent_apply_derivatives", frame, v,
      impl::ScalarSamples<ProbeView, EntryIndices<MemorySpace>>{MeasurementKind::applies, ww, pp, {}}, order, out,
      chunk);
}

/// tangent_apply_derivatives_into into a new (n_t, W, K+1) View. **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
TangentScalarJets<Scalar, MemorySpace> tangent_apply_derivatives(ExecutionSpace const& space,
                                                                 OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                                 T3Variation<Scalar, MemorySpace> const& v,
                                                                 std::vector<ProbeView> const& ww,
                                                                 std::vector<ProbeView> const& pp, std::size_t order,
                                                                 ChunkSize chunk = ChunkSize::automatic()) {
  TangentScalarJets<Scalar, MemorySpace> out(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::tangent_apply_derivatives"), v.n_stack(),
      ww.empty() ? 0 : ww[0].extent(0), order + 1);
  tangent_apply_derivatives_into(space, frame, v, ww, pp, order, out, chunk);
  return out;
}

/// J v for entries: as tangent_apply_derivatives with the one-hot vectors of indices(s, :) (docs/math.md).
/// **Blocking:** yes (indices are range-checked). **Throws:** InvalidArgument for an index out of range.
template <class ExecutionSpace, class Scalar, class MemorySpace, class IndexView, class ProbeView>
void tangent_entry_derivatives_into(ExecutionSpace const& space, OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                    T3Variation<Scalar, MemorySpace> const& v, IndexView const& indices,
                                    std::vector<ProbeView> const& pp, std::size_t order,
                                    TangentScalarJets<Scalar, MemorySpace> const& out,
                                    ChunkSize chunk = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, IndexView, 2>::value, "");
  impl::tangent_scalar_derivatives_into(
      space, "t3k::tangent_entry_derivatives", frame, v,
      impl::ScalarSamples<ProbeView, IndexView>{MeasurementKind::entries, {}, pp, indices}, order, out, chunk);
}

/// tangent_entry_derivatives_into into a new (n_t, W, K+1) View. **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class IndexView,
          class ProbeView = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>>
TangentScalarJets<Scalar, MemorySpace> tangent_entry_derivatives(ExecutionSpace const& space,
                                                                 OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                                 T3Variation<Scalar, MemorySpace> const& v,
                                                                 IndexView const& indices,
                                                                 std::vector<ProbeView> const& pp, std::size_t order,
                                                                 ChunkSize chunk = ChunkSize::automatic()) {
  TangentScalarJets<Scalar, MemorySpace> out(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::tangent_entry_derivatives"), v.n_stack(),
      indices.extent(0), order + 1);
  tangent_entry_derivatives_into(space, frame, v, indices, pp, order, out, chunk);
  return out;
}

}  // namespace t3k
