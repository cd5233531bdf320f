#pragma once
/// \file probe_jet_rows.hpp
/// write_probe_jets on host backends: groups of probes' rows per iteration. Not API.

#include "t3k/algorithms/impl/device/entry_kernels.hpp"
#include "t3k/algorithms/impl/host/contract_jets_rows.hpp"
#include "t3k/algorithms/impl/host/host_blocks.hpp"
#include "t3k/algorithms/impl/host/register_strips.hpp"

#include <type_traits>

namespace t3k {
namespace impl {

/// Rows of z that the host write_probe_jets writes strip by strip together (at most).
constexpr int write_probe_jets_group_rows = 8;

/// Probes per group of the host write_probe_jets for k1 nonzero orders: as many whole probes as fit in
/// write_probe_jets_group_rows rows (at least one), a power of two dividing every block of probes.
KOKKOS_INLINE_FUNCTION constexpr int write_probe_jets_group_probes(int k1) {
  return k1 <= 1 ? 8 : (k1 <= 2 ? 4 : (k1 <= 4 ? 2 : 1));
}

/// Probes [begin, end), relative to s0, of one group of the host write_probe_jets.
struct ProbeGroup {
  int begin, end;
};

/// Groups of `group_probes` probes aligned by absolute probe index that the probes [s0, s0 + rows) meet.
KOKKOS_INLINE_FUNCTION constexpr int n_aligned_probe_groups(int s0, int rows, int group_probes) {
  return (s0 + rows + group_probes - 1) / group_probes - s0 / group_probes;
}

/// Group g of n_aligned_probe_groups: [(s0 / G + g) G, (s0 / G + g + 1) G) clipped to [s0, s0 + rows), relative to
/// s0 (G = group_probes).
KOKKOS_INLINE_FUNCTION ProbeGroup aligned_probe_group(int s0, int rows, int group_probes, int g) {
  int const first_group = s0 / group_probes;
  return {max_of(s0, (first_group + g) * group_probes) - s0,
          min_of(s0 + rows, (first_group + g + 1) * group_probes) - s0};
}

/// write_probe_jets on host backends: one group of probes per iteration (write_probe_jets_group_probes, aligned to
/// it by absolute probe index), their rows (s, k < k1) written strip by strip, up to write_probe_jets_group_rows rows
/// per strip: each strip of contiguous entries is held in registers while the rows of M1 and M2 stream past (each
/// entry the sum of WriteProbeJetsEntry, in its order), and the strip's columns of M1 and M2 (a few KB) stay in L1
/// for the group's other rows (row by row, every row would stream all of M1 and M2 from L2, which bounds J at large
/// N: BM_J). Each row's strips are the same code whatever its group, so the grouping never
/// changes a bit (tested against one call per probe). Each entry of z is stored once: no read of z, no second pass for
/// M2 as a BLAS form would need.
template <class Scalar, class MemorySpace, class OutputView>
struct WriteProbeJetsRows {
  static constexpr int strip = 16;
  static constexpr int max_rows = write_probe_jets_group_rows;
  OutputView z;
  Matrix<Scalar const, MemorySpace> m1;
  Jet3<Scalar const, MemorySpace> e1;
  Matrix<Scalar const, MemorySpace> m2;
  Jet3<Scalar const, MemorySpace> e2;
  int s0, rows, k1, n_orders, n, n1, n2, group_probes;

  /// Rows written together: probe s (relative to s0) and order k of each.
  struct RowSet {
    int s[max_rows];
    int k[max_rows];
    int count = 0;
  };

  /// Group g of the probes [s0, s0 + rows) (aligned_probe_group).
  KOKKOS_INLINE_FUNCTION void operator()(int g) const {
    ProbeGroup const group = aligned_probe_group(s0, rows, group_probes, g);
    RowSet set;
    for (int s = group.begin; s < group.end; ++s) {
      for (int k = 0; k < n_orders; ++k) {
        if (k >= k1) {
          for (int j = 0; j < n; ++j) z(s0 + s, k, j) = Scalar(0);
          continue;
        }
        set.s[set.count] = s;
        set.k[set.count] = k;
        if (++set.count == max_rows) {
          write_rows(set);
          set.count = 0;
        }
      }
    }
    if (set.count > 0) write_rows(set);
  }

  KOKKOS_INLINE_FUNCTION void write_rows(RowSet const& set) const {
    for_each_strip<strip>(n, [&](auto width, int j0) {
      for (int r = 0; r < set.count; ++r) write_strip<decltype(width)::value>(set.s[r], set.k[r], j0);
    });
  }

  /// z[s0+s, k, j0+q] = sum_u M1[u, j0+q] e1[s,k,u] + sum_o M2[o, j0+q] e2[s,k,o], q < Width.
  template <int Width>
  KOKKOS_INLINE_FUNCTION void write_strip(int s, int k, int j0) const {
    Scalar acc[Width];
    for (int q = 0; q < Width; ++q) acc[q] = 0;
    add_terms<Width>(acc, m1, e1, n1, s, k, j0);
    add_terms<Width>(acc, m2, e2, n2, s, k, j0);
    if (z.stride(2) == 1) {  // contiguous rows: stores the compiler can vectorize
      Scalar* const out = &z(s0 + s, k, j0);
      for (int q = 0; q < Width; ++q) out[q] = acc[q];
    } else {
      for (int q = 0; q < Width; ++q) z(s0 + s, k, j0 + q) = acc[q];
    }
  }

  /// acc[q] += sum_t M[t, j0+q] e[s,k,t] over t < n_terms, in order.
  template <int Width>
  KOKKOS_INLINE_FUNCTION static void add_terms(Scalar* acc, Matrix<Scalar const, MemorySpace> const& m,
                                               Jet3<Scalar const, MemorySpace> const& e, int n_terms, int s, int k,
                                               int j0) {
    for (int t = 0; t < n_terms; ++t) {
      Scalar const et = e(s, k, t);
      Scalar const* row = &m(t, j0);
      for (int q = 0; q < Width; ++q) acc[q] += row[q] * et;
    }
  }
};

#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
/// Probes per iteration of WriteProbeJetsTiles: a block's worth, so that a tile of C (host_small_product.hpp) has
/// rows to fill and a group's coefficient rows (64 x n_1 and 64 x n_2 entries) stay in L1 while the columns pass.
constexpr int write_probe_jets_tile_probes = int(reduction_block_size);

/// write_probe_jets on host backends whose builds dispatch small products to host_small_product (matrix_product.hpp),
/// where z's rows are contiguous rows of Scalar: one group of write_probe_jets_tile_probes probes (aligned by absolute
/// index) per iteration, each order k < k1 of the group as one host_small_product_sum, z(:, k, :) = e1(:, k, :) M1
/// (+ e2(:, k, :) M2), in register tiles of several probes: each row of M1 and M2 is read once per tile, where
/// WriteProbeJetsRows reads it once per row. Each entry is the sum of WriteProbeJetsEntry, in its order, and a row's
/// bits do not depend on the tile holding it (host_small_product.hpp), so the grouping never changes a bit.
template <class Scalar, class MemorySpace, class OutputView>
struct WriteProbeJetsTiles {
  WriteProbeJetsEntry<Scalar, MemorySpace, OutputView> operands;  // z, M1, e1, M2, e2, s0, k1, n1, n2
  int rows, n_orders, n;

  void operator()(int g) const {
    auto const& [z, m1, e1, m2, e2, s0, k1, n1, n2] = operands;
    auto const [begin, end] = aligned_probe_group(s0, rows, write_probe_jets_tile_probes, g);
    for (int k = 0; k < min_of(k1, n_orders); ++k) {
      HostProductTerm<Scalar> terms[2] = {{&e1(begin, k, 0), e1.stride(0), m1.data(), m1.stride(0), n1}, {}};
      if (n2 > 0) terms[1] = {&e2(begin, k, 0), e2.stride(0), m2.data(), m2.stride(0), n2};
      host_small_product_sum(end - begin, n, terms, n2 > 0 ? 2 : 1, &z(s0 + begin, k, 0), z.stride(0), false, false);
    }
    for (int s = begin; s < end; ++s) {
      for (int k = k1; k < n_orders; ++k) {
        for (int j = 0; j < n; ++j) z(s0 + s, k, j) = Scalar(0);
      }
    }
  }
};
#endif

/// write_probe_jets on host backends: WriteProbeJetsTiles in builds that dispatch small products to
/// host_small_product, WriteProbeJetsRows otherwise.
template <class ExecutionSpace, class Scalar, class MemorySpace, class OutputView>
void host_write_probe_jets(ExecutionSpace const& space, char const* label,
                           WriteProbeJetsEntry<Scalar, MemorySpace, OutputView> const& operands, int rows) {
  auto const& [z, m1, e1, m2, e2, s0, k1, n1, n2] = operands;
  int const n_orders = int(z.extent(1));
  int const n = int(z.extent(2));
#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
  if constexpr (std::is_same<typename OutputView::non_const_value_type, Scalar>::value &&
                (std::is_same<Scalar, double>::value || std::is_same<Scalar, float>::value)) {
    if (n == 1 || z.stride(2) == 1) {
      parallel_for_rows(space, label, n_aligned_probe_groups(s0, rows, write_probe_jets_tile_probes),
                        WriteProbeJetsTiles<Scalar, MemorySpace, OutputView>{operands, rows, n_orders, n});
      return;
    }
  }
#endif
  int const group_probes = write_probe_jets_group_probes(k1);
  parallel_for_rows(space, label, n_aligned_probe_groups(s0, rows, group_probes),
                    WriteProbeJetsRows<Scalar, MemorySpace, OutputView>{z, m1, e1, m2, e2, s0, rows, k1, n_orders, n,
                                                                        n1, n2, group_probes});
}

}  // namespace impl
}  // namespace t3k
