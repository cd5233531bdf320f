#pragma once
/// \file apply_matrix.hpp
/// A matrix applied to the vector axis of a jet, coefficient by coefficient: the core contractions of every sweep.
/// One dispatch point: host backends multiply block by block in the BLAS (host/), device backends run one tiled
/// kernel (device/). Not API.

#include "t3k/algorithms/impl/device/batched_product.hpp"
#include "t3k/algorithms/impl/host/host_blocks.hpp"
#include "t3k/algorithms/impl/matrix_product.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/impl/jet_views.hpp"

namespace t3k {
namespace impl {

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

/// out (rows, L, X) [+]= M applied to in (rows, L, Y) coefficient by coefficient (docs/math.md). Host backends: one
/// matrix product per block of reduction_block_size_for<ExecutionSpace>() probe rows, (block rows * L) x Y times
/// Y x X, whole blocks spread over the space's threads (host_blocks.hpp). Device backends: one tiled kernel over all
/// rows (device/batched_product.hpp), each entry one sequential sum.
///
/// Why blocks on host backends: `rows` are the probe rows of a chunk, and chunks start on multiples of the block
/// (chunk sizes are rounded to it, t3k/core/chunk_size.hpp), so every probe's rows are always computed by the same
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

}  // namespace impl
}  // namespace t3k
