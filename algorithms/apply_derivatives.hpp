#pragma once
/// \file apply_derivatives.hpp
/// Scalar measurements of a T3 and their jets (docs/math.md, measurements): applies X(w_0, .., w_{d-1}) and entries
/// X[i_0, .., i_{d-1}], and the Taylor coefficients a^(k), k = 0..K, of a(t) = X(w_0 + t p_0, .., w_{d-1} + t p_{d-1})
/// (for entries w_m is the one-hot vector of i_m). One left-to-right sweep per chunk of samples; entries read one
/// column of each Tucker factor.

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/scalar_samples.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/impl/workspace.hpp"
#include "t3k/core/measurement_kind.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <vector>

namespace t3k {

/// Jets of scalar measurements: (W, K+1), a^(k) of sample s at (s, k).
template <class Scalar, class MemorySpace>
using ScalarJets = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;

/// Multi-indices of entries: (W, d), 0-based.
template <class MemorySpace>
using EntryIndices = Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace>;

namespace impl {

/// The T3 scalar-measurement sweep on samples [0, W), written into out (W, K+1): per chunk, xi_i = U_i omega_i for
/// every mode, then mu[i+1] = (mu[i] ⊛ xi_i) . G_i left to right from the all-ones mu[0] (length r_0), and
/// a = sum_b mu[d][b] (the all-ones boundary of length r_d).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class IndexView, class OutView>
void t3_scalar_sweep(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                     ScalarSamples<ProbeView, IndexView> const& samples, int k1, OutView const& out,
                     ChunkSize const& chunk) {
  using Mem = MemorySpace;
  std::size_t const d = x.n_modes();
  std::size_t const n_samples = samples.n_samples();
  int const kl = linear_jet_length(k1);
  auto const n = x.tucker_ranks();
  auto const r = x.tt_ranks();
  auto const big_n = x.mode_shapes();
  std::size_t kr_max = 1, r_max = 1;
  for (std::size_t i = 0; i < d; ++i) kr_max = max_of(kr_max, r[i] * n[i]);
  for (auto e : r) r_max = max_of(r_max, e);
  std::size_t const omega_n = samples.packs_omega(kl) ? max_element_or(big_n, 1) : 0;
  struct Views {
    std::vector<Jet3<Scalar, Mem>> xi;
    Jet3<Scalar, Mem> mu, mu_next, omega;
    Kokkos::View<Scalar*, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> kr;
  };
  auto layout = [&](WorkspaceArena<Scalar, Mem>& arena, std::size_t c) {
    Views v;
    auto const cat = WorkspaceCategory::sweep;
    for (std::size_t i = 0; i < d; ++i) v.xi.push_back(arena.take3(cat, c, kl, n[i]));
    v.mu = arena.take3(cat, c, k1, r_max);
    v.mu_next = arena.take3(cat, c, k1, r_max);
    v.omega = arena.take3(cat, c, kl, omega_n);
    v.kr = arena.take1(cat, c * k1 * kr_max);
    return v;
  };
  std::size_t const c = sweep_chunk_rows<ExecutionSpace, Scalar, Mem>(chunk, n_samples, layout);
  auto built = build_workspace<Scalar, Mem>(space, "t3k::apply_derivatives::workspace",
                                            [&](WorkspaceArena<Scalar, Mem>& arena) { return layout(arena, c); });
  Views const& v = built.first;
  for (std::size_t s0 = 0; s0 < n_samples; s0 += c) {
    std::size_t const rows = min_of(c, n_samples - s0);
    auto rows_of = [&](Jet3<Scalar, Mem> const& j, std::size_t width) {
      return Jet3<Scalar, Mem>(j.data(), rows, j.extent(1), width);
    };
    for (std::size_t i = 0; i < d; ++i) {
      apply_factor_to_samples(space, "t3k::apply_derivatives::xi", rows_of(v.xi[i], n[i]),
                              as_matrix<Scalar, Mem>(x.tucker_core(i).data(), n[i], big_n[i]), samples, i, int(s0),
                              rows_of(v.omega, omega_n > 0 ? big_n[i] : 0));
    }
    Jet3<Scalar, Mem> mu = v.mu, mu_next = v.mu_next;
    fill_ones_jet(space, rows_of(mu, r[0]));
    for (std::size_t i = 0; i < d; ++i) {
      Jet4<Scalar, Mem> const kr(v.kr.data(), rows, k1, r[i], n[i]);
      khatri_rao_then_apply_matrix(
          space, "t3k::apply_derivatives::mu_xi", kr,
          KhatriRaoTerm<Scalar, Mem>{Jet3<Scalar const, Mem>(rows_of(mu, r[i])),
                                     Jet3<Scalar const, Mem>(rows_of(v.xi[i], n[i])), JetPairing::product},
          KhatriRaoTerm<Scalar, Mem>{}, false, "t3k::apply_derivatives::mu", rows_of(mu_next, r[i + 1]),
          as_matrix<Scalar, Mem>(x.tt_core(i).data(), r[i] * n[i], r[i + 1]), MatrixSide::cols_out);
      std::swap(mu, mu_next);
    }
    write_scalar_jets(space, "t3k::apply_derivatives::write", out, Jet3<Scalar const, Mem>(rows_of(mu, r[d])),
                      int(s0));
  }
}

/// Checks the output of an *_into call: (W, K+1).
template <class OutView>
void check_scalar_output(std::string const& where, OutView const& out, std::size_t w, std::size_t order) {
  check_shape(where, "out", out, {w, order + 1});
}

}  // namespace impl

/// Jets of applies of a T3 (docs/math.md): out(s, k) = a_s^(k), the Taylor coefficient of t^k of
/// X(w_0 + t p_0, .., w_{d-1} + t p_{d-1}) for the vectors of sample s, k = 0..K (orders above d are zero).
/// \param space execution space the kernels run on
/// \param x the T3 (any boundary ranks r_0, r_d: all-ones boundary vectors)
/// \param ww vectors w_i, one (W, N_i) View per mode (any layout)
/// \param pp directions p_i, one (W, N_i) View per mode; may be empty when order = 0
/// \param order K
/// \param out (W, K+1), written (every entry)
/// \param chunk samples per pass of the sweep (the result does not depend on it; auto keeps the workspace in cache)
/// **Blocking:** no. **Throws:** DimensionMismatch naming the array and both shapes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class OutView>
void apply_derivatives_into(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                            std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp, std::size_t order,
                            OutView const& out, ChunkSize chunk = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, ProbeView, 2>::value, "");
  static_assert(impl::CheckViewArgument<ExecutionSpace, OutView, 2>::value, "");
  std::string const where = "t3k::apply_derivatives";
  impl::ScalarSamples<ProbeView, EntryIndices<MemorySpace>> const samples{MeasurementKind::applies, ww, pp, {}};
  std::size_t const w = impl::check_scalar_samples(space, where, samples, x.mode_shapes(), order > 0);
  impl::check_scalar_output(where, out, w, order);
  if (w == 0) return;
  impl::t3_scalar_sweep(space, x, samples, impl::scalar_jet_length(order, x.n_modes()), out, chunk);
}

/// apply_derivatives_into, into a new (W, K+1) View. **Blocking:** no. **Throws:** as apply_derivatives_into.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
ScalarJets<Scalar, MemorySpace> apply_derivatives(ExecutionSpace const& space,
                                                  TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                  std::vector<ProbeView> const& ww, std::vector<ProbeView> const& pp,
                                                  std::size_t order, ChunkSize chunk = ChunkSize::automatic()) {
  ScalarJets<Scalar, MemorySpace> out(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::apply_derivatives"),
                                      ww.empty() ? 0 : ww[0].extent(0), order + 1);
  apply_derivatives_into(space, x, ww, pp, order, out, chunk);
  return out;
}

/// Jets of entries of a T3: out(s, k) = the Taylor coefficient of t^k of X(e_{i_0} + t p_0, .., e_{i_{d-1}} + t
/// p_{d-1}) for the multi-index (i_0, .., i_{d-1}) = indices(s, :) of sample s (e_j: one-hot vectors, never formed),
/// k = 0..K. Order 0 is the entry X[i_0, .., i_{d-1}] itself.
/// \param space execution space the kernels run on
/// \param x the T3
/// \param indices (W, d) 0-based multi-indices (any integer type; repeated multi-indices are allowed)
/// \param pp directions p_i, one (W, N_i) View per mode; may be empty when order = 0
/// \param order K
/// \param out (W, K+1), written
/// \param chunk samples per pass of the sweep (the result does not depend on it)
/// **Blocking:** yes (the indices are range-checked first). **Throws:** InvalidArgument naming the first index out of
/// range (sample, mode); DimensionMismatch naming the array and both shapes.
template <class ExecutionSpace, class Scalar, class MemorySpace, class IndexView, class ProbeView, class OutView>
void entry_derivatives_into(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                            IndexView const& indices, std::vector<ProbeView> const& pp, std::size_t order,
                            OutView const& out, ChunkSize chunk = ChunkSize::automatic()) {
  static_assert(impl::CheckViewArgument<ExecutionSpace, IndexView, 2>::value, "");
  static_assert(std::is_integral<typename IndexView::value_type>::value, "t3k::entry_derivatives: indices are integers");
  static_assert(impl::CheckViewArgument<ExecutionSpace, OutView, 2>::value, "");
  std::string const where = "t3k::entry_derivatives";
  impl::ScalarSamples<ProbeView, IndexView> const samples{MeasurementKind::entries, {}, pp, indices};
  std::size_t const w = impl::check_scalar_samples(space, where, samples, x.mode_shapes(), order > 0);
  impl::check_scalar_output(where, out, w, order);
  if (w == 0) return;
  impl::t3_scalar_sweep(space, x, samples, impl::scalar_jet_length(order, x.n_modes()), out, chunk);
}

/// entry_derivatives_into, into a new (W, K+1) View. **Blocking:** yes. **Throws:** as entry_derivatives_into.
template <class ExecutionSpace, class Scalar, class MemorySpace, class IndexView,
          class ProbeView = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>>
ScalarJets<Scalar, MemorySpace> entry_derivatives(ExecutionSpace const& space,
                                                  TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                  IndexView const& indices, std::vector<ProbeView> const& pp,
                                                  std::size_t order, ChunkSize chunk = ChunkSize::automatic()) {
  ScalarJets<Scalar, MemorySpace> out(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::entry_derivatives"),
                                      indices.extent(0), order + 1);
  entry_derivatives_into(space, x, indices, pp, order, out, chunk);
  return out;
}

/// The entries X[indices(s, :)] of a T3: (W). **Blocking:** yes. **Throws:** as entry_derivatives_into.
template <class ExecutionSpace, class Scalar, class MemorySpace, class IndexView>
Kokkos::View<Scalar*, MemorySpace> entries(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                           IndexView const& indices, ChunkSize chunk = ChunkSize::automatic()) {
  auto const jets = entry_derivatives(space, x, indices, std::vector<Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>>{},
                                      0, chunk);
  return Kokkos::subview(jets, Kokkos::ALL, 0);
}

/// The applies X(w_0(s), .., w_{d-1}(s)) of a T3: (W). **Blocking:** no. **Throws:** as apply_derivatives_into.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
Kokkos::View<Scalar*, Kokkos::LayoutStride, MemorySpace> applies(ExecutionSpace const& space,
                                                                 TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                                 std::vector<ProbeView> const& ww,
                                                                 ChunkSize chunk = ChunkSize::automatic()) {
  auto const jets = apply_derivatives(space, x, ww, std::vector<ProbeView>{}, 0, chunk);
  return Kokkos::subview(jets, Kokkos::ALL, 0);
}

}  // namespace t3k
