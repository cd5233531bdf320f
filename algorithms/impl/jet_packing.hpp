#pragma once
/// \file jet_packing.hpp
/// Packing caller arrays (probe pairs, residual jets, cores) into the contiguous jets the products read, and
/// filling jets. Not API.

#include "t3k/algorithms/impl/host/host_blocks.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/impl/jet_views.hpp"

#include <cstddef>

namespace t3k {
namespace impl {

/// Calls an entry functor f(s, k, j) for j = 0..n-1 of one (s, k) = divmod(sk, l): the host form of
/// for_each_jet_entry.
template <class EntryFunctor>
struct JetRowsOf {
  EntryFunctor f;
  int l, n;
  KOKKOS_INLINE_FUNCTION void operator()(int sk) const {
    int const s = sk / l;
    int const k = sk - s * l;
    for (int j = 0; j < n; ++j) f(s, k, j);
  }
};

/// Runs the entry functor f(s, k, j) over [0, rows) x [0, l) x [0, n): on host backends one (s, k) per iteration
/// with j innermost (contiguous rows, copies vectorize), on device backends one entry per thread.
template <class ExecutionSpace, class EntryFunctor>
void for_each_jet_entry(ExecutionSpace const& space, char const* label, int rows, int l, int n, EntryFunctor const& f) {
  if (rows == 0 || l == 0 || n == 0) return;
  if constexpr (runs_on_host<ExecutionSpace>()) {
    parallel_for_rows(space, label, rows * l, std::size_t(n), JetRowsOf<EntryFunctor>{f, l, n});
  } else {
    Kokkos::parallel_for(label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, l, n}), f);
  }
}

template <class Scalar, class MemorySpace>
struct FillJetEntry {
  Jet3<Scalar, MemorySpace> out;
  Scalar order_zero;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int x) const { out(s, k, x) = k == 0 ? order_zero : Scalar(0); }
};

template <class Scalar, class MemorySpace, class ProbeView>
struct PackProbePairEntry {
  Jet3<Scalar, MemorySpace> out;
  ProbeView w, p;
  int s0;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int j) const {
    out(s, k, j) = k == 0 ? w(s0 + s, j) : p(s0 + s, j);
  }
  /// The first entry of the source row of out's row (s, k) (for CopyJetRows, where source_rows_contiguous).
  KOKKOS_INLINE_FUNCTION auto const* source_row(int s, int k) const { return k == 0 ? &w(s0 + s, 0) : &p(s0 + s, 0); }
  bool source_rows_contiguous() const { return w.stride(1) == 1 && p.stride(1) == 1; }
};

template <class Scalar, class MemorySpace, class ResidualView>
struct PackResidualEntry {
  Jet3<Scalar, MemorySpace> out;
  ResidualView r;
  int s0;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int j) const { out(s, k, j) = r(s0 + s, k, j); }
  KOKKOS_INLINE_FUNCTION auto const* source_row(int s, int k) const { return &r(s0 + s, k, 0); }
  bool source_rows_contiguous() const { return r.stride(2) == 1; }
};

/// A pack kernel (PackProbePairEntry, PackResidualEntry) on host backends where its source rows are contiguous: each
/// (s, k) row copied as one block (a vectorized copy; entry by entry GCC copies one scalar at a time, a visible share
/// of BM_Optimizer_GradientDescent). The same values
/// either way (std::copy converts a source of another scalar type as the pack kernel's assignment does).
template <class PackEntry>
struct CopyJetRows {
  PackEntry f;
  int l, n;
  void operator()(int sk) const {
    int const s = sk / l;
    int const k = sk - s * l;
    auto const* const source = f.source_row(s, k);
    std::copy(source, source + n, &f.out(s, k, 0));
  }
};

/// Runs a pack kernel over all of out's entries: on host backends row by row (CopyJetRows) where the source rows are
/// contiguous, otherwise entry by entry (for_each_jet_entry).
template <class ExecutionSpace, class PackEntry>
void pack_jet_rows(ExecutionSpace const& space, char const* label, PackEntry const& f) {
  int const rows = int(f.out.extent(0)), l = int(f.out.extent(1)), n = int(f.out.extent(2));
  if constexpr (runs_on_host<ExecutionSpace>()) {
    if (rows > 0 && l > 0 && n > 0 && f.source_rows_contiguous()) {
      parallel_for_rows(space, label, rows * l, std::size_t(n), CopyJetRows<PackEntry>{f, l, n});
      return;
    }
  }
  for_each_jet_entry(space, label, rows, l, n, f);
}

/// A constant jet of ones (the boundary vectors mu[0], nu[d]): coefficient 0 is 1, the others 0.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void fill_ones_jet(ExecutionSpace const& space, Jet3<Scalar, MemorySpace> out) {
  for_each_jet_entry(space, "t3k::fill_ones_jet", int(out.extent(0)), int(out.extent(1)), int(out.extent(2)),
                     FillJetEntry<Scalar, MemorySpace>{out, Scalar(1)});
}

/// A jet of zeros.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void fill_zero_jet(ExecutionSpace const& space, Jet3<Scalar, MemorySpace> out) {
  for_each_jet_entry(space, "t3k::fill_zero_jet", int(out.extent(0)), int(out.extent(1)), int(out.extent(2)),
                     FillJetEntry<Scalar, MemorySpace>{out, Scalar(0)});
}

/// Packs rows s0.. of a probe pair into a contiguous linear jet: out[s,0,:] = w(s0+s,:), out[s,1,:] = p(s0+s,:)
/// (as many coefficients as out has). `w`, `p` are any rank-2 Views (W, N), subviews and other layouts included.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void pack_probe_pair(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out, ProbeView w,
                     ProbeView p, int s0) {
  pack_jet_rows(space, label, PackProbePairEntry<Scalar, MemorySpace, ProbeView>{out, w, p, s0});
}

/// How permute_core_axes reorders the axes of a core (a, u, b).
enum class CoreAxes {
  last_two,  ///< out[a, b, u] = in[a, u, b]
  reversed   ///< out[b, u, a] = in[a, u, b]
};

template <class Scalar, class MemorySpace>
struct PermuteCoreAxesEntry {
  Jet3<Scalar, MemorySpace> out;
  Jet3<Scalar const, MemorySpace> in;
  bool reversed;
  KOKKOS_INLINE_FUNCTION void operator()(int i, int j, int k) const {
    out(i, j, k) = reversed ? in(k, j, i) : in(i, k, j);
  }
};

/// A core (or any (P, Q, R) array) with its axes reordered as `axes` says, written into out.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void permute_core_axes(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                       Jet3<Scalar const, MemorySpace> in, CoreAxes axes) {
  bool const reversed = axes == CoreAxes::reversed;
  T3K_DEBUG_ASSERT(
      reversed ? (out.extent(0) == in.extent(2) && out.extent(1) == in.extent(1) && out.extent(2) == in.extent(0))
               : (out.extent(0) == in.extent(0) && out.extent(1) == in.extent(2) && out.extent(2) == in.extent(1)));
  for_each_jet_entry(space, label, int(out.extent(0)), int(out.extent(1)), int(out.extent(2)),
                     PermuteCoreAxesEntry<Scalar, MemorySpace>{out, in, reversed});
}

/// permute_core_axes of the contiguous core (or matrix: a (1, rows, cols) core) at `in`, whose shape follows from
/// out's and `axes`: the sweeps' fixed copies, which are empty where a step does not use them (nothing to do then).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void permute_core_axes(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out, Scalar const* in,
                       CoreAxes axes) {
  std::size_t const p = out.extent(0), q = out.extent(1), r = out.extent(2);
  permute_core_axes(space, label, out,
                    axes == CoreAxes::reversed ? Jet3<Scalar const, MemorySpace>(in, r, q, p)
                                               : Jet3<Scalar const, MemorySpace>(in, p, r, q),
                    axes);
}

/// Rows of the pack buffer apply_to_probe_pair needs for chunks of `chunk_rows` probes run on `threads` row ranges
/// (block_threads): one block per range on host backends (probe_pack_slot), none on device backends.
template <class ExecutionSpace>
constexpr std::size_t probe_pack_rows(std::size_t chunk_rows, std::size_t threads) {
  return runs_on_host<ExecutionSpace>() ? min_of(reduction_block_size * threads, chunk_rows) : 0;
}

/// Row range g's block of the pack buffer (probe_pack_rows rows): rows [i B, i B + min(B, g.count)) with i =
/// g.range_index and B = reduction_block_size. They fit: a range starts at or after block i of the chunk
/// (for_each_row_range_on_host_threads), so i B + min(B, g.count) <= min(B * threads, chunk rows).
template <class Scalar, class MemorySpace>
Jet3<Scalar, MemorySpace> probe_pack_slot(Jet3<Scalar, MemorySpace> const& pack, RowRange const& g) {
  std::size_t const first = std::size_t(g.range_index) * reduction_block_size;
  if (pack.extent(0) == 0) return pack;  // device backends pack nothing
  T3K_DEBUG_ASSERT(first + min_of(reduction_block_size, g.count) <= pack.extent(0));
  return Jet3<Scalar, MemorySpace>(pack.data() + first * pack.extent(1) * pack.extent(2),
                                   min_of(reduction_block_size, g.count), pack.extent(1), pack.extent(2));
}

/// Packs orders < out's L of rows s0.. of residual jets (W, K+1, N) into a contiguous jet: out[s,k,j] = r(s0+s,k,j).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ResidualView>
void pack_residual(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out, ResidualView r,
                   int s0) {
  pack_jet_rows(space, label, PackResidualEntry<Scalar, MemorySpace, ResidualView>{out, r, s0});
}

}  // namespace impl
}  // namespace t3k
