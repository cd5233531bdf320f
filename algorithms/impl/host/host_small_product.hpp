#pragma once
/// \file host_small_product.hpp
/// A host kernel for the probe sweeps' small matrix products, C [+]= A op(B) with row-major A, B, C, written for
/// hosts where the BLAS runs them through its general path. Not API.
///
/// The probe sweeps multiply each 64-probe block by a core or a Tucker factor: products like (64 x 8) (8 x 64), an
/// inner dimension of one rank, and (64 x N) (N x 8) against U_i^T, an output one rank wide. OpenBLAS has
/// small-matrix kernels for these only on AVX-512 cores; elsewhere it packs both factors, and packing and call
/// overheads dominate a probe sweep (BM_SmallProduct). This kernel packs nothing except a transposed B, a panel at a
/// time: it keeps a tile of C (host_tile_rows rows by two vectors) in registers, broadcasts A's entries and reads B's
/// rows as vectors.
///
/// Each entry of C is one sequential sum over the inner index, from zero (then added to C when accumulating), the
/// order of the plain kernel matrix_product_kernel, each step one fused multiply-add where the build targets FMA
/// (multiply_add_vector, multiply_add). A row's bits never depend on the row count or on the register tile that holds
/// it (tested), so a probe's rows do not depend on its chunk, and the sweeps stay chunk-invariant (docs/math.md).
///
/// Written with GNU vector extensions (GCC, Clang): with plain loops GCC 12 kept multi-row accumulators on the stack or
/// split them into narrower vectors by code form (docs/performance.md).

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

// T3K_NO_HOST_SMALL_PRODUCT: the CMake option T3K_HOST_SMALL_PRODUCT=OFF.
#if defined(__GNUC__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__) && \
    !defined(T3K_NO_HOST_SMALL_PRODUCT)
#define T3K_HAVE_HOST_SMALL_PRODUCT 1
#if defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
#endif
#endif

namespace t3k::impl {

#ifdef T3K_HAVE_HOST_SMALL_PRODUCT

/// Vectors of the widest registers the build targets up to AVX2's 32 bytes: 16 bytes (SSE) without AVX, where
/// 32-byte vector arguments would change the calling convention (GCC warns of it).
#ifdef __AVX__
#define T3K_HOST_VECTOR_BYTES 32
#else
#define T3K_HOST_VECTOR_BYTES 16
#endif
template <class Scalar>
struct HostVector;
template <>
struct HostVector<double> {
  typedef double type __attribute__((vector_size(T3K_HOST_VECTOR_BYTES)));
};
template <>
struct HostVector<float> {
  typedef float type __attribute__((vector_size(T3K_HOST_VECTOR_BYTES)));
};

/// Rows of C per register tile: 6 rows by two vectors are 12 accumulators of the 16 AVX2 registers, leaving room for
/// B's two vectors and A's broadcast.
constexpr int host_tile_rows = 6;

/// Bytes of the stack buffer a transposed B is packed into, a panel of inner indices at a time (with C's columns, at
/// most half of a 32 KiB L1 data cache).
constexpr std::size_t host_small_product_pack_bytes = 16384;

template <class Scalar>
using HostVectorOf = typename HostVector<Scalar>::type;

/// Entries of Scalar per HostVectorOf<Scalar>.
template <class Scalar>
constexpr int host_vector_lanes = int(sizeof(HostVectorOf<Scalar>) / sizeof(Scalar));

template <class Scalar>
inline HostVectorOf<Scalar> load_vector(Scalar const* p) {
  HostVectorOf<Scalar> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class Scalar>
inline void store_vector(Scalar* p, HostVectorOf<Scalar> const& v) {
  std::memcpy(p, &v, sizeof v);
}

/// acc + a b, rounded once where the build targets FMA, else twice: explicitly, because whether GCC fuses `acc += a *
/// b` depends on the code around it after inlining (a row computed alone came out with other low bits than the same
/// row in a tile of six), and each entry must be the same sum wherever it is computed.
template <class Scalar>
inline HostVectorOf<Scalar> multiply_add_vector(HostVectorOf<Scalar> acc, Scalar a, HostVectorOf<Scalar> b) {
#if defined(__AVX__) && defined(__FMA__)
  if constexpr (std::is_same<Scalar, double>::value) {
    return HostVectorOf<double>(_mm256_fmadd_pd(__m256d(b), _mm256_set1_pd(a), __m256d(acc)));
  } else {
    return HostVectorOf<float>(_mm256_fmadd_ps(__m256(b), _mm256_set1_ps(a), __m256(acc)));
  }
#else
  HostVectorOf<Scalar> const product = a * b;
  return acc + product;
#endif
}
template <class Scalar>
inline Scalar multiply_add(Scalar acc, Scalar a, Scalar b) {
#if defined(__FMA__)
  return std::fma(a, b, acc);
#else
  Scalar const product = a * b;
  return acc + product;
#endif
}

/// One product A B of a sum of products (host_small_product_sum): A (m x k) and B (k x n) row-major with row strides
/// lda and ldb, unit column strides.
template <class Scalar>
struct HostProductTerm {
  Scalar const* a;
  std::size_t lda;
  Scalar const* b;
  std::size_t ldb;
  int k;
};

/// Row tiles [i0, i0 + Rows), [i0 + Rows, i0 + 2 Rows), ... below i_end by columns [j0, j0 + Vectors * lanes) of C
/// (=|+=) the sum of the terms' products: each entry's sum runs in registers over the first term's inner index, then
/// the next term's, from zero (or from C's entry where `continue_sums`: the same sequential sum carried on over a later
/// panel of the inner index), then is stored (added to C where `add_to_c`).
///
/// The row tiles loop here, not in the caller: a call per tile set up its pointers afresh (about as many instructions
/// as the eight multiply-add steps of an inner dimension of 8). The loops that fill and store the accumulators are
/// unrolled by pragma: otherwise GCC keeps the accumulators in a stack array, loaded and stored around the inner loop
/// every tile (BM_SmallProduct).
template <class Scalar, int Rows, int Vectors>
inline void host_product_tiles(HostProductTerm<Scalar> const* terms, int n_terms, int i0, int i_end, int j0, Scalar* c,
                               std::size_t ldc, bool continue_sums, bool add_to_c) {
  using V = HostVectorOf<Scalar>;
  constexpr int lanes = host_vector_lanes<Scalar>;
  for (; i0 + Rows <= i_end; i0 += Rows) {
    Scalar* const c_tile = c + i0 * ldc + j0;
    V acc[Rows][Vectors];
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) acc[r][v] = continue_sums ? load_vector(c_tile + r * ldc + v * lanes) : V{};
    }
    for (int t = 0; t < n_terms; ++t) {
      Scalar const* const a = terms[t].a + i0 * terms[t].lda;
      Scalar const* const b = terms[t].b + j0;
      std::size_t const lda = terms[t].lda, ldb = terms[t].ldb;
      for (int p = 0; p < terms[t].k; ++p) {
        V bv[Vectors];
        for (int v = 0; v < Vectors; ++v) bv[v] = load_vector(b + p * ldb + v * lanes);
        for (int r = 0; r < Rows; ++r) {
          Scalar const ar = a[r * lda + p];
          for (int v = 0; v < Vectors; ++v) acc[r][v] = multiply_add_vector(acc[r][v], ar, bv[v]);
        }
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) {
        Scalar* const out = c_tile + r * ldc + v * lanes;
        store_vector(out, add_to_c ? load_vector(out) + acc[r][v] : acc[r][v]);
      }
    }
  }
}

/// The same for rows [0, m) and the columns [j0, n) left narrower than a vector, one entry at a time. Not inlined: a
/// cold tail, and inlined into a caller with constant shapes GCC 12 warned of undefined behaviour in a loop that never
/// ran (-Waggressive-loop-optimizations).
template <class Scalar>
__attribute__((noinline)) void host_product_narrow(HostProductTerm<Scalar> const* terms, int n_terms, int m, int j0,
                                                   int n, Scalar* c, std::size_t ldc, bool continue_sums,
                                                   bool add_to_c) {
  for (int i = 0; i < m; ++i) {
    for (int j = j0; j < n; ++j) {
      Scalar acc = continue_sums ? c[i * ldc + j] : Scalar(0);
      for (int t = 0; t < n_terms; ++t) {
        HostProductTerm<Scalar> const& term = terms[t];
        for (int p = 0; p < term.k; ++p) acc = multiply_add(acc, term.a[i * term.lda + p], term.b[p * term.ldb + j]);
      }
      c[i * ldc + j] = add_to_c ? c[i * ldc + j] + acc : acc;
    }
  }
}

/// Rows [i0, m) of the column strip at j0, Vectors vectors wide: tiles of host_tile_rows rows, then one shorter tile
/// (Rows < host_tile_rows is that tile's height, found by recursion so that it is a constant).
template <class Scalar, int Vectors, int Rows = host_tile_rows>
inline void host_product_strip(HostProductTerm<Scalar> const* terms, int n_terms, int i0, int m, int j0, Scalar* c,
                               std::size_t ldc, bool continue_sums, bool add_to_c) {
  if constexpr (Rows == host_tile_rows) {
    host_product_tiles<Scalar, Rows, Vectors>(terms, n_terms, i0, m, j0, c, ldc, continue_sums, add_to_c);
    i0 += (m - i0) / Rows * Rows;
    if (i0 < m) {
      host_product_strip<Scalar, Vectors, Rows - 1>(terms, n_terms, i0, m, j0, c, ldc, continue_sums, add_to_c);
    }
  } else if constexpr (Rows >= 1) {
    if (m - i0 == Rows) {
      host_product_tiles<Scalar, Rows, Vectors>(terms, n_terms, i0, m, j0, c, ldc, continue_sums, add_to_c);
    } else {
      host_product_strip<Scalar, Vectors, Rows - 1>(terms, n_terms, i0, m, j0, c, ldc, continue_sums, add_to_c);
    }
  }
}

/// C (m x n) (=|+=) A_1 B_1 + ... + A_T B_T (T = n_terms, each term's factors untransposed), C row-major with row
/// stride ldc and unit column stride; each entry one sequential sum over the first term's inner index, then the
/// next's. Columns in strips of two vectors, then one, then single entries; rows in tiles of host_tile_rows.
template <class Scalar>
void host_small_product_sum(int m, int n, HostProductTerm<Scalar> const* terms, int n_terms, Scalar* c, std::size_t ldc,
                            bool continue_sums, bool add_to_c) {
  constexpr int lanes = host_vector_lanes<Scalar>;
  int j = 0;
  for (; j + 2 * lanes <= n; j += 2 * lanes) {
    host_product_strip<Scalar, 2>(terms, n_terms, 0, m, j, c, ldc, continue_sums, add_to_c);
  }
  if (j + lanes <= n) {
    host_product_strip<Scalar, 1>(terms, n_terms, 0, m, j, c, ldc, continue_sums, add_to_c);
    j += lanes;
  }
  if (j < n) host_product_narrow(terms, n_terms, m, j, n, c, ldc, continue_sums, add_to_c);
}

/// Inner indices per packed panel of B^T for an output n columns wide (at least one).
template <class Scalar>
constexpr int host_small_product_panel(int n) {
  int const panel = int(host_small_product_pack_bytes / sizeof(Scalar)) / (n > 0 ? n : 1);
  return panel > 0 ? panel : 1;
}

/// Whether host_small_product can compute C (m x n) (=|+=) A op(B) with inner dimension k: a transposed B is packed
/// panel by panel into a stack buffer, so its rows must fit one (n at most the buffer's entries), and an accumulating
/// product must take one panel (its sums are added to C once, at the end).
template <class Scalar>
constexpr bool host_small_product_fits(int n, int k, bool transpose_b, bool accumulate) {
  if (!transpose_b) return true;
  if (std::size_t(n) * sizeof(Scalar) > host_small_product_pack_bytes) return false;
  return !accumulate || k <= host_small_product_panel<Scalar>(n);
}

/// C (m x n) (=|+=) A (m x k) op(B): op(B) = B (k x n, row stride ldb) or B^T (B n x k, row stride ldb), each entry a
/// sequential sum over the inner index from zero. A transposed B is packed panel by panel (host_small_product_panel
/// inner indices) into a stack buffer, and the sums of later panels carry on from C's entries, so every entry is the
/// one sequential sum either way. Needs host_small_product_fits.
template <class Scalar>
void host_small_product(int m, int n, int k, Scalar const* a, std::size_t lda, Scalar const* b, std::size_t ldb,
                        bool transpose_b, Scalar* c, std::size_t ldc, bool accumulate) {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "t3k::impl::host_small_product: float or double");
  if (!transpose_b) {
    HostProductTerm<Scalar> const term{a, lda, b, ldb, k};
    host_small_product_sum(m, n, &term, 1, c, ldc, false, accumulate);
    return;
  }
  alignas(64) Scalar pack[host_small_product_pack_bytes / sizeof(Scalar)];
  int const panel = host_small_product_panel<Scalar>(n);
  for (int p0 = 0; p0 < k; p0 += panel) {
    int const kc = k - p0 < panel ? k - p0 : panel;
    for (int p = 0; p < kc; ++p) {
      for (int j = 0; j < n; ++j) pack[p * n + j] = b[j * ldb + p0 + p];
    }
    HostProductTerm<Scalar> const term{a + p0, lda, pack, std::size_t(n), kc};
    host_small_product_sum(m, n, &term, 1, c, ldc, p0 > 0, accumulate);
  }
}

#endif  // T3K_HAVE_HOST_SMALL_PRODUCT

}  // namespace t3k::impl
