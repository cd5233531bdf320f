#pragma once
/// \file probe_pair_products.hpp
/// Matrices applied to the linear jets of a chunk's probe pairs (xi = U omega and the like), in place where the
/// probe rows already are a matrix. Not API.

#include "t3k/algorithms/impl/apply_matrix.hpp"
#include "t3k/algorithms/impl/jet_packing.hpp"

#include <type_traits>

namespace t3k {
namespace impl {

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

}  // namespace impl
}  // namespace t3k
