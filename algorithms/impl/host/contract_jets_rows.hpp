#pragma once
/// \file contract_jets_rows.hpp
/// contract_jets on host backends: rows of outputs per iteration, strips summed in registers. Not API.

#include "t3k/algorithms/impl/host/host_blocks.hpp"
#include "t3k/algorithms/impl/host/host_small_product.hpp"
#include "t3k/algorithms/impl/host/register_strips.hpp"
#include "t3k/algorithms/impl/jet_pairing.hpp"

#include <type_traits>

namespace t3k {
namespace impl {

/// out[0, width) = acc (accumulate: out += acc): the tail of the host strip kernels.
template <class Scalar>
KOKKOS_INLINE_FUNCTION void store_strip(Scalar* out, Scalar const* acc, int width, bool accumulate) {
  if (accumulate) {
    for (int q = 0; q < width; ++q) out[q] += acc[q];
  } else {
    for (int q = 0; q < width; ++q) out[q] = acc[q];
  }
}

/// The coefficient pairs of one output order as row pointers for the host kernels: pair c combines the rows at
/// a + c * step_a and b + c * step_b, c < count, in the order of coefficient_pairs. The host kernels' strips are
/// short (16-32 entries), so indexing the Views afresh per pair and strip cost as much as the multiply-adds did
/// (perf/README.md).
template <class Scalar>
struct CoefficientPairRows {
  Scalar const* a = nullptr;
  Scalar const* b = nullptr;
  std::ptrdiff_t step_a = 0, step_b = 0;
  int count = 0;
};

/// The row pointers of `pairs` for probe s of the jets a (rows, La, ...) and b (rows, Lb, ...), LayoutRight.
template <class AJet, class BJet>
KOKKOS_INLINE_FUNCTION CoefficientPairRows<typename AJet::non_const_value_type> coefficient_pair_rows(
    CoefficientPairs const& pairs, AJet const& a, BJet const& b, int s) {
  CoefficientPairRows<typename AJet::non_const_value_type> rows;
  if (pairs.end <= pairs.begin) return rows;
  std::ptrdiff_t const a_step = std::ptrdiff_t(a.stride(1)), b_step = std::ptrdiff_t(b.stride(1));
  rows.count = pairs.end - pairs.begin;
  rows.a = a.data() + std::size_t(s) * a.stride(0) + pairs.begin * a_step;
  rows.b = b.data() + std::size_t(s) * b.stride(0) + pairs.b_of(pairs.begin) * b_step;
  rows.step_a = a_step;
  rows.step_b = pairs.sign * b_step;
  return rows;
}

/// contract_jets on host backends: one (s, n) per iteration, each entry summed over (a, y) in the order of
/// ContractJetsEntry, the pairs (a, b) walked by pointer steps (see CoefficientPairRows).
///   first (summing over P): axpy form over strips of contiguous outputs of a width fixed at compile time, so that
///   the sums stay in registers (Y's rows are read contiguously and the innermost loop vectorizes);
///   second (summing over Q): dot products over contiguous rows, eight outputs at a time (independent add chains
///   sharing each load of v).
/// Builds that dispatch to host_small_product take the axpy form to ContractJetsGroups instead (four probes at once).
template <class Scalar, class MemorySpace>
struct ContractJetsRows {
  static constexpr int max_strip = 32;  // the widest strip of the axpy form (4 AVX registers of float)
  static constexpr int dot_rows = 8;    // outputs per pass of the dot form
  Jet3<Scalar, MemorySpace> out;
  Jet4<Scalar const, MemorySpace> ymat;
  Jet3<Scalar const, MemorySpace> v;
  JetPairing pairing;
  int lo, ly, lv, n_sum, n_out;
  bool first, accumulate;

  KOKKOS_INLINE_FUNCTION void operator()(int sn) const {
    int const s = sn / lo;
    int const n = sn - s * lo;
    CoefficientPairs const pairs = coefficient_pairs(pairing, n, ly, lv);
    CoefficientPairRows<Scalar> const rows = coefficient_pair_rows(pairs, ymat, v, s);  // a: Y^(a), P x Q; b: v^(b)
    Scalar* const o = &out(s, n, 0);
    int x0 = 0;
    if (first) {
      // The two widest strips as loops of their own, then for_each_strip's constant-width remainder (8, 4, 2, 1):
      // with the 16-wide strip behind the remainder's single-strip branch, GCC 12 compiled its float sums as 16
      // scalar multiply-adds, and the float BM_JT_Target took longer (docs/performance.md).
      for (; x0 + max_strip <= n_out; x0 += max_strip) sum_over_first<max_strip>(o, rows, x0);
      for (; x0 + max_strip / 2 <= n_out; x0 += max_strip / 2) sum_over_first<max_strip / 2>(o, rows, x0);
      for_each_remainder_strip<max_strip / 4>(
          x0, n_out, [&](auto width, int x) { sum_over_first<decltype(width)::value>(o, rows, x); });
    } else {
      for (; x0 + dot_rows <= n_out; x0 += dot_rows) sum_over_second<dot_rows>(o, rows, x0);
      for (; x0 < n_out; ++x0) sum_over_second<1>(o, rows, x0);
    }
  }

  /// Outputs [x0, x0 + Width) of the axpy form.
  template <int Width>
  KOKKOS_INLINE_FUNCTION void sum_over_first(Scalar* o, CoefficientPairRows<Scalar> const& rows, int x0) const {
    std::size_t const row_stride = ymat.extent(3);
    Scalar acc[Width];
    for (int q = 0; q < Width; ++q) acc[q] = 0;
    for (int c = 0; c < rows.count; ++c) {
      Scalar const* const vb = rows.b + c * rows.step_b;
      Scalar const* const y_rows = rows.a + c * rows.step_a + x0;
      for (int y = 0; y < n_sum; ++y) {
        Scalar const vy = vb[y];
        Scalar const* const row = y_rows + std::size_t(y) * row_stride;
        for (int q = 0; q < Width; ++q) acc[q] += row[q] * vy;
      }
    }
    store_strip(o + x0, acc, Width, accumulate);
  }

  /// Outputs [x0, x0 + Rows) of the dot form.
  template <int Rows>
  KOKKOS_INLINE_FUNCTION void sum_over_second(Scalar* o, CoefficientPairRows<Scalar> const& rows, int x0) const {
    std::size_t const row_stride = ymat.extent(3);
    Scalar acc[Rows];
    for (int q = 0; q < Rows; ++q) acc[q] = 0;
    for (int c = 0; c < rows.count; ++c) {
      Scalar const* const vb = rows.b + c * rows.step_b;
      Scalar const* const y_rows = rows.a + c * rows.step_a + std::size_t(x0) * row_stride;
      for (int y = 0; y < n_sum; ++y) {
        Scalar const vy = vb[y];
        for (int q = 0; q < Rows; ++q) acc[q] += y_rows[std::size_t(q) * row_stride + std::size_t(y)] * vy;
      }
    }
    store_strip(o + x0, acc, Rows, accumulate);
  }
};

#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
/// Probes per iteration of ContractJetsGroups.
constexpr int contract_jets_group_probes = 4;

/// contract_jets' axpy form (summing over P) on host backends in builds that dispatch to host_small_product: a group
/// of up to contract_jets_group_probes consecutive probes per iteration, all at one output order, their strips of
/// outputs summed side by side in vector registers. One probe alone (ContractJetsRows) keeps a strip of two vectors at
/// ranks 8: two chains of dependent multiply-adds, each step waiting out the FMA latency, a fraction of the FMA rate
/// (BM_Probes, BM_J); four probes make eight independent chains.
/// Each entry is the sum of ContractJetsRows, in its order, from zero, each step one explicit FMA (multiply_add_vector,
/// multiply_add), so neither the group an entry falls in nor its strip changes a bit (tested against one probe per
/// call).
template <class Scalar, class MemorySpace>
struct ContractJetsGroups {
  using PairRows = CoefficientPairRows<Scalar>;
  Jet3<Scalar, MemorySpace> out;
  Jet4<Scalar const, MemorySpace> ymat;
  Jet3<Scalar const, MemorySpace> v;
  JetPairing pairing;
  int rows, lo, ly, lv, n_sum, n_out;
  bool accumulate;

  void operator()(int gn) const {
    int const g = gn / lo;
    int const n = gn - g * lo;
    int const s0 = g * contract_jets_group_probes;
    switch (min_of(contract_jets_group_probes, rows - s0)) {
      case 4:
        return group<4>(s0, n);
      case 3:
        return group<3>(s0, n);
      case 2:
        return group<2>(s0, n);
      default:
        return group<1>(s0, n);
    }
  }

  /// Probes [s0, s0 + G) at output order n: strips of two vectors, then one, then single entries.
  template <int G>
  void group(int s0, int n) const {
    static_assert(G <= contract_jets_group_probes, "t3k::impl::ContractJetsGroups: a group of at most four probes");
    constexpr int lanes = host_vector_lanes<Scalar>;
    CoefficientPairs const pairs = coefficient_pairs(pairing, n, ly, lv);
    PairRows pair_rows[G];
    Scalar* o[G];
    for (int i = 0; i < G; ++i) {
      pair_rows[i] = coefficient_pair_rows(pairs, ymat, v, s0 + i);
      o[i] = &out(s0 + i, n, 0);
    }
    int x0 = 0;
    for (; x0 + 2 * lanes <= n_out; x0 += 2 * lanes) strip<G, 2>(pair_rows, o, x0);
    if (x0 + lanes <= n_out) {
      strip<G, 1>(pair_rows, o, x0);
      x0 += lanes;
    }
    for (; x0 < n_out; ++x0) single<G>(pair_rows, o, x0);
  }

  /// Outputs [x0, x0 + Vectors * lanes) of the G probes.
  template <int G, int Vectors>
  void strip(PairRows const (&pair_rows)[G], Scalar* const (&o)[G], int x0) const {
    using V = HostVectorOf<Scalar>;
    constexpr int lanes = host_vector_lanes<Scalar>;
    std::size_t const row_stride = ymat.extent(3);
    int const count = pair_rows[0].count;  // the same pairs for every probe
    V acc[G][Vectors];
#pragma GCC unroll 4
    for (int i = 0; i < G; ++i) {
#pragma GCC unroll 2
      for (int w = 0; w < Vectors; ++w) acc[i][w] = V{};
    }
    for (int c = 0; c < count; ++c) {
      for (int y = 0; y < n_sum; ++y) {
#pragma GCC unroll 4
        for (int i = 0; i < G; ++i) {
          Scalar const vy = pair_rows[i].b[c * pair_rows[i].step_b + y];
          Scalar const* const row = pair_rows[i].a + c * pair_rows[i].step_a + std::size_t(y) * row_stride + x0;
#pragma GCC unroll 2
          for (int w = 0; w < Vectors; ++w)
            acc[i][w] = multiply_add_vector(acc[i][w], vy, load_vector(row + w * lanes));
        }
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < G; ++i) {
#pragma GCC unroll 2
      for (int w = 0; w < Vectors; ++w) {
        Scalar* const p = o[i] + x0 + w * lanes;
        store_vector(p, accumulate ? load_vector(p) + acc[i][w] : acc[i][w]);
      }
    }
  }

  /// Output x0 of the G probes (a row's last entries, fewer than a vector).
  template <int G>
  void single(PairRows const (&pair_rows)[G], Scalar* const (&o)[G], int x0) const {
    std::size_t const row_stride = ymat.extent(3);
    int const count = pair_rows[0].count;
    Scalar acc[G] = {};
    for (int c = 0; c < count; ++c) {
      for (int y = 0; y < n_sum; ++y) {
        for (int i = 0; i < G; ++i) {
          acc[i] = multiply_add(acc[i], pair_rows[i].b[c * pair_rows[i].step_b + y],
                                pair_rows[i].a[c * pair_rows[i].step_a + std::size_t(y) * row_stride + x0]);
        }
      }
    }
    for (int i = 0; i < G; ++i) o[i][x0] = accumulate ? o[i][x0] + acc[i] : acc[i];
  }
};
#endif

/// contract_jets on host backends: ContractJetsGroups for the axpy form in builds that dispatch to
/// host_small_product, ContractJetsRows otherwise.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void host_contract_jets(ExecutionSpace const& space, char const* label, ContractJetsExtents const& e,
                        Jet3<Scalar, MemorySpace> out, Jet4<Scalar const, MemorySpace> ymat, bool first,
                        Jet3<Scalar const, MemorySpace> v, JetPairing pairing, bool accumulate) {
  auto const [rows, lo, n_out, ly, lv, n_sum] = e;
#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
  if constexpr (std::is_same<Scalar, double>::value || std::is_same<Scalar, float>::value) {
    if (first) {
      parallel_for_rows(
          space, label, int((std::size_t(rows) + contract_jets_group_probes - 1) / contract_jets_group_probes) * lo,
          ContractJetsGroups<Scalar, MemorySpace>{out, ymat, v, pairing, rows, lo, ly, lv, n_sum, n_out, accumulate});
      return;
    }
  }
#endif
  parallel_for_rows(
      space, label, rows * lo,
      ContractJetsRows<Scalar, MemorySpace>{out, ymat, v, pairing, lo, ly, lv, n_sum, n_out, first, accumulate});
}

}  // namespace impl
}  // namespace t3k
