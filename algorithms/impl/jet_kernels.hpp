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
/// output entries, and the core contractions (apply_matrix) run one matrix product per aligned block of probes. A
/// probe's results therefore never depend on the chunk it was computed in, which is what makes the chunked J^T
/// bitwise equal to the dense one (SPEC.md section 9).

#include "algorithms/impl/matrix_product.hpp"
#include "core/chunk_size.hpp"
#include "core/error.hpp"
#include "core/impl/kokkos_compat.hpp"

#include <type_traits>

namespace t3k {
namespace impl {

template <class Scalar, class MemorySpace>
using Jet3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Scalar, class MemorySpace>
using Jet4 = Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class ExecutionSpace>
using Policy3 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3>, Kokkos::IndexType<int>>;
template <class ExecutionSpace>
using Policy2 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<2>, Kokkos::IndexType<int>>;

/// How a matrix acts on the vector axis of a jet.
enum class MatrixSide {
  rows_out,  ///< out[s,k,x] = sum_y M[x,y] in[s,k,y]   (M is X x Y; "G . nu" with G as (a u) x b)
  cols_out   ///< out[s,k,x] = sum_y M[y,x] in[s,k,y]   (M is Y x X; "mu . G" with G as a x (u b))
};

/// out (rows, L, X) [+]= M applied to in (rows, L, Y) coefficient by coefficient (SPEC.md 3): one matrix product
/// per block of `reduction_block_size` probe rows, (block rows * L) x Y times Y x X.
///
/// Why blocks: `rows` are the probe rows of a chunk, and chunks start on multiples of the block (chunk sizes are
/// rounded to it, core/chunk_size.hpp), so every probe's rows are always computed by the same product on the same
/// shapes, whatever the chunk size: a BLAS may pick kernels, tilings or split sums by shape, so one product over a
/// chunk-sized row count could give a probe other bits in another chunking.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void apply_matrix(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                  Jet3<Scalar const, MemorySpace> in, Matrix<Scalar const, MemorySpace> m, MatrixSide side,
                  bool accumulate) {
  std::size_t const rows = out.extent(0);
  std::size_t const n_coeffs = out.extent(1);
  std::size_t const n_out = out.extent(2);
  std::size_t const n_in = in.extent(2);
  T3K_DEBUG_ASSERT(in.extent(0) == rows && in.extent(1) == n_coeffs);
  if (rows == 0 || n_coeffs == 0 || n_out == 0) return;
  Op const op_m = side == MatrixSide::cols_out ? Op::none : Op::transpose;
  for (std::size_t s = 0; s < rows; s += reduction_block_size) {
    std::size_t const block_rows = min_of(reduction_block_size, rows - s) * n_coeffs;
    Matrix<Scalar const, MemorySpace> const block_in(in.data() + s * n_coeffs * n_in, block_rows, n_in);
    Matrix<Scalar, MemorySpace> const block_out(out.data() + s * n_coeffs * n_out, block_rows, n_out);
    matrix_product(space, label, Op::none, block_in, op_m, m, block_out, accumulate);
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
  if constexpr (std::is_same<typename ExecutionSpace::memory_space, Kokkos::HostSpace>::value) {
    if (first) {
      // Host, summing over P: axpy form over a strip of contiguous outputs (Y's rows are read contiguously and the
      // innermost loop vectorizes); each entry still sums over (a, y) in the order of the device kernel below.
      constexpr int strip = 64;
      std::size_t const row_stride = ymat.extent(3);
      Kokkos::parallel_for(
          label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows * lo), KOKKOS_LAMBDA(int sn) {
            int const s = sn / lo;
            int const n = sn - s * lo;
            CoefficientPairs const pairs = coefficient_pairs(pairing, n, ly, lv);
            for (int x0 = 0; x0 < n_out; x0 += strip) {
              int const width = n_out - x0 < strip ? n_out - x0 : strip;
              Scalar acc[strip];
              for (int q = 0; q < width; ++q) acc[q] = 0;
              for (int a = pairs.begin; a < pairs.end; ++a) {
                Scalar const* vb = &v(s, pairs.b_of(a), 0);
                Scalar const* rows_a = &ymat(s, a, 0, x0);
                for (int y = 0; y < n_sum; ++y) {
                  Scalar const vy = vb[y];
                  Scalar const* row = rows_a + std::size_t(y) * row_stride;
                  for (int q = 0; q < width; ++q) acc[q] += row[q] * vy;
                }
              }
              Scalar* o = &out(s, n, x0);
              if (accumulate) {
                for (int q = 0; q < width; ++q) o[q] += acc[q];
              } else {
                for (int q = 0; q < width; ++q) o[q] = acc[q];
              }
            }
          });
      return;
    }
    // Host, summing over Q: four dot products over contiguous rows at a time (independent add chains).
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows * lo), KOKKOS_LAMBDA(int sn) {
          int const s = sn / lo;
          int const n = sn - s * lo;
          CoefficientPairs const pairs = coefficient_pairs(pairing, n, ly, lv);
          for (int x0 = 0; x0 < n_out; x0 += 4) {
            int const width = n_out - x0 < 4 ? n_out - x0 : 4;
            Scalar acc[4] = {0, 0, 0, 0};
            for (int a = pairs.begin; a < pairs.end; ++a) {
              Scalar const* vb = &v(s, pairs.b_of(a), 0);
              if (width == 4) {
                Scalar const *y0 = &ymat(s, a, x0, 0), *y1 = &ymat(s, a, x0 + 1, 0), *y2 = &ymat(s, a, x0 + 2, 0),
                             *y3 = &ymat(s, a, x0 + 3, 0);
                for (int y = 0; y < n_sum; ++y) {
                  acc[0] += y0[y] * vb[y];
                  acc[1] += y1[y] * vb[y];
                  acc[2] += y2[y] * vb[y];
                  acc[3] += y3[y] * vb[y];
                }
              } else {
                for (int q = 0; q < width; ++q) {
                  Scalar const* yq = &ymat(s, a, x0 + q, 0);
                  for (int y = 0; y < n_sum; ++y) acc[q] += yq[y] * vb[y];
                }
              }
            }
            Scalar* o = &out(s, n, x0);
            if (accumulate) {
              for (int q = 0; q < width; ++q) o[q] += acc[q];
            } else {
              for (int q = 0; q < width; ++q) o[q] = acc[q];
            }
          }
        });
    return;
  }
  Kokkos::parallel_for(
      label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, lo, n_out}), KOKKOS_LAMBDA(int s, int n, int x) {
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
      });
}

/// Jet outer product (Khatri-Rao jet), k < out's L:
///   product:           out[s,k,x,y] = sum_{l<=k} a^(l)[x] b^(k-l)[y]
///   correlate_y_fixed: out[s,k,x,y] = sum_l a^(l)[x] b^(l+k)[y]
template <class ExecutionSpace, class Scalar, class MemorySpace>
void outer_jets(ExecutionSpace const& space, char const* label, Jet4<Scalar, MemorySpace> out,
                Jet3<Scalar const, MemorySpace> a, Jet3<Scalar const, MemorySpace> b,
                JetPairing pairing = JetPairing::product) {
  T3K_DEBUG_ASSERT(pairing != JetPairing::correlate_v_fixed);
  bool const correlate = pairing == JetPairing::correlate_y_fixed;
  int const rows = int(out.extent(0));
  int const lo = int(out.extent(1));
  int const nx = int(out.extent(2));
  int const ny = int(out.extent(3));
  int const la = int(a.extent(1));
  int const lb = int(b.extent(1));
  if (rows == 0 || lo == 0 || nx * ny == 0) return;
  if constexpr (std::is_same<typename ExecutionSpace::memory_space, Kokkos::HostSpace>::value) {
    // Host: one (s, k) per iteration, rows x of contiguous y innermost; same sums in the same order.
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows * lo), KOKKOS_LAMBDA(int sk) {
          int const s = sk / lo;
          int const k = sk - s * lo;
          int const l_begin = correlate ? 0 : (k - lb + 1 > 0 ? k - lb + 1 : 0);
          int const l_end = correlate ? (lb - k < la ? lb - k : la) : (k + 1 < la ? k + 1 : la);
          for (int x = 0; x < nx; ++x) {
            Scalar* o = &out(s, k, x, 0);
            if (l_begin >= l_end) {
              for (int y = 0; y < ny; ++y) o[y] = 0;
              continue;
            }
            // The first pair assigns: the sum from zero up to the sign of a zero term.
            Scalar const a0 = a(s, l_begin, x);
            Scalar const* b0 = &b(s, correlate ? l_begin + k : k - l_begin, 0);
            for (int y = 0; y < ny; ++y) o[y] = a0 * b0[y];
            for (int l = l_begin + 1; l < l_end; ++l) {
              Scalar const ax = a(s, l, x);
              Scalar const* brow = &b(s, correlate ? l + k : k - l, 0);
              for (int y = 0; y < ny; ++y) o[y] += ax * brow[y];
            }
          }
        });
    return;
  }
  Kokkos::parallel_for(
      label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, lo, nx * ny}), KOKKOS_LAMBDA(int s, int k, int xy) {
        int const x = xy / ny;
        int const y = xy - x * ny;
        int const l_begin = correlate ? 0 : (k - lb + 1 > 0 ? k - lb + 1 : 0);
        int const l_end = correlate ? (lb - k < la ? lb - k : la) : (k + 1 < la ? k + 1 : la);
        Scalar acc = 0;
        for (int l = l_begin; l < l_end; ++l) acc += a(s, l, x) * b(s, correlate ? l + k : k - l, y);
        out(s, k, x, y) = acc;
      });
}

/// A constant jet of ones (the boundary vectors mu[0], nu[d]): coefficient 0 is 1, the others 0.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void fill_ones_jet(ExecutionSpace const& space, Jet3<Scalar, MemorySpace> out) {
  int const rows = int(out.extent(0));
  int const lo = int(out.extent(1));
  int const n = int(out.extent(2));
  if (rows == 0 || lo == 0 || n == 0) return;
  Kokkos::parallel_for(
      "t3k::fill_ones_jet", Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, lo, n}),
      KOKKOS_LAMBDA(int s, int k, int x) { out(s, k, x) = k == 0 ? Scalar(1) : Scalar(0); });
}

/// xi[s,k,u] = sum_j U[u,j] omega^(k)[s0+s, j] with omega^(0) = w, omega^(1) = p (linear jet of a probe pair).
/// `w`, `p` are any rank-2 Views (W, N) accessible from the space, subviews included.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void apply_to_probe_pair(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> xi,
                         Matrix<Scalar const, MemorySpace> u, ProbeView w, ProbeView p, int s0) {
  int const rows = int(xi.extent(0));
  int const kl = int(xi.extent(1));
  int const n_out = int(xi.extent(2));
  int const n_in = int(u.extent(1));
  if (rows == 0 || kl == 0 || n_out == 0) return;
  Kokkos::parallel_for(
      label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, kl, n_out}), KOKKOS_LAMBDA(int s, int k, int x) {
        Scalar acc = 0;
        if (k == 0) {
          for (int j = 0; j < n_in; ++j) acc += u(x, j) * w(s0 + s, j);
        } else {
          for (int j = 0; j < n_in; ++j) acc += u(x, j) * p(s0 + s, j);
        }
        xi(s, k, x) = acc;
      });
}

/// Packs rows s0.. of a probe pair into a contiguous linear jet: out[s,0,:] = w(s0+s,:), out[s,1,:] = p(s0+s,:)
/// (as many coefficients as out has). `w`, `p` are any rank-2 Views (W, N), subviews and other layouts included.
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView>
void pack_probe_pair(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out, ProbeView w,
                     ProbeView p, int s0) {
  int const rows = int(out.extent(0));
  int const kl = int(out.extent(1));
  int const n = int(out.extent(2));
  if (rows == 0 || kl == 0 || n == 0) return;
  Kokkos::parallel_for(
      label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, kl, n}),
      KOKKOS_LAMBDA(int s, int k, int j) { out(s, k, j) = k == 0 ? w(s0 + s, j) : p(s0 + s, j); });
}

/// Packs orders < out's L of rows s0.. of residual jets (W, K+1, N) into a contiguous jet: out[s,k,j] = r(s0+s,k,j).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ResidualView>
void pack_residual(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out, ResidualView r,
                   int s0) {
  int const rows = int(out.extent(0));
  int const lo = int(out.extent(1));
  int const n = int(out.extent(2));
  if (rows == 0 || lo == 0 || n == 0) return;
  Kokkos::parallel_for(
      label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, lo, n}),
      KOKKOS_LAMBDA(int s, int k, int j) { out(s, k, j) = r(s0 + s, k, j); });
}

/// Writes probe jets z[s0+s, k, j] = sum_u M1[u,j] e1[s,k,u] (+ sum_o M2[o,j] e2[s,k,o]) for k < K1 and zeros for
/// the orders K1..K that a T3 of this d cannot have. `z` is any rank-3 View (W, K+1, N).
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
  Kokkos::parallel_for(
      label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, n_orders, n}), KOKKOS_LAMBDA(int s, int k, int j) {
        Scalar acc = 0;
        if (k < k1) {
          for (int u = 0; u < n1; ++u) acc += m1(u, j) * e1(s, k, u);
          for (int o = 0; o < n2; ++o) acc += m2(o, j) * e2(s, k, o);
        }
        z(s0 + s, k, j) = acc;
      });
}

}  // namespace impl
}  // namespace t3k
