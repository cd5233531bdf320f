#pragma once
/// \file probe_mode_derivatives.hpp
/// The probe jets of one chosen mode (docs/math.md): every mode but `mode` contracted with w_m + t p_m. What a
/// Taylor surrogate T(x, .., x, .) needs, at the cost of one probe instead of all d (probe_derivatives).

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"

#include <vector>

namespace t3k {

namespace impl {

/// One chunked sweep per call: xi_m = U_m omega_m for m != mode; mu from the left up to `mode` and nu from the right
/// down to mode + 1 (each a Khatri-Rao jet and one product with the core per step); eta = (mu . G_mode) ⊛ nu; and
/// z = U_mode^T eta.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class OutputView>
void t3_mode_probe_sweep(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                         std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp, std::size_t mode, int k1,
                         OutputView const& z, ChunkSize const& chunk) {
  using Mem = MemorySpace;
  using J3c = Jet3<Scalar const, Mem>;
  using Term = KhatriRaoTerm<Scalar, Mem>;
  std::size_t const d = x.n_modes(), n_probes = ww[0].extent(0);
  int const kl = linear_jet_length(k1);
  auto const n = x.tucker_ranks();
  auto const r = x.tt_ranks();
  auto const big_n = x.mode_shapes();
  ScalarSamples<ProbeView, EntryIndices<Mem>> const samples{MeasurementKind::applies, ww, pp, {}};
  std::size_t kr_max = 1;
  for (std::size_t i = 0; i < d; ++i) kr_max = max_of(kr_max, max_of(r[i] * n[i], n[i] * r[i + 1]));
  std::size_t const r_max = max_element_or(r, 1), n_max = max_element_or(n, 1);
  struct Views {
    std::vector<Jet3<Scalar, Mem>> xi;
    Jet3<Scalar, Mem> mu, mu_next, nu, nu_next, eta, omega;
    Kokkos::View<Scalar*, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> kr;
  };
  auto layout = [&](WorkspaceArena<Scalar, Mem>& arena, std::size_t c) {
    Views v;
    auto const cat = WorkspaceCategory::sweep;
    for (std::size_t i = 0; i < d; ++i) v.xi.push_back(arena.take3(cat, c, kl, i == mode ? 0 : n[i]));
    v.mu = arena.take3(cat, c, k1, r_max);
    v.mu_next = arena.take3(cat, c, k1, r_max);
    v.nu = arena.take3(cat, c, k1, r_max);
    v.nu_next = arena.take3(cat, c, k1, r_max);
    v.eta = arena.take3(cat, c, k1, n_max);
    v.omega = arena.take3(cat, c, kl, max_element_or(big_n, 1));
    v.kr = arena.take1(cat, c * k1 * kr_max);
    return v;
  };
  std::size_t const c = sweep_chunk_rows<ExecutionSpace, Scalar, Mem>(chunk, n_probes, layout);
  auto built = build_workspace<Scalar, Mem>(space, "t3k::probe_mode_derivatives::workspace",
                                            [&](WorkspaceArena<Scalar, Mem>& arena) { return layout(arena, c); });
  Views const& v = built.first;
  for (std::size_t s0 = 0; s0 < n_probes; s0 += c) {
    std::size_t const rows = min_of(c, n_probes - s0);
    auto rows_of = [&](Jet3<Scalar, Mem> const& j, std::size_t width) {
      return Jet3<Scalar, Mem>(j.data(), rows, j.extent(1), width);
    };
    for (std::size_t i = 0; i < d; ++i) {
      if (i == mode) continue;
      apply_factor_to_samples(space, "t3k::probe_mode_derivatives::xi", rows_of(v.xi[i], n[i]),
                              as_matrix<Scalar, Mem>(x.tucker_core(i).data(), n[i], big_n[i]), samples, i, int(s0),
                              rows_of(v.omega, big_n[i]));
    }
    Jet3<Scalar, Mem> mu = v.mu, mu_next = v.mu_next, nu = v.nu, nu_next = v.nu_next;
    fill_ones_jet(space, rows_of(mu, r[0]));
    for (std::size_t i = 0; i < mode; ++i) {
      khatri_rao_then_apply_matrix(space, "t3k::probe_mode_derivatives::mu_xi", Jet4<Scalar, Mem>(v.kr.data(), rows, k1, r[i], n[i]),
                                   Term{J3c(rows_of(mu, r[i])), J3c(rows_of(v.xi[i], n[i])), JetPairing::product},
                                   Term{}, false, "t3k::probe_mode_derivatives::mu", rows_of(mu_next, r[i + 1]),
                                   as_matrix<Scalar, Mem>(x.tt_core(i).data(), r[i] * n[i], r[i + 1]),
                                   MatrixSide::cols_out);
      std::swap(mu, mu_next);
    }
    fill_ones_jet(space, rows_of(nu, r[d]));
    for (std::size_t i = d - 1; i > mode; --i) {
      khatri_rao_then_apply_matrix(space, "t3k::probe_mode_derivatives::xi_nu", Jet4<Scalar, Mem>(v.kr.data(), rows, k1, n[i], r[i + 1]),
                                   Term{J3c(rows_of(v.xi[i], n[i])), J3c(rows_of(nu, r[i + 1])), JetPairing::product},
                                   Term{}, false, "t3k::probe_mode_derivatives::nu", rows_of(nu_next, r[i]),
                                   as_matrix<Scalar, Mem>(x.tt_core(i).data(), r[i], n[i] * r[i + 1]),
                                   MatrixSide::rows_out);
      std::swap(nu, nu_next);
    }
    Jet4<Scalar, Mem> const e(v.kr.data(), rows, k1, n[mode], r[mode + 1]);
    apply_matrix(space, "t3k::probe_mode_derivatives::mu_times_core",
                 Jet3<Scalar, Mem>(e.data(), rows, k1, n[mode] * r[mode + 1]), J3c(rows_of(mu, r[mode])),
                 as_matrix<Scalar, Mem>(x.tt_core(mode).data(), r[mode], n[mode] * r[mode + 1]), MatrixSide::cols_out,
                 false);
    contract_jets(space, "t3k::probe_mode_derivatives::eta", rows_of(v.eta, n[mode]), Jet4<Scalar const, Mem>(e),
                  ContractAxis::second, J3c(rows_of(nu, r[mode + 1])), JetPairing::product, false);
    auto const u = as_matrix<Scalar, Mem>(x.tucker_core(mode).data(), n[mode], big_n[mode]);
    write_probe_jets(space, "t3k::probe_mode_derivatives::z", z, int(s0), int(rows), u,
                     J3c(rows_of(v.eta, n[mode])), u, J3c());
  }
}

}  // namespace impl

/// Probe jets of one mode: z(s, k, j) = z_mode^(k)[j] of probe s (docs/math.md), every mode but `mode` contracted
/// with w_m + t p_m; the same numbers as mode `mode` of probe_derivatives (to rounding), for the work of one mode.
/// \param space execution space the kernels run on
/// \param x the T3
/// \param ww, pp one (W, N_i) View per mode (those of `mode` are not read but must have its shape; pp may be empty
///        when order = 0)
/// \param order K
/// \param mode the mode left free
/// \param z (W, K+1, N_mode), written (orders >= d are zero)
/// \param chunk probes per pass of the sweep (the result does not depend on it)
/// **Blocking:** no. **Throws:** DimensionMismatch naming the array and both shapes; InvalidArgument for a mode
/// index >= d.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class OutputView>
void probe_mode_derivatives_into(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                 std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp, std::size_t order,
                                 std::size_t mode, OutputView const& z, ChunkSize chunk = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  static_assert(impl::CheckViewArgument<ExecutionSpace, OutputView, 3>::value, "");
  std::string const where = "t3k::probe_mode_derivatives";
  auto const shapes = x.mode_shapes();
  if (mode >= x.n_modes()) {
    throw InvalidArgument(impl::concat(where, ": mode ", mode, " of a T3 with d = ", x.n_modes(), " modes"));
  }
  std::size_t const w = impl::check_probe_stack(where, "ww", ww, shapes);
  if (order > 0) {  // the directions are read only for jets
    std::size_t const wp = impl::check_probe_stack(where, "pp", pp, shapes);
    if (wp != w) throw DimensionMismatch(impl::concat(where, ": ww has ", w, " probes but pp has ", wp));
  }
  impl::check_shape(where, "z", z, {w, order + 1, shapes[mode]});
  if (w == 0) return;
  impl::t3_mode_probe_sweep(space, x, ww, pp, mode, impl::general_jet_length(order, x.n_modes()), z, chunk);
}

/// probe_mode_derivatives_into into a new (W, K+1, N_mode) View. **Blocking:** no. **Throws:** as the _into form.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace> probe_mode_derivatives(
    ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x, std::vector<ProbeView> const& ww,
    std::vector<ProbeView> const& pp, std::size_t order, std::size_t mode, ChunkSize chunk = ChunkSize::automatic()) {
  if (mode >= x.n_modes()) {
    throw InvalidArgument(
        impl::concat("t3k::probe_mode_derivatives: mode ", mode, " of a T3 with d = ", x.n_modes(), " modes"));
  }
  Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace> z(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::probe_mode_derivatives"),
      ww.empty() ? 0 : ww[0].extent(0), order + 1, x.mode_shapes()[mode]);
  probe_mode_derivatives_into(space, x, ww, pp, order, mode, z, chunk);
  return z;
}

}  // namespace t3k
