#pragma once
/// \file jet_kernels.hpp
/// The elementary kernels every probe sweep is built from (SPEC.md sections 3, 4, 7, 8). Not API.
///
/// An edge variable of dimension n for a chunk of `rows` probes is a jet array (rows, L, n): L stored Taylor
/// coefficients (K1 for general jets, Kl <= 2 for linear ones) before the vector axis. A core contracted with a
/// jet gives a jet of matrices (rows, L, P, Q). All arrays here are contiguous LayoutRight workspace or cores,
/// reshaped freely through unmanaged Views.
///
/// Determinism: every kernel computes each output entry by a sequential sum in a fixed order, parallel only over
/// output entries, and the core contractions (apply_matrix) run one matrix product per aligned block of probes
/// (reduction_block_size_for the space; on device backends small matrices, and every matrix without Kokkos Kernels,
/// by one plain kernel with each entry a sequential sum). A probe's results therefore never depend on the chunk it was
/// computed in, which is what makes the chunked J^T bitwise equal to the dense one (SPEC.md section 9).

#include "algorithms/impl/device/batched_product.hpp"
#include "algorithms/impl/matrix_product.hpp"
#include "algorithms/impl/register_strips.hpp"
#include "core/chunk_size.hpp"
#include "core/error.hpp"
#include "core/impl/host_blocks.hpp"
#include "core/impl/kokkos_compat.hpp"

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace t3k {
namespace impl {

template <class Scalar, class MemorySpace>
using Jet3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Scalar, class MemorySpace>
using Jet4 = Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
/// Rows g of a chunk-sized workspace jet j (chunk rows, L, capacity) as a (g.count, L, width) jet, width <=
/// capacity: the range's rows start at g.first * L * capacity, an offset that no width changes, so that threads at
/// different steps of a sweep (for_each_row_range_on_host_threads) never share entries of a buffer that the steps lay
/// out by their own widths. The whole chunk (g.first = 0) is j's rows as every step lays them out.
template <class Scalar, class MemorySpace>
Jet3<Scalar, MemorySpace> range_rows(Jet3<Scalar, MemorySpace> const& j, RowRange const& g, std::size_t width) {
  return Jet3<Scalar, MemorySpace>(j.data() + g.first * j.extent(1) * j.extent(2), g.count, j.extent(1), width);
}
/// range_rows for a flat buffer holding `row_capacity` entries per chunk row, seen as a (g.count, L, p, q) jet.
template <class Scalar, class MemorySpace>
Jet4<Scalar, MemorySpace> range_rows(Scalar* buffer, std::size_t row_capacity, RowRange const& g, std::size_t l,
                                     std::size_t p, std::size_t q) {
  return Jet4<Scalar, MemorySpace>(buffer + g.first * row_capacity, g.count, l, p, q);
}

/// Multi-index policies over LayoutRight arrays: the last index is the fastest on every backend (Kokkos' default
/// on CUDA/HIP is the first, which would make neighbouring threads touch entries a whole row apart).
template <class ExecutionSpace>
using Policy3 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                      Kokkos::IndexType<int>>;
template <class ExecutionSpace>
using Policy2 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                      Kokkos::IndexType<int>>;

/// How a matrix acts on the vector axis of a jet.
enum class MatrixSide {
  rows_out,  ///< out[s,k,x] = sum_y M[x,y] in[s,k,y]   (M is X x Y; "G . nu" with G as (a u) x b)
  cols_out   ///< out[s,k,x] = sum_y M[y,x] in[s,k,y]   (M is Y x X; "mu . G" with G as a x (u b))
};

/// Blocks of `block_size` probe rows in `rows` rows (the last one may be short).
inline int n_row_blocks(std::size_t rows, std::size_t block_size) { return int((rows + block_size - 1) / block_size); }

/// apply_matrix's product for one block of probe rows: rows [block * B, ...) with B = reduction_block_size_for the
/// space.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void apply_matrix_to_block(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                           Jet3<Scalar const, MemorySpace> in, Matrix<Scalar const, MemorySpace> m, MatrixSide side,
                           bool accumulate, int block) {
  constexpr std::size_t block_size = reduction_block_size_for<ExecutionSpace>();
  std::size_t const n_coeffs = out.extent(1), n_out = out.extent(2), n_in = in.extent(2);
  std::size_t const s = std::size_t(block) * block_size;
  std::size_t const block_rows = min_of(block_size, out.extent(0) - s) * n_coeffs;
  Matrix<Scalar const, MemorySpace> const block_in(in.data() + s * n_coeffs * n_in, block_rows, n_in);
  Matrix<Scalar, MemorySpace> const block_out(out.data() + s * n_coeffs * n_out, block_rows, n_out);
  matrix_product(space, label, Op::none, block_in, side == MatrixSide::cols_out ? Op::none : Op::transpose, m,
                 block_out, accumulate);
}

/// out (rows, L, X) [+]= M applied to in (rows, L, Y) coefficient by coefficient (SPEC.md 3). Host backends: one
/// matrix product per block of reduction_block_size_for<ExecutionSpace>() probe rows, (block rows * L) x Y times
/// Y x X, whole blocks spread over the space's threads (host_blocks.hpp). Device backends: one tiled kernel over all
/// rows (device/batched_product.hpp), each entry one sequential sum.
///
/// Why blocks on host backends: `rows` are the probe rows of a chunk, and chunks start on multiples of the block
/// (chunk sizes are rounded to it, core/chunk_size.hpp), so every probe's rows are always computed by the same
/// product on the same shapes, whatever the chunk size: a BLAS may pick kernels, tilings or split sums by shape, so
/// one product over a chunk-sized row count could give a probe other bits in another chunking. The device kernel's
/// entries do not depend on the row count at all.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void apply_matrix(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                  Jet3<Scalar const, MemorySpace> in, Matrix<Scalar const, MemorySpace> m, MatrixSide side,
                  bool accumulate) {
  std::size_t const rows = out.extent(0);
  std::size_t const n_coeffs = out.extent(1);
  std::size_t const n_out = out.extent(2);
  T3K_DEBUG_ASSERT(in.extent(0) == rows && in.extent(1) == n_coeffs);
  if (rows == 0 || n_coeffs == 0 || n_out == 0) return;
  if constexpr (!runs_on_host<ExecutionSpace>()) {
    device::tiled_product(space, label, Op::none,
                          Matrix<Scalar const, MemorySpace>(in.data(), rows * n_coeffs, in.extent(2)),
                          side == MatrixSide::cols_out ? Op::none : Op::transpose, m,
                          Matrix<Scalar, MemorySpace>(out.data(), rows * n_coeffs, n_out), accumulate);
  } else {
    for_each_block_on_host_threads(
        space, n_row_blocks(rows, reduction_block_size_for<ExecutionSpace>()),
        [&](int block) { apply_matrix_to_block(space, label, out, in, m, side, accumulate, block); });
  }
}

/// Which pairs of coefficients a jet contraction combines (SPEC.md section 3).
enum class JetPairing {
  product,            ///< out^(n) = sum_{a+b=n} Y^(a) v^(b)        (truncated Cauchy product)
  correlate_y_fixed,  ///< out^(n) = sum_a Y^(a) v^(a+n)          (transpose of multiplying by the fixed jet Y)
  correlate_v_fixed   ///< out^(n) = sum_b v^(b) Y^(b+n)          (transpose of multiplying by the fixed jet v)
};

/// Which axis of the jet of matrices Y (rows, L, P, Q) is summed against v.
enum class ContractAxis {
  first,  ///< out[x] = sum_p Y[p, x] (*) v[p]   (x runs over Q)
  second  ///< out[x] = sum_q Y[x, q] (*) v[q]   (x runs over P)
};

/// The coefficient pairs (a of Y, b of v) a jet contraction combines for output order n: a in [begin, end).
struct CoefficientPairs {
  int begin = 0, end = 0, shift = 0, sign = 0;
  KOKKOS_INLINE_FUNCTION int b_of(int a) const { return sign > 0 ? a + shift : shift - a; }
};

KOKKOS_INLINE_FUNCTION CoefficientPairs coefficient_pairs(JetPairing pairing, int n, int ly, int lv) {
  CoefficientPairs p;
  if (pairing == JetPairing::product) {  // b = n - a
    p.begin = n - lv + 1 > 0 ? n - lv + 1 : 0;
    p.end = n + 1 < ly ? n + 1 : ly;
    p.shift = n;
    p.sign = -1;
  } else if (pairing == JetPairing::correlate_y_fixed) {  // b = a + n
    p.begin = 0;
    p.end = lv - n < ly ? lv - n : ly;
    p.shift = n;
    p.sign = 1;
  } else {  // a = b + n, i.e. b = a - n
    p.begin = n;
    p.end = lv + n < ly ? lv + n : ly;
    p.shift = -n;
    p.sign = 1;
  }
  return p;
}

/// out[0, width) = acc (accumulate: out += acc): the tail of the host strip kernels.
template <class Scalar>
KOKKOS_INLINE_FUNCTION void store_strip(Scalar* out, Scalar const* acc, int width, bool accumulate) {
  if (accumulate) {
    for (int q = 0; q < width; ++q) out[q] += acc[q];
  } else {
    for (int q = 0; q < width; ++q) out[q] = acc[q];
  }
}

// The kernel bodies below are named functors, not KOKKOS_LAMBDAs: nvcc (seen with 13.0 on an H200, reported for
// 11.x-12.x by other Kokkos projects) can break an extended __host__ __device__ lambda inside an inline function
// template that several translation units of one program instantiate: launching the kernel then calls a null
// pointer on the host (t3k_bench, whose benchmark files all instantiate these kernels, crashed so). A functor has no
// lambda wrapper.

/// contract_jets on device backends: one output entry per thread, summing over the pairs (a, b), then over y.
template <class Scalar, class MemorySpace>
struct ContractJetsEntry {
  Jet3<Scalar, MemorySpace> out;
  Jet4<Scalar const, MemorySpace> ymat;
  Jet3<Scalar const, MemorySpace> v;
  JetPairing pairing;
  int ly, lv, n_sum;
  bool first, accumulate;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int n, int x) const {
    Scalar acc = 0;
    CoefficientPairs const pairs = coefficient_pairs(pairing, n, ly, lv);
    for (int a = pairs.begin; a < pairs.end; ++a) {
      int const b = pairs.b_of(a);
      if (first) {
        for (int y = 0; y < n_sum; ++y) acc += ymat(s, a, y, x) * v(s, b, y);
      } else {
        for (int y = 0; y < n_sum; ++y) acc += ymat(s, a, x, y) * v(s, b, y);
      }
    }
    out(s, n, x) = accumulate ? out(s, n, x) + acc : acc;
  }
};

/// The coefficient pairs of one output order as row pointers for the host kernels: pair c combines the rows at
/// a + c * step_a and b + c * step_b, c < count, in the order of coefficient_pairs. The host kernels' strips are
/// short (16-32 entries), so indexing the Views afresh per pair and strip cost as much as the multiply-adds did
/// (perf/README.md, "Small kernels of the sweeps").
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
      // scalar multiply-adds, and issue 8's float J^T took ~7% longer (perf/README.md, session 14).
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
/// ranks 8: two chains of dependent multiply-adds, each step waiting out the FMA latency (4 cycles on Zen 3, two FMA
/// units), so the sweeps' contractions ran at a quarter of the FMA rate; four probes make eight independent chains.
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

/// out (rows, Lo, X) [+]= Y (rows, LY, P, Q) (*) v (rows, Lv, Y-axis), with the pairing and axis given. Each entry
/// sums over the pairs (a, b) and then over the contracted axis, in that order, from zero.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void contract_jets(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                   Jet4<Scalar const, MemorySpace> ymat, ContractAxis axis, Jet3<Scalar const, MemorySpace> v,
                   JetPairing pairing, bool accumulate) {
  int const rows = int(out.extent(0));
  int const lo = int(out.extent(1));
  int const n_out = int(out.extent(2));
  int const ly = int(ymat.extent(1));
  int const lv = int(v.extent(1));
  int const n_sum = int(v.extent(2));
  if (rows == 0 || lo == 0 || n_out == 0) return;
  bool const first = axis == ContractAxis::first;
  if constexpr (runs_on_host<ExecutionSpace>()) {
#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
    if constexpr (std::is_same<Scalar, double>::value || std::is_same<Scalar, float>::value) {
      if (first) {
        parallel_for_rows(
            space, label, n_row_blocks(std::size_t(rows), contract_jets_group_probes) * lo,
            ContractJetsGroups<Scalar, MemorySpace>{out, ymat, v, pairing, rows, lo, ly, lv, n_sum, n_out, accumulate});
        return;
      }
    }
#endif
    parallel_for_rows(
        space, label, rows * lo,
        ContractJetsRows<Scalar, MemorySpace>{out, ymat, v, pairing, lo, ly, lv, n_sum, n_out, first, accumulate});
    return;
  }
  Kokkos::parallel_for(label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, lo, n_out}),
                       ContractJetsEntry<Scalar, MemorySpace>{out, ymat, v, pairing, ly, lv, n_sum, first, accumulate});
}

/// One term of a Khatri-Rao jet: out^(k)[x,y] += sum over the coefficient pairs (l, m) that `pairing` combines for
/// order k (coefficient_pairs with Y = a, v = b) of a^(l)[x] b^(m)[y]:
///   product:           sum_{l+m=k} a^(l)[x] b^(m)[y]
///   correlate_y_fixed: sum_l a^(l)[x] b^(l+k)[y]
///   correlate_v_fixed: sum_m a^(m+k)[x] b^(m)[y]
template <class Scalar, class MemorySpace>
struct KhatriRaoTerm {
  Jet3<Scalar const, MemorySpace> a, b;
  JetPairing pairing = JetPairing::product;

  KOKKOS_INLINE_FUNCTION CoefficientPairs pairs(int k) const {
    return coefficient_pairs(pairing, k, int(a.extent(1)), int(b.extent(1)));
  }
};

/// khatri_rao_jets on device backends: one output entry per thread, the first term's pairs, then the second's.
template <class Scalar, class MemorySpace>
struct KhatriRaoJetsEntry {
  Jet4<Scalar, MemorySpace> out;
  KhatriRaoTerm<Scalar, MemorySpace> first, second;
  int n_terms, ny;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int xy) const {
    int const x = xy / ny;
    int const y = xy - x * ny;
    Scalar acc = 0;
    add_term(acc, first, s, k, x, y);
    if (n_terms > 1) add_term(acc, second, s, k, x, y);
    out(s, k, x, y) = acc;
  }
  KOKKOS_INLINE_FUNCTION static void add_term(Scalar& acc, KhatriRaoTerm<Scalar, MemorySpace> const& term, int s, int k,
                                              int x, int y) {
    CoefficientPairs const pairs = term.pairs(k);
    for (int l = pairs.begin; l < pairs.end; ++l) acc += term.a(s, l, x) * term.b(s, pairs.b_of(l), y);
  }
};

/// khatri_rao_jets on host backends: one (s, k) per iteration; each strip of contiguous y (for_each_strip: `strip`
/// wide, then narrower constant widths) is summed in registers row x by row x (the same sums in the same order as
/// KhatriRaoJetsEntry) and stored once. The strips are the outer loop, so each width is a loop of its own: with the
/// full strip and a tail in the one row loop (the form before session 13), GCC 12 split the full strip's sums into
/// 8 + 4 + 2 + 1 + 1 lanes, and the kernel took 1.3-1.6x as long (perf/README.md, session 13, "Khatri-Rao jet
/// kernel").
template <class Scalar, class MemorySpace>
struct KhatriRaoJetsRows {
  static constexpr int strip = 16;
  Jet4<Scalar, MemorySpace> out;
  KhatriRaoTerm<Scalar, MemorySpace> first, second;
  int n_terms, lo, nx, ny;

  KOKKOS_INLINE_FUNCTION void operator()(int sk) const {
    int const s = sk / lo;
    int const k = sk - s * lo;
    CoefficientPairRows<Scalar> const rows_first = coefficient_pair_rows(first.pairs(k), first.a, first.b, s);
    CoefficientPairRows<Scalar> const rows_second =
        n_terms > 1 ? coefficient_pair_rows(second.pairs(k), second.a, second.b, s) : CoefficientPairRows<Scalar>{};
    Scalar* const o = &out(s, k, 0, 0);
    for_each_strip<strip>(ny, [&](auto width, int y0) {
      for (int x = 0; x < nx; ++x) write_strip<decltype(width)::value>(o, x, y0, rows_first, rows_second);
    });
  }

  /// Entries [y0, y0 + Width) of row x.
  template <int Width>
  KOKKOS_INLINE_FUNCTION void write_strip(Scalar* o, int x, int y0, CoefficientPairRows<Scalar> const& rows_first,
                                          CoefficientPairRows<Scalar> const& rows_second) const {
    Scalar acc[Width];
    for (int q = 0; q < Width; ++q) acc[q] = 0;
    add_pairs<Width>(acc, rows_first, x, y0);
    add_pairs<Width>(acc, rows_second, x, y0);
    Scalar* const o_row = o + std::size_t(x) * std::size_t(ny) + y0;
    for (int q = 0; q < Width; ++q) o_row[q] = acc[q];
  }

  template <int Width>
  KOKKOS_INLINE_FUNCTION static void add_pairs(Scalar* acc, CoefficientPairRows<Scalar> const& rows, int x, int y0) {
    for (int c = 0; c < rows.count; ++c) {
      Scalar const ax = rows.a[c * rows.step_a + x];
      Scalar const* const b_row = rows.b + c * rows.step_b + y0;
      for (int q = 0; q < Width; ++q) acc[q] += ax * b_row[q];
    }
  }
};

/// Khatri-Rao jet out (rows, L, X, Y) = first (+ second when with_second), k < L: out^(k)[x,y] is the sum of each
/// term's pairs (see KhatriRaoTerm), the first term's in order, then the second's, from zero. Both terms share X, Y.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void khatri_rao_jets(ExecutionSpace const& space, char const* label, Jet4<Scalar, MemorySpace> out,
                     KhatriRaoTerm<Scalar, MemorySpace> const& first,
                     KhatriRaoTerm<Scalar, MemorySpace> const& second = {}, bool with_second = false) {
  int const n_terms = with_second ? 2 : 1;
  int const rows = int(out.extent(0));
  int const lo = int(out.extent(1));
  int const nx = int(out.extent(2));
  int const ny = int(out.extent(3));
  T3K_DEBUG_ASSERT(first.a.extent(2) == out.extent(2) && first.b.extent(2) == out.extent(3));
  T3K_DEBUG_ASSERT(n_terms < 2 || (second.a.extent(2) == out.extent(2) && second.b.extent(2) == out.extent(3)));
  if (rows == 0 || lo == 0 || nx * ny == 0) return;
  if constexpr (runs_on_host<ExecutionSpace>()) {
    parallel_for_rows(space, label, rows * lo,
                      KhatriRaoJetsRows<Scalar, MemorySpace>{out, first, second, n_terms, lo, nx, ny});
    return;
  }
  Kokkos::parallel_for(label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, lo, nx * ny}),
                       KhatriRaoJetsEntry<Scalar, MemorySpace>{out, first, second, n_terms, ny});
}

/// khatri_rao_jets(kr, first, second) and then apply_matrix(out, kr with its last two axes as one, m, side,
/// accumulate), with the same bits as the two calls. On host backends block by block: the thread that multiplies a
/// block of probe rows forms that block's Khatri-Rao rows right before, so they are still in its cache when the
/// product reads them (a block of them is 0.4-0.8 MB at issue 8's shape; a chunk's are several MB, which the separate
/// calls write out to the shared cache and read back). Device backends make the two calls.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void khatri_rao_then_apply_matrix(ExecutionSpace const& space, char const* kr_label, Jet4<Scalar, MemorySpace> kr,
                                  KhatriRaoTerm<Scalar, MemorySpace> const& first,
                                  KhatriRaoTerm<Scalar, MemorySpace> const& second, bool with_second, char const* label,
                                  Jet3<Scalar, MemorySpace> out, Matrix<Scalar const, MemorySpace> m, MatrixSide side,
                                  bool accumulate = false) {
  int const rows = int(kr.extent(0));
  int const lo = int(kr.extent(1));
  int const nx = int(kr.extent(2));
  int const ny = int(kr.extent(3));
  Jet3<Scalar const, MemorySpace> const kr_flat(kr.data(), kr.extent(0), kr.extent(1), kr.extent(2) * kr.extent(3));
  if constexpr (runs_on_host<ExecutionSpace>()) {
    if (rows > 0 && lo > 0 && nx * ny > 0 && out.extent(2) > 0) {
      T3K_DEBUG_ASSERT(out.extent(0) == kr.extent(0) && out.extent(1) == kr.extent(1));
      KhatriRaoJetsRows<Scalar, MemorySpace> const rows_of{kr, first, second, with_second ? 2 : 1, lo, nx, ny};
      for_each_block_on_host_threads(space, n_row_blocks(std::size_t(rows), reduction_block_size), [&](int block) {
        int const s0 = block * int(reduction_block_size);
        int const s1 = min_of(rows, s0 + int(reduction_block_size));
        for (int sk = s0 * lo; sk < s1 * lo; ++sk) rows_of(sk);
        apply_matrix_to_block(space, label, out, kr_flat, m, side, accumulate, block);
      });
      return;
    }
  }
  khatri_rao_jets(space, kr_label, kr, first, second, with_second);
  apply_matrix(space, label, out, kr_flat, m, side, accumulate);
}

/// Whether a right-to-left step of the forward sweeps (probe jets, J) forms its Khatri-Rao jet first and then one
/// product with the core, e.g. nu[i] = (xi_i ⊛ nu[i+1]) . G_i^T (inner dimension n_i r_{i+1}, an output r_i wide),
/// rather than G_i . nu[i+1] first (inner r_{i+1}, an output r_i n_i wide) and a contraction with xi_i after it. Both
/// do the same products' FLOPs; which is faster depends on how wide an output the BLAS writes. Measured on one host
/// core, d = 8, N = 64, K = 2, 4096 probes (perf/README.md, "Forward sweeps at wide ranks"): with interior TT ranks
/// 32 probe jets took 14-16% less time and J 0-8% less (n = 4..16), with ranks 64 13% and 18% less; at 24 neither
/// order was faster; where the output rank is 8 the Khatri-Rao-first step made J up to 28% slower, at 16 the results
/// were mixed. Device backends keep the product-first order: only it has been measured there.
template <class ExecutionSpace>
constexpr bool khatri_rao_first(std::size_t output_rank) {
  return runs_on_host<ExecutionSpace>() && output_rank >= 32;
}

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
    parallel_for_rows(space, label, rows * l, JetRowsOf<EntryFunctor>{f, l, n});
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
/// (s, k) row copied as one block (a vectorized copy; entry by entry GCC copied one scalar at a time: 12% of the
/// samples of gradient_descent's benchmark at d = 8, N = 64, n = r = 8, perf/README.md, session 16). The same values
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
      parallel_for_rows(space, label, rows * l, CopyJetRows<PackEntry>{f, l, n});
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

/// Whether a probe View type can hand its rows to a matrix product of Scalar in MemorySpace as they are.
template <class Scalar, class MemorySpace, class ProbeView>
constexpr bool probe_rows_may_be_matrix() {
  return std::is_same<typename ProbeView::memory_space, MemorySpace>::value &&
         std::is_same<typename ProbeView::non_const_value_type, Scalar>::value;
}

/// Whether the rows of a rank-2 View are the rows of a LayoutRight (W, n_cols) matrix (contiguous rows, row stride
/// n_cols), so that a block of them can go to a matrix product without a copy.
template <class ProbeView>
bool rows_are_matrix(ProbeView const& v, int n_cols) {
  return v.extent(0) > 0 && (v.extent(0) == 1 || v.stride(0) == std::size_t(n_cols)) &&
         (n_cols <= 1 || v.stride(1) == 1);
}

/// apply_to_probe_pair on device backends: one entry of xi per thread, a sequential sum over j.
template <class Scalar, class MemorySpace, class ProbeView>
struct ApplyToProbePairEntry {
  Jet3<Scalar, MemorySpace> xi;
  Matrix<Scalar const, MemorySpace> u;
  ProbeView w, p;
  int s0, n_in;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int x) const {
    Scalar acc = 0;
    if (k == 0) {
      for (int j = 0; j < n_in; ++j) acc += u(x, j) * w(s0 + s, j);
    } else {
      for (int j = 0; j < n_in; ++j) acc += u(x, j) * p(s0 + s, j);
    }
    xi(s, k, x) = acc;
  }
};

/// One product of apply_to_probe_pair_products: out (rows, L, X) = M (X x N) applied to the probe pair.
template <class Scalar, class MemorySpace>
struct ProbePairProduct {
  Jet3<Scalar, MemorySpace> out;
  Matrix<Scalar const, MemorySpace> m;
};

/// out_q[s,k,x] = sum_j M_q[x,j] omega^(k)[s0+s, j] for the products q < n_products (product_of(q) returns a
/// ProbePairProduct; all share rows, L <= 2 and N), with omega^(0) = w, omega^(1) = p (linear jet of a probe pair).
/// `w`, `p` are any rank-2 Views (W, N) accessible from the space, subviews included.
///
/// Host backends apply the matrices to each aligned block of reduction_block_size probes by matrix products in the
/// BLAS, every matrix to a block before the next block: straight on the probe rows when they are a contiguous
/// matrix of the scalar type (LayoutRight-like; one product per coefficient, written into its columns of the output's
/// rows; blocks spread over the space's threads), otherwise on a copy of the block packed once into `pack` (at least
/// one block of rows, L, N). So each block of probe vectors is read from memory once, however many matrices act on
/// it (J applies U_i and each tangent's V_i: as separate calls over a chunk, the second read the chunk's probe
/// vectors from memory again). Device backends multiply probe rows that are such a matrix by one tiled kernel per
/// product and coefficient over all rows (device/batched_product.hpp), other probe Views by one per-entry kernel per
/// product (`pack` unused there, it may be empty). Either way a probe's row never depends on the chunk it is in, nor
/// on the other products of the call.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class ProductOf>
void apply_to_probe_pair_products(ExecutionSpace const& space, char const* label, std::size_t n_products,
                                  ProductOf const& product_of, ProbeView w, ProbeView p, int s0,
                                  Jet3<Scalar, MemorySpace> pack) {
  if (n_products == 0) return;
  ProbePairProduct<Scalar, MemorySpace> const first = product_of(std::size_t(0));
  int const rows = int(first.out.extent(0));
  int const kl = int(first.out.extent(1));
  int const n_in = int(first.m.extent(1));
  if (rows == 0 || kl == 0) return;
  T3K_DEBUG_ASSERT(kl <= 2);  // a linear jet: w, then p
  constexpr bool on_host = runs_on_host<ExecutionSpace>();
  using ConstMatrix = Matrix<Scalar const, MemorySpace>;
  auto n_out_of = [](ProbePairProduct<Scalar, MemorySpace> const& q) { return int(q.out.extent(2)); };
  // Product q's rows [s, s + count) in place: the probe rows as a matrix, each coefficient's product written
  // straight into its columns of the output's rows (a strided matrix: row s of the block is out[s, :, :]).
  // (A generic lambda: its body is only compiled where probe_rows_may_be_matrix.)
  auto product_in_place = [&](auto const& q, int s, int count) {
    int const n_out = n_out_of(q);
    Matrix<Scalar, MemorySpace> const out_rows(q.out.data() + std::size_t(s) * kl * n_out, count, kl * n_out);
    for (int k = 0; k < kl; ++k) {
      ProbeView const& v = k == 0 ? w : p;
      ConstMatrix const in(v.data() + std::size_t(s0 + s) * v.stride(0), count, n_in);
      auto const out = column_slab(out_rows, std::size_t(k) * n_out, std::size_t(k + 1) * n_out);
      if constexpr (on_host) {
        matrix_product(space, label, Op::none, in, Op::transpose, q.m, out, false);
      } else {
        device::tiled_product(space, label, Op::none, in, Op::transpose, q.m, out, false);
      }
    }
  };
  constexpr bool may_be_matrix = probe_rows_may_be_matrix<Scalar, MemorySpace, ProbeView>();
  // Packing rows that already are a matrix would copy every probe vector once more, a fifth of the sweep's time at
  // N = 1024 on a host.
  bool const in_place = may_be_matrix && rows_are_matrix(w, n_in) && (kl == 1 || rows_are_matrix(p, n_in));
  if constexpr (on_host) {
    constexpr int block_size = int(reduction_block_size);
    if constexpr (may_be_matrix) {
      if (in_place) {
        for_each_block_on_host_threads(space, n_row_blocks(std::size_t(rows), block_size), [&](int b) {
          int const s = b * block_size;
          for (std::size_t qi = 0; qi < n_products; ++qi) {
            ProbePairProduct<Scalar, MemorySpace> const q = product_of(qi);
            if (n_out_of(q) > 0) product_in_place(q, s, min_of(block_size, rows - s));
          }
        });
        return;
      }
    }
    T3K_DEBUG_ASSERT(pack.extent(0) >= min_of(reduction_block_size, std::size_t(rows)));
    T3K_DEBUG_ASSERT(pack.extent(1) == std::size_t(kl) && pack.extent(2) >= std::size_t(n_in));
    for (int s = 0; s < rows; s += block_size) {
      int const block = min_of(block_size, rows - s);
      Jet3<Scalar, MemorySpace> const packed(pack.data(), block, kl, n_in);
      pack_probe_pair(space, label, packed, w, p, s0 + s);
      for (std::size_t qi = 0; qi < n_products; ++qi) {
        ProbePairProduct<Scalar, MemorySpace> const q = product_of(qi);
        int const n_out = n_out_of(q);
        apply_matrix(space, label,
                     Jet3<Scalar, MemorySpace>(q.out.data() + std::size_t(s) * kl * n_out, block, kl, n_out),
                     Jet3<Scalar const, MemorySpace>(packed), q.m, MatrixSide::rows_out, false);
      }
    }
  } else {
    (void)pack;
    (void)in_place;
    for (std::size_t qi = 0; qi < n_products; ++qi) {
      ProbePairProduct<Scalar, MemorySpace> const q = product_of(qi);
      if (n_out_of(q) == 0) continue;
      if constexpr (may_be_matrix) {
        if (in_place) {
          product_in_place(q, 0, rows);
          continue;
        }
      }
      Kokkos::parallel_for(label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, kl, n_out_of(q)}),
                           ApplyToProbePairEntry<Scalar, MemorySpace, ProbeView>{q.out, q.m, w, p, s0, n_in});
    }
  }
}

/// xi[s,k,u] = sum_j U[u,j] omega^(k)[s0+s, j] with omega^(0) = w, omega^(1) = p: apply_to_probe_pair_products with
/// the one product (xi, U).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void apply_to_probe_pair(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> xi,
                         Matrix<Scalar const, MemorySpace> u, ProbeView w, ProbeView p, int s0,
                         Jet3<Scalar, MemorySpace> pack) {
  apply_to_probe_pair_products(
      space, label, 1,
      [&](std::size_t) {
        return ProbePairProduct<Scalar, MemorySpace>{xi, u};
      },
      w, p, s0, pack);
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

/// write_probe_jets entry by entry: a sequential sum over u, then over o.
template <class Scalar, class MemorySpace, class OutputView>
struct WriteProbeJetsEntry {
  OutputView z;
  Matrix<Scalar const, MemorySpace> m1;
  Jet3<Scalar const, MemorySpace> e1;
  Matrix<Scalar const, MemorySpace> m2;
  Jet3<Scalar const, MemorySpace> e2;
  int s0, k1, n1, n2;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int j) const {
    Scalar acc = 0;
    if (k < k1) {
      for (int u = 0; u < n1; ++u) acc += m1(u, j) * e1(s, k, u);
      for (int o = 0; o < n2; ++o) acc += m2(o, j) * e2(s, k, o);
    }
    z(s0 + s, k, j) = acc;
  }
};

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
/// for the group's other rows. Row by row, every row streamed all of M1 and M2 from L2 (64 KB each at N = 1024,
/// n = 8), which bound J at large N. Each row's strips are the same code whatever its group, so the grouping never
/// changes a bit (tested against one call per probe). Each entry of z is stored once: no read of z, no second pass for
/// M2 (the BLAS form wrote z, then read and wrote it again to add the M2 term, at ~7 GFLOP/s for an inner dimension of
/// 8).
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

/// Writes probe jets z[s0+s, k, j] = sum_u M1[u,j] e1[s,k,u] (+ sum_o M2[o,j] e2[s,k,o]) for k < K1 and zeros for
/// the orders K1..K that a T3 of this d cannot have. `z` is any rank-3 View (W, K+1, N). Each entry is one
/// sequential sum (over u, then o), so a probe's row does not depend on the chunk nor on the other probes: on host
/// backends a group of probes' rows per iteration (WriteProbeJetsRows; WriteProbeJetsTiles in builds that dispatch
/// small products to host_small_product), on device backends one entry per thread.
template <class ExecutionSpace, class Scalar, class MemorySpace, class OutputView>
void write_probe_jets(ExecutionSpace const& space, char const* label, OutputView z, int s0, int rows,
                      Matrix<Scalar const, MemorySpace> m1, Jet3<Scalar const, MemorySpace> e1,
                      Matrix<Scalar const, MemorySpace> m2, Jet3<Scalar const, MemorySpace> e2) {
  int const n_orders = int(z.extent(1));
  int const n = int(z.extent(2));
  int const k1 = int(e1.extent(1));
  int const n1 = int(m1.extent(0));
  int const n2 = e2.data() ? int(m2.extent(0)) : 0;
  if (rows == 0 || n_orders == 0 || n == 0) return;
  if constexpr (runs_on_host<ExecutionSpace>()) {
#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
    if constexpr (std::is_same<typename OutputView::non_const_value_type, Scalar>::value &&
                  (std::is_same<Scalar, double>::value || std::is_same<Scalar, float>::value)) {
      if (n == 1 || z.stride(2) == 1) {
        parallel_for_rows(space, label, n_aligned_probe_groups(s0, rows, write_probe_jets_tile_probes),
                          WriteProbeJetsTiles<Scalar, MemorySpace, OutputView>{
                              {z, m1, e1, m2, e2, s0, k1, n1, n2}, rows, n_orders, n});
        return;
      }
    }
#endif
    int const group_probes = write_probe_jets_group_probes(k1);
    parallel_for_rows(space, label, n_aligned_probe_groups(s0, rows, group_probes),
                      WriteProbeJetsRows<Scalar, MemorySpace, OutputView>{z, m1, e1, m2, e2, s0, rows, k1, n_orders, n,
                                                                          n1, n2, group_probes});
  } else {
    for_each_jet_entry(space, label, rows, n_orders, n,
                       WriteProbeJetsEntry<Scalar, MemorySpace, OutputView>{z, m1, e1, m2, e2, s0, k1, n1, n2});
  }
}

}  // namespace impl
}  // namespace t3k
