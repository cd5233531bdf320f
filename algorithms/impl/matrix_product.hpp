#pragma once
/// \file matrix_product.hpp
/// Dense matrix products C [+]= op(A) op(B) of contiguous LayoutRight matrices: the core contractions of the probe
/// sweeps and the gradient assembly of J^T (docs/math.md) run here. Not API.
///
/// With Kokkos Kernels the product is KokkosBlas::gemm, which on host Views calls the BLAS TPL (OpenBLAS when
/// Kokkos Kernels was configured with it, as scripts/setup.sh does; Debian's prebuilt Kokkos Kernels has it too)
/// and on CUDA/HIP cuBLAS/rocBLAS or Kokkos Kernels' own kernels. Without Kokkos Kernels a plain kernel computes
/// each entry as one sequential sum. Both are deterministic: the same call on the same shapes gives the same bits,
/// which is all that the chunk-invariance of J^T asks of them (callers fix the shapes by probe blocks).

#include "t3k/algorithms/impl/host/host_small_product.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstddef>
#include <utility>

namespace t3k {
namespace impl {

template <class Scalar, class MemorySpace>
using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// A core or any contiguous array seen as a (rows x cols) matrix.
template <class Scalar, class MemorySpace>
Matrix<Scalar const, MemorySpace> as_matrix(Scalar const* data, std::size_t rows, std::size_t cols) {
  return Matrix<Scalar const, MemorySpace>(data, rows, cols);
}

/// Columns [begin, end) of a matrix: the same storage, rows still `m`'s row stride apart (a strided LayoutRight View,
/// which the BLAS takes with its leading dimension).
template <class Scalar, class MemorySpace>
Matrix<Scalar, MemorySpace> column_slab(Matrix<Scalar, MemorySpace> const& m, std::size_t begin, std::size_t end) {
  return Kokkos::subview(m, Kokkos::ALL, std::make_pair(begin, end));
}

/// Whether a factor of a product enters as stored or transposed.
enum class Op { none, transpose };

/// One entry of C of matrix_product_kernel (a functor, not a lambda: see jet_kernels.hpp on nvcc).
template <class Scalar, class MemorySpace>
struct MatrixProductEntry {
  Matrix<Scalar const, MemorySpace> a, b;
  Matrix<Scalar, MemorySpace> c;
  int inner;
  bool ta, tb, accumulate;
  KOKKOS_INLINE_FUNCTION void operator()(int i, int j) const {
    Scalar acc = 0;
    for (int p = 0; p < inner; ++p) acc += (ta ? a(p, i) : a(i, p)) * (tb ? b(j, p) : b(p, j));
    c(i, j) = accumulate ? c(i, j) + acc : acc;
  }
};

/// C [+]= op(A) op(B) by a plain kernel: each entry of C is one sequential sum over the inner index, from zero. The
/// fallback when Kokkos Kernels is absent, and the independent reference its tests compare KokkosBlas::gemm with.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void matrix_product_kernel(ExecutionSpace const& space, char const* label, Op op_a, Matrix<Scalar const, MemorySpace> a,
                           Op op_b, Matrix<Scalar const, MemorySpace> b, Matrix<Scalar, MemorySpace> c,
                           bool accumulate) {
  int const m = int(c.extent(0));
  int const n = int(c.extent(1));
  int const inner = int(op_a == Op::none ? a.extent(1) : a.extent(0));
  bool const ta = op_a == Op::transpose, tb = op_b == Op::transpose;
  if (m == 0 || n == 0) return;
  Kokkos::parallel_for(
      label,
      Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                            Kokkos::IndexType<int>>(space, {0, 0}, {m, n}),
      MatrixProductEntry<Scalar, MemorySpace>{a, b, c, inner, ta, tb, accumulate});
}

#if defined(T3K_HAVE_HOST_SMALL_PRODUCT) && defined(T3K_HAVE_KOKKOSKERNELS) && defined(__AVX2__) && \
    defined(__FMA__) && !defined(__AVX512F__)
/// Whether matrix_product hands small host products to host_small_product rather than to the BLAS: in builds for AVX2
/// hosts without AVX-512, where OpenBLAS runs them through its general path (host_small_product.hpp). Builds for
/// AVX-512 hosts keep the BLAS, whose small-matrix kernels are faster there (BM_SmallProduct; docs/performance.md).
#define T3K_HOST_SMALL_PRODUCT_DISPATCH 1
#endif

/// Whether matrix_product computes C (m x n) [+]= A op(B), inner dimension k, by host_small_product: float or double
/// on a host space, A untransposed, every factor with unit column stride, an output at least one vector wide (narrower
/// ones are all single entries, which the BLAS runs faster), and an inner dimension or an output at most
/// host_small_product_max_side: the probe sweeps' products by a rank (64 probes x 8 by 8 x 64) or by a Tucker factor
/// (64 x N by N x 8), where it beats the BLAS (BM_SmallProduct; docs/performance.md); larger products (J^T's, the
/// Khatri-Rao-first steps at ranks 32) stay with the BLAS. A property of the shapes alone, so every block of a sweep
/// takes the same path whatever its chunk.
constexpr int host_small_product_max_side = 16;

template <class ExecutionSpace, class Scalar, class MemorySpace>
bool takes_host_small_product(Op op_a, Matrix<Scalar const, MemorySpace> const& a, Op op_b,
                              Matrix<Scalar const, MemorySpace> const& b, Matrix<Scalar, MemorySpace> const& c,
                              std::size_t inner, bool accumulate) {
#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
  if constexpr (runs_on_host<ExecutionSpace>() &&
                Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible &&
                (std::is_same<Scalar, double>::value || std::is_same<Scalar, float>::value)) {
    std::size_t const n = c.extent(1);
    return op_a == Op::none && n >= std::size_t(host_vector_lanes<Scalar>) &&
           (inner <= host_small_product_max_side || n <= host_small_product_max_side) &&
           (a.extent(1) <= 1 || a.stride(1) == 1) && (b.extent(1) <= 1 || b.stride(1) == 1) && c.stride(1) == 1 &&
           host_small_product_fits<Scalar>(int(n), int(inner), op_b == Op::transpose, accumulate);
  }
#endif
  (void)op_a, (void)a, (void)op_b, (void)b, (void)c, (void)inner, (void)accumulate;
  return false;
}

/// C [+]= op(A) op(B) (accumulate: C += ..., else C = ...). Shapes are the caller's invariant (checked in debug
/// builds only). An empty inner dimension gives C = 0 (or leaves C as it is when accumulating).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void matrix_product(ExecutionSpace const& space, char const* label, Op op_a, Matrix<Scalar const, MemorySpace> a,
                    Op op_b, Matrix<Scalar const, MemorySpace> b, Matrix<Scalar, MemorySpace> c, bool accumulate) {
  std::size_t const inner = op_a == Op::none ? a.extent(1) : a.extent(0);
  T3K_DEBUG_ASSERT((op_a == Op::none ? a.extent(0) : a.extent(1)) == c.extent(0));
  T3K_DEBUG_ASSERT((op_b == Op::none ? b.extent(0) : b.extent(1)) == inner);
  T3K_DEBUG_ASSERT((op_b == Op::none ? b.extent(1) : b.extent(0)) == c.extent(1));
  if (c.extent(0) == 0 || c.extent(1) == 0) return;
  if (inner == 0) {
    // Kokkos Kernels returns early on an empty inner dimension without applying beta.
    if (!accumulate) Kokkos::deep_copy(space, c, Scalar(0));
    return;
  }
#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
  if (takes_host_small_product<ExecutionSpace>(op_a, a, op_b, b, c, inner, accumulate)) {
    host_small_product(int(c.extent(0)), int(c.extent(1)), int(inner), a.data(), a.stride(0), b.data(), b.stride(0),
                       op_b == Op::transpose, c.data(), c.stride(0), accumulate);
    return;
  }
#endif
#ifdef T3K_HAVE_KOKKOSKERNELS
  // Kokkos Kernels (3.5 and later, 4.6 included) hands an (N, N) product with one column to gemv and takes that
  // column of B and of C as contiguous vectors, which a column slab's is not (its rows are a row stride apart): it
  // read and wrote the wrong entries. Such products (one output column: a few FLOPs) run the plain kernel.
  bool const strided_single_column =
      op_a == Op::none && op_b == Op::none && c.extent(1) == 1 && (b.stride(0) != 1 || c.stride(0) != 1);
  if (!strided_single_column) {
    kokkos_blas_gemm(space, op_a == Op::none ? "N" : "T", op_b == Op::none ? "N" : "T", Scalar(1), a, b,
                     accumulate ? Scalar(1) : Scalar(0), c);
    return;
  }
#endif
  matrix_product_kernel(space, label, op_a, a, op_b, b, c, accumulate);
}

}  // namespace impl
}  // namespace t3k
