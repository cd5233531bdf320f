#pragma once
/// \file khatri_rao_jets.hpp
/// Khatri-Rao jets of two edge jets, and the Khatri-Rao-then-matrix step of the sweeps: the dispatch point between
/// the host rows kernel (host/khatri_rao_rows.hpp) and the device per-entry kernel (device/entry_kernels.hpp).
/// Not API.

#include "t3k/algorithms/impl/apply_matrix.hpp"
#include "t3k/algorithms/impl/device/entry_kernels.hpp"
#include "t3k/algorithms/impl/host/khatri_rao_rows.hpp"
#include "t3k/algorithms/impl/jet_pairing.hpp"

namespace t3k {
namespace impl {

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
/// product reads them (a block of them is 0.4-0.8 MB at the J^T target shape; a chunk's are several MB, which the
/// separate calls write out to the shared cache and read back). Device backends make the two calls.
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
/// do the same products' FLOPs; which is faster depends on how wide an output the BLAS writes: on host cores the
/// Khatri-Rao-first step wins from output ranks 32 on and loses at 8 (BM_ProbeJets, BM_J at wide ranks). Device
/// backends keep the product-first order: only it has been measured there.
template <class ExecutionSpace>
constexpr bool khatri_rao_first(std::size_t output_rank) {
  return runs_on_host<ExecutionSpace>() && output_rank >= 32;
}

}  // namespace impl
}  // namespace t3k
