#pragma once
/// \file scalar_samples.hpp
/// The samples of the scalar measurement kinds (entries and applies, docs/math.md) and the first step of every sweep
/// over them: a factor applied to each sample's linear jet omega_i = w_i + t p_i. Not API.
///
/// An entry's w_i is the one-hot vector of its index i_m, never formed when no jets are asked for: then the factor is
/// applied by reading one column (no N_i factor). With jets (order >= 1) the direction p_i costs N_i per sample
/// anyway, and the one-hot vector is packed beside it so that both coefficients go through one product.

#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/probe_checks.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/measurement_kind.hpp"

#include <string>
#include <vector>

namespace t3k {
namespace impl {

/// The samples of an entries or applies set: applies read ww (and pp for jets), entries read indices (W, d) (and pp
/// for jets). pp is empty when no jets are asked for.
template <class ProbeView, class IndexView>
struct ScalarSamples {
  MeasurementKind kind = MeasurementKind::applies;
  std::vector<ProbeView> ww, pp;
  IndexView indices;

  std::size_t n_samples() const { return kind == MeasurementKind::entries ? indices.extent(0) : ww[0].extent(0); }
  /// Whether sweeps pack omega_i as a dense linear jet (applies, or entries with jets) rather than read one column.
  bool packs_omega(int kl) const { return kind == MeasurementKind::applies || kl > 1; }
};

/// out(s, 0, u) = M(u, idx(s0 + s, mode)): the factor M (n x N, contiguous) applied to the one-hot vector of an index.
template <class Scalar, class MemorySpace, class IndexView>
struct GatherColumnEntry {
  Jet3<Scalar, MemorySpace> out;
  Matrix<Scalar const, MemorySpace> m;
  IndexView idx;
  int mode, s0;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int, int u) const { out(s, 0, u) = m(u, int(idx(s0 + s, mode))); }
};

/// out(s, 0, j) = [j == idx(s0 + s, mode)], out(s, 1, j) = p(s0 + s, j): an entry's linear jet, packed.
template <class Scalar, class MemorySpace, class ProbeView, class IndexView>
struct PackEntryJetEntry {
  Jet3<Scalar, MemorySpace> out;
  ProbeView p;
  IndexView idx;
  int mode, s0;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int j) const {
    out(s, k, j) = k == 0 ? Scalar(int(idx(s0 + s, mode)) == j ? 1 : 0) : Scalar(p(s0 + s, j));
  }
};

/// Packs rows s0.. of mode `mode`'s linear jets omega into out (rows, Kl, N) (packs_omega kinds).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class IndexView>
void pack_sample_jets(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                      ScalarSamples<ProbeView, IndexView> const& samples, std::size_t mode, int s0) {
  if (samples.kind == MeasurementKind::applies) {
    pack_probe_pair(space, label, out, samples.ww[mode], out.extent(1) > 1 ? samples.pp[mode] : samples.ww[mode], s0);
    return;
  }
  for_each_jet_entry(
      space, label, int(out.extent(0)), int(out.extent(1)), int(out.extent(2)),
      PackEntryJetEntry<Scalar, MemorySpace, ProbeView, IndexView>{out, samples.pp[mode], samples.indices, int(mode),
                                                                   s0});
}

/// out (rows, Kl, n) = M (n x N) applied to the linear jets of mode `mode` of rows s0..: for packing kinds the jets
/// are packed into `omega` (rows, Kl, N) first (and left there for the caller); entries without jets read columns.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class IndexView>
void apply_factor_to_samples(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                             Matrix<Scalar const, MemorySpace> m, ScalarSamples<ProbeView, IndexView> const& samples,
                             std::size_t mode, int s0, Jet3<Scalar, MemorySpace> omega) {
  int const kl = int(out.extent(1));
  if (out.extent(0) == 0 || out.extent(2) == 0) return;
  if (samples.packs_omega(kl)) {
    pack_sample_jets(space, "t3k::scalar_samples::pack", omega, samples, mode, s0);
    apply_matrix(space, label, out, Jet3<Scalar const, MemorySpace>(omega), m, MatrixSide::rows_out, false);
    return;
  }
  for_each_jet_entry(space, label, int(out.extent(0)), 1, int(out.extent(2)),
                     GatherColumnEntry<Scalar, MemorySpace, IndexView>{out, m, samples.indices, int(mode), s0});
}

/// out(s0 + s, k) = sum_x jet(s, k, x) for k < L, 0 for L <= k < K+1: a sweep's last edge jet summed against the
/// all-ones boundary vector, written as the scalar measurement's jet.
template <class Scalar, class MemorySpace, class OutView>
struct WriteScalarJetEntry {
  OutView out;
  Jet3<Scalar const, MemorySpace> jet;
  int s0, l, width;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k) const {
    Scalar acc = 0;
    if (k < l)
      for (int x = 0; x < width; ++x) acc += jet(s, k, x);
    out(s0 + s, k) = acc;
  }
};

template <class ExecutionSpace, class Scalar, class MemorySpace, class OutView>
void write_scalar_jets(ExecutionSpace const& space, char const* label, OutView const& out,
                       Jet3<Scalar const, MemorySpace> jet, int s0) {
  int const rows = int(jet.extent(0)), orders = int(out.extent(1));
  if (rows == 0 || orders == 0) return;
  Kokkos::parallel_for(label, Policy2<ExecutionSpace>(space, {0, 0}, {rows, orders}),
                       WriteScalarJetEntry<Scalar, MemorySpace, OutView>{out, jet, s0, int(jet.extent(1)),
                                                                         int(jet.extent(2))});
}

/// Checks the samples of an entries or applies call against mode shapes, at the public boundary: applies' ww (and pp
/// when jets are asked for) one (W, N_i) View per mode; entries' indices (W, d) with 0 <= index < N_i (read back to
/// the host: **Blocking**), pp as for applies. Returns W. **Throws:** DimensionMismatch / InvalidArgument naming
/// the array, and for an index its sample and mode.
template <class ExecutionSpace, class ProbeView, class IndexView>
std::size_t check_scalar_samples(ExecutionSpace const& space, std::string const& where,
                                 ScalarSamples<ProbeView, IndexView> const& samples,
                                 std::vector<std::size_t> const& mode_shapes, bool with_jets) {
  std::size_t const d = mode_shapes.size();
  std::size_t w = 0;
  if (samples.kind == MeasurementKind::applies) {
    w = check_probe_stack(where, "ww", samples.ww, mode_shapes);
  } else {
    if (samples.indices.extent(1) != d) {
      throw DimensionMismatch(concat(where, ": indices has shape ", shape_string(view_shape(samples.indices)),
                                     ", expected [W x ", d, "] (one index per mode)"));
    }
    w = samples.indices.extent(0);
    auto const idx = samples.indices;
    Kokkos::View<std::size_t*, Kokkos::HostSpace> n_host("t3k::check_indices::shapes", d);
    for (std::size_t i = 0; i < d; ++i) n_host(i) = mode_shapes[i];
    auto const n = Kokkos::create_mirror_view_and_copy(typename IndexView::memory_space{}, n_host);
    // The first bad (sample, mode) in row-major order, as one number (W * d when there is none).
    std::size_t first_bad = w * d;
    if (w > 0) {
      Kokkos::parallel_reduce(
          "t3k::check_indices", Kokkos::RangePolicy<ExecutionSpace>(space, 0, w * d),
          KOKKOS_LAMBDA(std::size_t e, std::size_t & acc) {
            std::size_t const s = e / d, i = e - s * d;
            long long const v = static_cast<long long>(idx(s, i));
            if ((v < 0 || std::size_t(v) >= n(i)) && e < acc) acc = e;
          },
          Kokkos::Min<std::size_t>(first_bad));
    }
    if (first_bad < w * d) {
      std::size_t const s = first_bad / d, i = first_bad % d;
      auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, Kokkos::subview(idx, s, i));
      throw InvalidArgument(concat(where, ": indices[", s, ", ", i, "] = ", (long long)h(), " is out of range for mode ",
                                   i, " of size ", mode_shapes[i], " (indices are 0-based)"));
    }
  }
  if (with_jets) {
    std::size_t const wp = check_probe_stack(where, "pp", samples.pp, mode_shapes);
    if (wp != w) throw DimensionMismatch(concat(where, ": pp has ", wp, " samples but there are W = ", w));
  }
  return w;
}

}  // namespace impl
}  // namespace t3k
