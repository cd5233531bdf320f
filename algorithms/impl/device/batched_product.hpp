#pragma once
/// \file batched_product.hpp
/// Device wing of the sweeps' matrix products: every product of a chunk in one team kernel, whatever the number of
/// reduction blocks in the chunk. Not API.
///
/// C [+]= sum over terms of op(A_t) op(B_t), tiled: a team owns an output tile, stages slabs of the inner index of
/// both factors in scratch (read coalesced: neighbouring threads, neighbouring addresses of whichever index is
/// contiguous in memory) and each thread keeps a 4 x 4 micro-tile of sums in registers. Every entry is one sequential
/// sum over the inner index, in order, term after term, from zero, so its bits depend on neither the tiling nor the
/// number of rows: a probe's rows come out the same in every chunk, with one launch per call.
///
/// Summed products (the gradient assembly of J^T sums over the probes of a chunk) are batched over the chunk's
/// reduction blocks: batch g sums block g's rows into a partial, and a second kernel adds the partials to C in block
/// order. C then receives the same sequence of additions in every chunking (block partials in block order), which
/// keeps summed J^T bitwise invariant to the chunk size with two launches per assembly and chunk.

#include "t3k/algorithms/impl/matrix_product.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstddef>
#include <type_traits>

namespace t3k::impl::device {

/// One term op(A) op(B) of a batched product; op(A) is (m x k), op(B) is (k x n). Batch g of the term sums over the
/// inner indices [g * inner_per_batch, min((g + 1) * inner_per_batch, k)).
template <class Scalar, class MemorySpace>
struct ProductTerm {
  Matrix<Scalar const, MemorySpace> a, b;
  bool transpose_a = false, transpose_b = false;
  int inner_per_batch = 0;

  KOKKOS_INLINE_FUNCTION int inner() const { return int(transpose_a ? a.extent(0) : a.extent(1)); }
};

/// How the batched product stores a tile's sums.
enum class ProductOutput {
  overwrite,   ///< C = sum (one batch)
  accumulate,  ///< C += sum (one batch)
  partials     ///< partial g (rows [g m, (g + 1) m) of the partials matrix) = batch g's sum
};

/// Output entries per thread along each axis (a micro-tile of micro_tile x micro_tile sums in registers).
constexpr int micro_tile = 4;
/// Inner indices per scratch slab.
constexpr int tile_inner = 8;
/// Threads of a team that covers its tile with one micro-tile each (tile_m * tile_n = threads * micro_tile^2).
constexpr int tile_threads = 256;

/// The tile shape for an (m x n) output: narrow outputs (the sweeps' products by a rank or a Tucker factor, 1-32
/// wide, millions of rows) take tall tiles, short ones (the assembly's H~, rL rows) wide tiles, so that few of a
/// tile's threads fall outside the output.
struct TileShape {
  int m = 64, n = 64;
};
inline TileShape tile_shape(std::size_t m, std::size_t n) {
  constexpr int area = tile_threads * micro_tile * micro_tile;
  if (n <= 32) {
    int const tn = n <= 16 ? 16 : 32;
    return {area / tn, tn};
  }
  if (m <= 32) {
    int const tm = m <= 16 ? 16 : 32;
    return {tm, area / tm};
  }
  return {};
}

/// The team kernel of batched_product (a named functor: see jet_kernels.hpp on nvcc and lambdas).
template <class ExecutionSpace, class Scalar, class MemorySpace>
struct BatchedProductTiles {
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Slab = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Term = ProductTerm<Scalar, MemorySpace>;

  Term first, second;
  int n_terms;
  Matrix<Scalar, MemorySpace> c;
  ProductOutput output;
  int m, n, tile_m, tile_n, tiles_m, tiles_n;

  /// Stages op(A)[i0 + i, k0 + p] and op(B)[k0 + p, j0 + j] for p < kk; rows or columns outside the output are 0.
  KOKKOS_INLINE_FUNCTION void stage(Team const& team, Term const& t, int i0, int j0, int k0, int kk, Slab const& as,
                                    Slab const& bs) const {
    int const threads = team.team_size(), rank = team.team_rank();
    for (int e = rank; e < tile_m * tile_inner; e += threads) {
      // The index that is contiguous in memory varies fastest across threads.
      int const i = t.transpose_a ? e % tile_m : e / tile_inner;
      int const p = t.transpose_a ? e / tile_m : e % tile_inner;
      int const row = i0 + i;
      as(i, p) = (row < m && p < kk) ? (t.transpose_a ? t.a(k0 + p, row) : t.a(row, k0 + p)) : Scalar(0);
    }
    for (int e = rank; e < tile_inner * tile_n; e += threads) {
      int const j = t.transpose_b ? e / tile_inner : e % tile_n;
      int const p = t.transpose_b ? e % tile_inner : e / tile_n;
      int const col = j0 + j;
      bs(p, j) = (col < n && p < kk) ? (t.transpose_b ? t.b(col, k0 + p) : t.b(k0 + p, col)) : Scalar(0);
    }
  }

  /// Whether a team of `threads` keeps its sums in scratch (teams smaller than a tile: host spaces) rather than in
  /// registers (one micro-tile per thread: GPUs).
  KOKKOS_INLINE_FUNCTION static bool sums_in_scratch(int threads, TileShape t) {
    return threads < (t.m / micro_tile) * (t.n / micro_tile);
  }
  /// Scratch of the staged slabs (level 0) and of the sums where sums_in_scratch (level 1: a tile of sums is larger
  /// than host spaces' level 0).
  static std::size_t slab_bytes(TileShape t) {
    return Slab::shmem_size(t.m, tile_inner) + Slab::shmem_size(tile_inner, t.n);
  }
  static std::size_t sum_bytes(TileShape t, int threads) {
    return sums_in_scratch(threads, t) ? Slab::shmem_size(t.m, t.n) : 0;
  }

  /// Runs `slab(kk)` for every slab (kk inner indices) of batch `batch`, term after term, each staged in
  /// scratch between two barriers (every thread of a team runs the same slabs, so the barriers match).
  template <class SlabBody>
  KOKKOS_INLINE_FUNCTION void for_each_slab(Team const& team, int batch, int i0, int j0, Slab const& as, Slab const& bs,
                                            SlabBody const& slab) const {
    for (int term = 0; term < n_terms; ++term) {
      Term const& t = term == 0 ? first : second;
      int const k_begin = batch * t.inner_per_batch;
      int const k_end = min_of(k_begin + t.inner_per_batch, t.inner());
      for (int k0 = k_begin; k0 < k_end; k0 += tile_inner) {
        int const kk = min_of(tile_inner, k_end - k0);
        team.team_barrier();  // the previous slab has been read
        stage(team, t, i0, j0, k0, kk, as, bs);
        team.team_barrier();
        slab(kk);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(Team const& team) const {
    int const league = team.league_rank();
    int const tj = league % tiles_n;
    int const ti = (league / tiles_n) % tiles_m;
    int const batch = league / (tiles_n * tiles_m);
    int const i0 = ti * tile_m, j0 = tj * tile_n;
    Slab const as(team.team_scratch(0), tile_m, tile_inner);
    Slab const bs(team.team_scratch(0), tile_inner, tile_n);
    int const threads = team.team_size(), rank = team.team_rank();
    int const micro_cols = tile_n / micro_tile;
    int const n_micro = (tile_m / micro_tile) * micro_cols;
    // Each entry: acc = 0, then acc += op(A)[i, k] op(B)[k, j] for k in order, in registers or in scratch alike.
    if (!sums_in_scratch(threads, TileShape{tile_m, tile_n})) {
      int const mi = (rank / micro_cols) * micro_tile, mj = (rank % micro_cols) * micro_tile;
      Scalar acc[micro_tile][micro_tile];
      for (int r = 0; r < micro_tile; ++r) {
        for (int q = 0; q < micro_tile; ++q) acc[r][q] = Scalar(0);
      }
      for_each_slab(team, batch, i0, j0, as, bs, [&](int kk) {
        if (rank >= n_micro) return;
        for (int p = 0; p < kk; ++p) {
          Scalar a_col[micro_tile], b_row[micro_tile];
          for (int r = 0; r < micro_tile; ++r) a_col[r] = as(mi + r, p);
          for (int q = 0; q < micro_tile; ++q) b_row[q] = bs(p, mj + q);
          for (int r = 0; r < micro_tile; ++r) {
            for (int q = 0; q < micro_tile; ++q) acc[r][q] += a_col[r] * b_row[q];
          }
        }
      });
      if (rank < n_micro) {
        for (int r = 0; r < micro_tile; ++r) {
          for (int q = 0; q < micro_tile; ++q) store(batch, i0 + mi + r, j0 + mj + q, acc[r][q]);
        }
      }
      return;
    }
    Slab const sums(team.team_scratch(1), tile_m, tile_n);
    for (int e = rank; e < tile_m * tile_n; e += threads) sums(e / tile_n, e % tile_n) = Scalar(0);
    for_each_slab(team, batch, i0, j0, as, bs, [&](int kk) {
      for (int mt = rank; mt < n_micro; mt += threads) {
        int const mi = (mt / micro_cols) * micro_tile, mj = (mt % micro_cols) * micro_tile;
        for (int p = 0; p < kk; ++p) {
          for (int r = 0; r < micro_tile; ++r) {
            for (int q = 0; q < micro_tile; ++q) sums(mi + r, mj + q) += as(mi + r, p) * bs(p, mj + q);
          }
        }
      }
    });
    team.team_barrier();
    for (int e = rank; e < tile_m * tile_n; e += threads) {
      store(batch, i0 + e / tile_n, j0 + e % tile_n, sums(e / tile_n, e % tile_n));
    }
  }

  KOKKOS_INLINE_FUNCTION void store(int batch, int row, int col, Scalar sum) const {
    if (row >= m || col >= n) return;
    switch (output) {
      case ProductOutput::overwrite:
        c(row, col) = sum;
        break;
      case ProductOutput::accumulate:
        c(row, col) = c(row, col) + sum;
        break;
      case ProductOutput::partials:
        c(batch * m + row, col) = sum;
        break;
    }
  }
};

/// The batched product on host spaces (builds that run the device code paths on the host, for testing): one entry
/// per iteration, summed over the same inner indices in the same order as BatchedProductTiles, straight from the
/// factors. Team scratch on a host space is memory the space allocates and keeps, which would make the allocations
/// of a call depend on what ran before it.
template <class ExecutionSpace, class Scalar, class MemorySpace>
struct BatchedProductEntries {
  BatchedProductTiles<ExecutionSpace, Scalar, MemorySpace> tiles;
  KOKKOS_INLINE_FUNCTION void operator()(int e) const {
    int const m = tiles.m, n = tiles.n;
    int const batch = e / (m * n), i = (e / n) % m, j = e % n;
    Scalar acc = 0;
    for (int term = 0; term < tiles.n_terms; ++term) {
      ProductTerm<Scalar, MemorySpace> const& t = term == 0 ? tiles.first : tiles.second;
      int const k_begin = batch * t.inner_per_batch;
      int const k_end = min_of(k_begin + t.inner_per_batch, t.inner());
      for (int k = k_begin; k < k_end; ++k) {
        acc += (t.transpose_a ? t.a(k, i) : t.a(i, k)) * (t.transpose_b ? t.b(j, k) : t.b(k, j));
      }
    }
    tiles.store(batch, i, j, acc);
  }
};

/// C (m x n) += the partials (batches * m x n) in batch order, one thread per entry.
template <class Scalar, class MemorySpace>
struct AddPartialsInOrder {
  Matrix<Scalar, MemorySpace> c;
  Matrix<Scalar const, MemorySpace> partials;
  int n, batches;
  KOKKOS_INLINE_FUNCTION void operator()(int e) const {
    int const i = e / n, j = e % n;
    int const m = int(c.extent(0));
    Scalar sum = c(i, j);
    for (int g = 0; g < batches; ++g) sum += partials(g * m + i, j);
    c(i, j) = sum;
  }
};

/// The largest power of two <= tile_threads that `space` runs as one team of `functor`.
template <class ExecutionSpace, class Functor>
int team_threads(ExecutionSpace const& space, Functor const& functor, std::size_t scratch) {
  Kokkos::TeamPolicy<ExecutionSpace> const probe =
      Kokkos::TeamPolicy<ExecutionSpace>(space, 1, 1).set_scratch_size(0, Kokkos::PerTeam(scratch));
  int const most = probe.team_size_max(functor, Kokkos::ParallelForTag());
  int threads = tile_threads;
  while (threads > 1 && threads > most) threads /= 2;
  return threads;
}

/// C [+]= op(A_1) op(B_1) [+ op(A_2) op(B_2)] as `batches` batches of inner indices (ProductTerm::inner_per_batch):
/// with `partials` (batches * m x n, accumulate) every batch writes its sums there and a second kernel adds them to C
/// in batch order (C += partial 0, += partial 1, ...); without, one batch writes or adds to C directly (output
/// overwrite or accumulate). One or two kernel launches. **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void batched_product(ExecutionSpace const& space, char const* label, ProductTerm<Scalar, MemorySpace> const& first,
                     ProductTerm<Scalar, MemorySpace> const* second, Matrix<Scalar, MemorySpace> c, int batches,
                     bool accumulate, Matrix<Scalar, MemorySpace> partials = {}) {
  int const m = int(c.extent(0)), n = int(c.extent(1));
  if (m == 0 || n == 0 || batches == 0) return;
  bool const by_partials = partials.extent(0) > 0;
  T3K_DEBUG_ASSERT(by_partials ? (accumulate && partials.extent(0) >= std::size_t(batches) * std::size_t(m))
                               : batches == 1);
  TileShape const tile = tile_shape(std::size_t(m), std::size_t(n));
  int const tiles_m = (m + tile.m - 1) / tile.m, tiles_n = (n + tile.n - 1) / tile.n;
  ProductOutput const output =
      by_partials ? ProductOutput::partials : (accumulate ? ProductOutput::accumulate : ProductOutput::overwrite);
  using Tiles = BatchedProductTiles<ExecutionSpace, Scalar, MemorySpace>;
  Tiles const tiles{first,
                    second ? *second : first,
                    second ? 2 : 1,
                    by_partials ? partials : c,
                    output,
                    m,
                    n,
                    tile.m,
                    tile.n,
                    tiles_m,
                    tiles_n};
  if constexpr (std::is_same<typename ExecutionSpace::memory_space, Kokkos::HostSpace>::value) {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, batches * m * n),
                         BatchedProductEntries<ExecutionSpace, Scalar, MemorySpace>{tiles});
  } else {
    std::size_t const slabs = Tiles::slab_bytes(tile);
    int const threads = team_threads(space, tiles, slabs);
    std::size_t const sums = Tiles::sum_bytes(tile, threads);
    T3K_DEBUG_ASSERT(slabs <= std::size_t(Kokkos::TeamPolicy<ExecutionSpace>::scratch_size_max(0)));
    T3K_DEBUG_ASSERT(sums <= std::size_t(Kokkos::TeamPolicy<ExecutionSpace>::scratch_size_max(1)));
    Kokkos::parallel_for(label,
                         Kokkos::TeamPolicy<ExecutionSpace>(space, batches * tiles_m * tiles_n, threads)
                             .set_scratch_size(0, Kokkos::PerTeam(slabs))
                             .set_scratch_size(1, Kokkos::PerTeam(sums)),
                         tiles);
  }
  if (by_partials) {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, m * n),
                         AddPartialsInOrder<Scalar, MemorySpace>{c, partials, n, batches});
  }
}

/// C [+]= op(A) op(B) in one launch (batched_product with one term and one batch).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void tiled_product(ExecutionSpace const& space, char const* label, Op op_a, Matrix<Scalar const, MemorySpace> a,
                   Op op_b, Matrix<Scalar const, MemorySpace> b, Matrix<Scalar, MemorySpace> c, bool accumulate) {
  ProductTerm<Scalar, MemorySpace> term{a, b, op_a == Op::transpose, op_b == Op::transpose, 0};
  term.inner_per_batch = term.inner();
  batched_product(space, label, term, static_cast<ProductTerm<Scalar, MemorySpace> const*>(nullptr), c, 1, accumulate);
}

}  // namespace t3k::impl::device
