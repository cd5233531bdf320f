#pragma once
/// \file probe_derivatives.hpp
/// Probes and probe jets of a T3 (docs/math.md): for probe pairs (w, p), the Taylor coefficients
/// z_i^(k), k = 0..K, of z_i(t) = X contracted with w_m + t p_m in every mode m != i.

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/probe_checks.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/impl/workspace.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"

#include <vector>

namespace t3k {

/// Probe jets of every mode, one View (W, K+1, N_i) per mode.
template <class Scalar, class MemorySpace>
using ProbeJets = std::vector<Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>>;

/// Order-0 probes of every mode, one View (W, N_i) per mode.
template <class Scalar, class MemorySpace>
using Probes = std::vector<Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>>;

namespace impl {

/// The T3 probe-jet sweep of docs/math.md on probes [s0, s0 + rows), written into z (any (W, K+1, N_i) Views).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class OutputView>
void t3_probe_jet_sweep(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                        std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp, int k1,
                        std::vector<OutputView> const& z, ChunkSize const& chunk) {
  using Mem = MemorySpace;
  std::size_t const d = x.n_modes();
  std::size_t const n_probes = ww[0].extent(0);
  int const kl = linear_jet_length(k1);
  auto const n = x.tucker_ranks();
  auto const r = x.tt_ranks();

  struct Views {
    std::vector<Jet3<Scalar, Mem>> xi, nu;
    Jet3<Scalar, Mem> mu, mu_next, eta, pack;
    std::vector<Jet3<Scalar, Mem>> core_reversed;  // G_i with axes (b, u, a), for the right-to-left steps
    Kokkos::View<Scalar*, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> transient;
  };
  std::size_t transient_size = 0;
  std::size_t r_max = 0, n_max = 0;
  for (std::size_t i = 0; i < d; ++i) {
    transient_size = max_of(transient_size, max_of(r[i] * n[i], n[i] * r[i + 1]));
    n_max = max_of(n_max, n[i]);
  }
  for (auto e : r) r_max = max_of(r_max, e);
  std::size_t const big_n_max = max_element_or(x.mode_shapes(), 1);
  std::size_t const threads = block_threads(space);
  auto layout = [&](WorkspaceArena<Scalar, Mem>& arena, std::size_t c) {
    Views v;
    auto const cat = WorkspaceCategory::sweep;
    for (std::size_t i = 0; i < d; ++i) v.xi.push_back(arena.take3(cat, c, kl, n[i]));
    for (std::size_t e = 0; e <= d; ++e) v.nu.push_back(arena.take3(cat, c, k1, e == 0 ? 0 : r[e]));
    v.mu = arena.take3(cat, c, k1, r_max);
    v.mu_next = arena.take3(cat, c, k1, r_max);
    v.eta = arena.take3(cat, c, k1, n_max);
    v.pack = arena.take3(cat, probe_pack_rows<ExecutionSpace>(c, threads), kl, big_n_max);
    v.transient = arena.take1(cat, c * k1 * transient_size);
    for (std::size_t i = 0; i < d; ++i) {
      bool const used = i >= 1 && !khatri_rao_first<ExecutionSpace>(r[i]);
      v.core_reversed.push_back(arena.take3(WorkspaceCategory::fixed, used ? r[i + 1] : 0, n[i], r[i]));
    }
    return v;
  };
  std::size_t const c = sweep_chunk_rows<ExecutionSpace, Scalar, Mem>(chunk, n_probes, layout);
  auto built = build_workspace<Scalar, Mem>(space, "t3k::probe_derivatives::workspace",
                                            [&](WorkspaceArena<Scalar, Mem>& arena) { return layout(arena, c); });
  Views const& v = built.first;
  for (std::size_t i = 0; i < d; ++i) {  // once per call (empty where unused)
    permute_core_axes(space, "t3k::probe_derivatives::core_reversed", v.core_reversed[i], x.tt_core(i).data(),
                      CoreAxes::reversed);
  }

  // The chunk a pass works on starts at probe s0.
  std::size_t s0 = 0;
  // Every step is per probe: each thread carries its row range of the chunk through the whole sweep in one
  // parallel region (for_each_row_range_on_host_threads; one range of the whole chunk on device backends and one
  // thread). Buffers that the steps lay out by their own widths (mu, eta, the transient products) are seen through
  // range_rows, at offsets no step changes.
  auto pass = [&](RowRange const& g) {
    int const first_probe = int(s0 + g.first);
    auto rows_of = [&](Jet3<Scalar, Mem> const& j, std::size_t width) { return range_rows(j, g, width); };
    auto transient4 = [&](std::size_t p, std::size_t q) {
      return range_rows<Scalar, Mem>(v.transient.data(), k1 * transient_size, g, k1, p, q);
    };
    Jet3<Scalar, Mem> mu = v.mu, mu_next = v.mu_next;  // swapped per range, not in the shared workspace
    for (std::size_t i = 0; i < d; ++i) {
      auto u = as_matrix<Scalar, Mem>(x.tucker_core(i).data(), n[i], x.mode_shapes()[i]);
      apply_to_probe_pair(space, "t3k::probe_derivatives::xi", rows_of(v.xi[i], n[i]), u, ww[i], pp[i], first_probe,
                          probe_pack_slot(v.pack, g));
    }
    // Right-to-left: nu[i][a] = sum_{u,b} G_i[a,u,b] (xi_i[u] * nu[i+1][b]), as D[u,a] = sum_b G_i[a,u,b]
    // nu[i+1][b] and then nu[i][a] = sum_u xi_i[u] D[u,a]. D is laid out (u, a), so that the contraction sums whole
    // rows of D into a contiguous output (its fast axpy form; summing over the last axis instead, D[a,u] with G_i as
    // stored, took twice as long per probe at ranks 8). D = nu[i+1] . M with M = G_i's axes reversed (b, u, a)
    // (core_reversed) is a product of untransposed factors: OpenBLAS runs it in its small-matrix kernels, where
    // G_i's axes (u, a, b) and a transposed factor took its general path at an inner dimension of 8 (zeroing C, then
    // packing both factors), a third slower over the whole right-to-left sweep (BM_Probes).
    fill_ones_jet(space, rows_of(v.nu[d], r[d]));
    for (std::size_t i = d - 1; i >= 1; --i) {
      if (khatri_rao_first<ExecutionSpace>(r[i])) {
        auto kr = transient4(n[i], r[i + 1]);
        khatri_rao_then_apply_matrix(
            space, "t3k::probe_derivatives::xi_nu", kr,
            KhatriRaoTerm<Scalar, Mem>{Jet3<Scalar const, Mem>(rows_of(v.xi[i], n[i])),
                                       Jet3<Scalar const, Mem>(rows_of(v.nu[i + 1], r[i + 1])), JetPairing::product},
            KhatriRaoTerm<Scalar, Mem>{}, false, "t3k::probe_derivatives::nu", rows_of(v.nu[i], r[i]),
            as_matrix<Scalar, Mem>(x.tt_core(i).data(), r[i], n[i] * r[i + 1]), MatrixSide::rows_out);
        continue;
      }
      auto dmat = transient4(n[i], r[i]);
      apply_matrix(
          space, "t3k::probe_derivatives::core_times_nu", Jet3<Scalar, Mem>(dmat.data(), g.count, k1, n[i] * r[i]),
          Jet3<Scalar const, Mem>(rows_of(v.nu[i + 1], r[i + 1])),
          as_matrix<Scalar, Mem>(v.core_reversed[i].data(), r[i + 1], n[i] * r[i]), MatrixSide::cols_out, false);
      contract_jets(space, "t3k::probe_derivatives::nu", rows_of(v.nu[i], r[i]), Jet4<Scalar const, Mem>(dmat),
                    ContractAxis::first, Jet3<Scalar const, Mem>(rows_of(v.xi[i], n[i])), JetPairing::product, false);
    }
    // Left-to-right: E_i = mu[i] . G_i, eta_i = E_i * nu[i+1], z_i = U_i^T eta_i, mu[i+1] = E_i * xi_i.
    fill_ones_jet(space, rows_of(mu, r[0]));
    for (std::size_t i = 0; i < d; ++i) {
      auto emat = transient4(n[i], r[i + 1]);
      apply_matrix(space, "t3k::probe_derivatives::mu_times_core",
                   Jet3<Scalar, Mem>(emat.data(), g.count, k1, n[i] * r[i + 1]),
                   Jet3<Scalar const, Mem>(rows_of(mu, r[i])),
                   as_matrix<Scalar, Mem>(x.tt_core(i).data(), r[i], n[i] * r[i + 1]), MatrixSide::cols_out, false);
      contract_jets(space, "t3k::probe_derivatives::eta", rows_of(v.eta, n[i]), Jet4<Scalar const, Mem>(emat),
                    ContractAxis::second, Jet3<Scalar const, Mem>(rows_of(v.nu[i + 1], r[i + 1])), JetPairing::product,
                    false);
      auto u = as_matrix<Scalar, Mem>(x.tucker_core(i).data(), n[i], x.mode_shapes()[i]);
      write_probe_jets(space, "t3k::probe_derivatives::z", z[i], first_probe, int(g.count), u,
                       Jet3<Scalar const, Mem>(rows_of(v.eta, n[i])), u, Jet3<Scalar const, Mem>());
      if (i + 1 < d) {
        contract_jets(space, "t3k::probe_derivatives::mu", rows_of(mu_next, r[i + 1]), Jet4<Scalar const, Mem>(emat),
                      ContractAxis::first, Jet3<Scalar const, Mem>(rows_of(v.xi[i], n[i])), JetPairing::product, false);
        std::swap(mu, mu_next);
      }
    }
  };
  for (; s0 < n_probes; s0 += c) {
    for_each_row_range_on_host_threads(space, min_of(c, n_probes - s0), reduction_block_size_for<ExecutionSpace>(),
                                       pass);
  }
}

}  // namespace impl

/// Probe jets of a T3 written into caller-owned arrays: z[i] is (W, K+1, N_i) for every mode, overwritten with the
/// normalized Taylor coefficients z_i^(k) (orders k >= d are written as zeros). The same bits as probe_derivatives,
/// without allocating the output: a caller that evaluates probes repeatedly (an optimizer's iterations) reuses z
/// and skips first touching a fresh output, which on Linux hosts costs more than the sweep itself at small ranks
/// (docs/performance.md).
///
/// \param space execution space the kernels run on
/// \param x the T3
/// \param ww, pp probe vectors and directions, one (W, N_i) View per mode
/// \param order K >= 0
/// \param z one (W, K+1, N_i) View per mode; must not overlap ww or pp
/// \param chunk_size probes per pass, as for probe_derivatives
/// **Blocking:** no. **Throws:** DimensionMismatch naming the array and mode.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void probe_derivatives_into(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                            std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp, std::size_t order,
                            ProbeJets<Scalar, MemorySpace> const& z, ChunkSize chunk_size = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  std::string const where = "t3k::probe_derivatives";
  auto const shapes = x.mode_shapes();
  std::size_t const w = impl::check_probe_stack(where, "ww", ww, shapes);
  std::size_t const wp = impl::check_probe_stack(where, "pp", pp, shapes);
  if (wp != w) throw DimensionMismatch(impl::concat(where, ": ww has ", w, " probes but pp has ", wp));
  impl::check_jet_stack(where, "z", z, w, order, shapes);
  impl::t3_probe_jet_sweep(space, x, ww, pp, impl::general_jet_length(order, x.n_modes()), z, chunk_size);
}

/// Probe jets of a T3: for W probe pairs (ww[i], pp[i]) of shape (W, N_i) and order K, returns one View
/// (W, K+1, N_i) per mode holding the normalized Taylor coefficients z_i^(k). Orders k >= d are zero.
///
/// \param space execution space instance all kernels run on
/// \param x the T3 (any ranks, boundary TT ranks may differ from 1)
/// \param ww, pp probe vectors and directions, one rank-2 View per mode; subviews and const Views are fine
/// \param order K >= 0
/// \param chunk_size probes per pass (bounds the edge-jet workspace; the result does not depend on it). `auto`
///        (the default): all probes at once on device backends, a cache-sized chunk on host backends.
/// **Blocking:** no (results are ready after `space.fence()`). **Throws:** DimensionMismatch naming the mode.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
ProbeJets<Scalar, MemorySpace> probe_derivatives(ExecutionSpace const& space,
                                                 TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                 std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp,
                                                 std::size_t order, ChunkSize chunk_size = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  auto const shapes = x.mode_shapes();
  std::size_t const w = impl::check_probe_stack("t3k::probe_derivatives", "ww", ww, shapes);
  ProbeJets<Scalar, MemorySpace> z;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    z.emplace_back(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::probe_derivatives::z_" + std::to_string(i)), w,
        order + 1, shapes[i]);
  }
  probe_derivatives_into(space, x, ww, pp, order, z, chunk_size);
  return z;
}

/// Directionally symmetric probe jets: the same w (W, N) and p (W, N) in every mode (all N_i = N).
/// **Throws:** DimensionMismatch when the modes differ in size.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
ProbeJets<Scalar, MemorySpace> probe_derivatives_symmetric(ExecutionSpace const& space,
                                                           TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                           ProbeView const& w, ProbeView const& p, std::size_t order) {
  auto const shapes = x.mode_shapes();
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i] != shapes[0]) {
      throw DimensionMismatch(impl::concat("t3k::probe_derivatives_symmetric: mode ", i, " has size ", shapes[i],
                                           " but mode 0 has size ", shapes[0], "; symmetric probes need equal modes"));
    }
  }
  return probe_derivatives(space, x, std::vector<ProbeView>(x.n_modes(), w), std::vector<ProbeView>(x.n_modes(), p),
                           order);
}

/// Order-0 probes written into caller-owned arrays: z[i] is (W, N_i) for every mode (must not overlap ww). The same
/// bits as probes, without allocating the output (see probe_derivatives_into for why).
/// **Blocking:** no. **Throws:** DimensionMismatch naming the array and mode.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void probes_into(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                 std::vector<ProbeView> const& ww, Probes<Scalar, MemorySpace> const& z) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  auto const shapes = x.mode_shapes();
  std::size_t const w = impl::check_probe_stack("t3k::probes", "ww", ww, shapes);
  std::size_t const wz = impl::check_probe_stack("t3k::probes", "z", z, shapes);
  if (wz != w) throw DimensionMismatch(impl::concat("t3k::probes: ww has ", w, " probes but z has ", wz, " rows"));
  std::vector<impl::Jet3<Scalar, MemorySpace>> z3;
  for (std::size_t i = 0; i < x.n_modes(); ++i) z3.emplace_back(z[i].data(), w, 1, shapes[i]);  // (W, 1, N_i)
  // Order 0 never reads the directions, so ww stands in for pp.
  impl::t3_probe_jet_sweep(space, x, ww, ww, 1, z3, ChunkSize::automatic());
}

/// Order-0 probes z_i = X(w_0, .., w_{i-1}, ., w_{i+1}, ..) of every mode: one View (W, N_i) per mode.
/// **Blocking:** no. **Throws:** DimensionMismatch naming the mode.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
Probes<Scalar, MemorySpace> probes(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                   std::vector<ProbeView> const& ww) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  auto const shapes = x.mode_shapes();
  std::size_t const w = impl::check_probe_stack("t3k::probes", "ww", ww, shapes);
  Probes<Scalar, MemorySpace> z;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    z.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::probes::z_" + std::to_string(i)), w,
                   shapes[i]);
  }
  probes_into(space, x, ww, z);
  return z;
}

/// The uniform form accepts every probe routine through its exact ragged image.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
ProbeJets<Scalar, MemorySpace> probe_derivatives(ExecutionSpace const& space,
                                                 UniformTuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                 std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp,
                                                 std::size_t order, ChunkSize chunk_size = ChunkSize::automatic()) {
  return probe_derivatives(space, to_ragged(space, x), ww, pp, order, chunk_size);
}
/// The uniform form of probes (through its exact ragged image).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
Probes<Scalar, MemorySpace> probes(ExecutionSpace const& space, UniformTuckerTensorTrain<Scalar, MemorySpace> const& x,
                                   std::vector<ProbeView> const& ww) {
  return probes(space, to_ragged(space, x), ww);
}

}  // namespace t3k
