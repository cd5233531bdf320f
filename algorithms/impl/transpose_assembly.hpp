#pragma once
/// \file transpose_assembly.hpp
/// The gradient assembly of J^T (docs/math.md) with a reduction order fixed by absolute probe index.
/// Not API.
///
/// Summed results are added block by block (blocks of reduction_block_size_for<ExecutionSpace>() probes aligned to
/// the absolute probe index, which chunk boundaries never cut), by matrix products over each block's (probe, order)
/// axis. The sequence of floating-point operations is therefore the same for every chunking, so chunked sums are
/// bitwise equal to the unchunked one. Per-probe results are kernels over (probe, output entry).

#include "t3k/algorithms/impl/host/register_strips.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/matrix_product.hpp"
#include "t3k/core/chunk_size.hpp"

#include <type_traits>

namespace t3k {
namespace impl {

/// Host backends assemble row-wise: one thread owns a row of outputs (fixed leading indices) and walks the probes
/// with the trailing index innermost, so that every array is read contiguously and the innermost loop vectorizes.
/// Device backends keep one thread per output entry (coalesced across threads). Both compute each entry with the
/// same sequence of operations; only the traversal differs.
template <class ExecutionSpace>
constexpr bool assemble_by_rows() {
  return runs_on_host<ExecutionSpace>();
}

/// Width of the register-resident strips of the row-wise kernels.
constexpr int assembly_strip = 64;

/// One output entry per thread of a per-probe assembly on device backends (functors, not lambdas: see
/// jet_kernels.hpp on nvcc).
template <class Assembly, class OutView>
struct TtPerProbeEntry {
  Assembly self;
  OutView out;
  std::size_t row0;
  int nb;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int a, int ub) const {
    int const u = ub / nb;
    int const b = ub - u * nb;
    out(row0 + std::size_t(s), a, u, b) = self.contribution(s, a, ub);
  }
};
/// One (probe, a) row of a per-probe TT assembly on host backends.
template <class Assembly, class OutView>
struct TtPerProbeRows {
  Assembly self;
  OutView out;
  std::size_t row0;
  int na;
  KOKKOS_INLINE_FUNCTION void operator()(int sa) const {
    int const s = sa / na;
    int const a = sa - s * na;
    self.row_contribution(s, a, &out(row0 + std::size_t(s), a, 0, 0));
  }
};
/// One (probe, o) row of a per-probe Tucker assembly on host backends, in strips held in registers.
template <class Assembly, class OutView>
struct TuckerPerProbeRows {
  Assembly self;
  OutView out;
  std::size_t row0;
  int no, nj;
  KOKKOS_INLINE_FUNCTION void operator()(int so) const {
    int const s = so / no;
    int const o = so - s * no;
    for (int j0 = 0; j0 < nj; j0 += assembly_strip) {
      int const width = nj - j0 < assembly_strip ? nj - j0 : assembly_strip;
      self.strip_contribution(s, o, j0, width, &out(row0 + std::size_t(s), o, j0));
    }
  }
};
template <class Assembly, class OutView>
struct TuckerPerProbeEntry {
  Assembly self;
  OutView out;
  std::size_t row0;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int o, int j) const {
    out(row0 + std::size_t(s), o, j) = self.contribution(s, o, j);
  }
};

/// H~[a,u,b] contributions of one chunk (docs/math.md) with the sum over orders regrouped by the order of mu
/// and tau~ (as assemble_tt_summed explains):
///   sum_k mu[i]^(k)[a] S^(k)[u,b] + [has_left] tau~[i]^(k)[a] N^(k)[u,b],
/// S = nu[i+1] ⋆ deta~_i + [i <= d-2] xi_i ⋆ sigma~[i+1] and N = xi_i ⊛ nu[i+1], the Khatri-Rao jets of the
/// right-to-left sweep. Written per probe into rows row0 + s of a per-probe result (the summed result is
/// assemble_tt_summed). s_kr, n_kr are (rows, K1, nU, rR1); (u, b) runs over their last two axes as one.
template <class ExecutionSpace, class Scalar, class MemorySpace>
struct TtAssembly {
  Jet3<Scalar const, MemorySpace> mu, tau;
  Jet3<Scalar const, MemorySpace> s_kr, n_kr;  // (rows, K1, nU * rR1)
  bool has_left;

  KOKKOS_INLINE_FUNCTION Scalar contribution(int s, int a, int ub) const {
    int const k1 = int(mu.extent(1));
    Scalar acc = 0;
    for (int k = 0; k < k1; ++k) {
      acc += mu(s, k, a) * s_kr(s, k, ub);
      if (has_left) acc += tau(s, k, a) * n_kr(s, k, ub);
    }
    return acc;
  }

  /// contribution(s, a, ub) for every ub, written to out[ub], in strips of constant width held in registers
  /// (for_each_strip; same sums, same order).
  KOKKOS_INLINE_FUNCTION void row_contribution(int s, int a, Scalar* out) const {
    int const k1 = int(mu.extent(1));
    int const n_ub = int(s_kr.extent(2));
    for_each_strip<assembly_strip>(n_ub, [&](auto strip_width, int j0) {
      constexpr int width = decltype(strip_width)::value;
      Scalar acc[width];
      for (int q = 0; q < width; ++q) acc[q] = 0;
      for (int k = 0; k < k1; ++k) {
        Scalar const m = mu(s, k, a);
        Scalar const* s_row = &s_kr(s, k, j0);
        if (has_left) {
          Scalar const t = tau(s, k, a);
          Scalar const* n_row = &n_kr(s, k, j0);
          for (int q = 0; q < width; ++q) acc[q] = (acc[q] + m * s_row[q]) + t * n_row[q];
        } else {
          for (int q = 0; q < width; ++q) acc[q] += m * s_row[q];
        }
      }
      for (int q = 0; q < width; ++q) out[j0 + q] = acc[q];
    });
  }

  void per_probe(ExecutionSpace const& space, Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace> out,
                 std::size_t row0) const {
    int const rows = int(mu.extent(0));
    int const na = int(out.extent(1)), nu = int(out.extent(2)), nb = int(out.extent(3));
    if constexpr (assemble_by_rows<ExecutionSpace>()) {
      Kokkos::parallel_for("t3k::probe_derivatives_transpose::assemble_tt_per_probe_rows",
                           Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows * na),
                           TtPerProbeRows<TtAssembly, decltype(out)>{*this, out, row0, na});
      return;
    }
    Kokkos::parallel_for("t3k::probe_derivatives_transpose::assemble_tt_per_probe",
                         Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, na, nu * nb}),
                         TtPerProbeEntry<TtAssembly, decltype(out)>{*this, out, row0, nb});
  }
};

/// out (M x N) += sum over the chunk's blocks of reduction_block_size_for<ExecutionSpace>() rows, blocks in order, of
///   a1_block^T b1_block [+ a2_block^T b2_block when with_second]
/// with a (rows, L, M) and b (rows, L, N) jets whose (row, order) axes are the products' inner dimension: the summed
/// assemblies of J^T. `rows` (the extent of every jet) are a chunk's rows, starting on a block, so the sequence of
/// floating-point operations is the same for every chunking. Host backends: each thread owns a slab of out's
/// columns through every block (for_each_column_slab_on_host_threads; the products are too small for the BLAS's own
/// threads to speed up, docs/performance.md). Device backends: one batched kernel into block partials, then their sum
/// in block order.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void add_block_products(ExecutionSpace const& space, char const* label, Matrix<Scalar, MemorySpace> out,
                        Jet3<Scalar const, MemorySpace> a1, Jet3<Scalar const, MemorySpace> b1,
                        Jet3<Scalar const, MemorySpace> a2, Jet3<Scalar const, MemorySpace> b2, bool with_second,
                        Matrix<Scalar, MemorySpace> partials) {
  using MatrixC = Matrix<Scalar const, MemorySpace>;
  std::size_t const rows = a1.extent(0), l1 = a1.extent(1), l2 = with_second ? a2.extent(1) : 0;
  std::size_t const nm = out.extent(0), nn = out.extent(1);
  constexpr std::size_t block_size = reduction_block_size_for<ExecutionSpace>();
  if constexpr (!runs_on_host<ExecutionSpace>()) {
    device::ProductTerm<Scalar, MemorySpace> const first{MatrixC(a1.data(), rows * l1, nm),
                                                         MatrixC(b1.data(), rows * l1, nn), true, false,
                                                         int(block_size * l1)};
    device::ProductTerm<Scalar, MemorySpace> const second{MatrixC(a2.data(), with_second ? rows * l2 : 0, nm),
                                                          MatrixC(b2.data(), with_second ? rows * l2 : 0, nn), true,
                                                          false, int(block_size * l2)};
    device::batched_product(space, label, first, with_second ? &second : nullptr, out, n_row_blocks(rows, block_size),
                            true, partials);
  } else {
    (void)partials;
    for_each_column_slab_on_host_threads(space, nn, [&](std::size_t c0, std::size_t c1) {
      auto const out_slab = column_slab(out, c0, c1);
      for (std::size_t s = 0; s < rows; s += block_size) {
        std::size_t const block = min_of(block_size, rows - s);
        matrix_product(space, label, Op::transpose, MatrixC(a1.data() + s * l1 * nm, block * l1, nm), Op::none,
                       column_slab(MatrixC(b1.data() + s * l1 * nn, block * l1, nn), c0, c1), out_slab, true);
        if (with_second) {
          matrix_product(space, label, Op::transpose, MatrixC(a2.data() + s * l2 * nm, block * l2, nm), Op::none,
                         column_slab(MatrixC(b2.data() + s * l2 * nn, block * l2, nn), c0, c1), out_slab, true);
        }
      }
    });
  }
}

/// H~ (rL, nU, rR1) += the chunk's contributions summed over probes (docs/math.md), as matrix products over
/// the (probe, order) axis of each block of reduction_block_size_for<ExecutionSpace>() probes, blocks in order:
///   H~[a, (u,b)] += sum_{s,l} mu[i]^(l)[a] S^(l)[u,b] + [has_left] sum_{s,k} tau~[i]^(k)[a] N^(k)[u,b].
/// The three terms of docs/math.md, with their sums over orders regrouped by the order of mu: the MN deta~ term is
/// sum_k sum_{l<=k} mu^(l) nu^(k-l) deta~^(k) = sum_l mu^(l) sum_m deta~^(l+m) nu^(m), the PX sigma~ term
/// sum_l mu^(l) sum_m xi^(m) sigma~^(l+m); together they are mu^(l) contracted with S^(l) = (nu ⋆ deta~ + xi ⋆
/// sigma~)^(l), which the right-to-left sweep forms anyway (sigma~[i] = S . R_i), as it forms N = XN (nu[i] =
/// N . R_i). So the assembly needs no Khatri-Rao jet of its own, and H~ is written in its own layout. `rows` (the
/// extent of every jet) are a chunk's probes, starting on a block.
template <class ExecutionSpace, class Scalar, class MemorySpace, class OutView>
void assemble_tt_summed(ExecutionSpace const& space, OutView const& out, Jet3<Scalar const, MemorySpace> mu,
                        Jet3<Scalar const, MemorySpace> s_kr, Jet3<Scalar const, MemorySpace> tau,
                        Jet3<Scalar const, MemorySpace> n_kr, bool has_left, Matrix<Scalar, MemorySpace> partials) {
  static_assert(std::is_same<typename OutView::array_layout, Kokkos::LayoutRight>::value, "H~ must be contiguous");
  add_block_products(space, "t3k::probe_derivatives_transpose::assemble_tt",
                     Matrix<Scalar, MemorySpace>(out.data(), out.extent(0), out.extent(1) * out.extent(2)), mu, s_kr,
                     tau, n_kr, has_left, partials);
}

/// V~ (nO, N) += the chunk's contributions summed over probes (docs/math.md), as matrix products over the
/// (probe, order) axis of each block of reduction_block_size_for<ExecutionSpace>() probes, blocks in order:
///   V~ += sum_{s,k} eta^(k) (x) r^(k) + sum_{s,m} dxi~^(m) (x) omega^(m)
/// with the chunk's residuals and probe pairs packed into contiguous jets `resid` (rows, K1, N), `omega` (rows, Kl, N).
template <class ExecutionSpace, class Scalar, class MemorySpace, class OutView>
void assemble_tucker_summed(ExecutionSpace const& space, OutView const& out, Jet3<Scalar const, MemorySpace> eta,
                            Jet3<Scalar const, MemorySpace> resid, Jet3<Scalar const, MemorySpace> dxi,
                            Jet3<Scalar const, MemorySpace> omega, Matrix<Scalar, MemorySpace> partials) {
  static_assert(std::is_same<typename OutView::array_layout, Kokkos::LayoutRight>::value, "V~ must be contiguous");
  add_block_products(space, "t3k::probe_derivatives_transpose::assemble_tucker",
                     Matrix<Scalar, MemorySpace>(out.data(), out.extent(0), out.extent(1)), eta, resid, dxi, omega,
                     true, partials);
}

/// V~[o,j] contributions of one chunk: sum_{k<K1} eta^(k)[o] r^(k)[j] + sum_{m<Kl} dxi~^(m)[o] omega^(m)[j].
template <class ExecutionSpace, class Scalar, class MemorySpace, class ProbeView, class ResidualView>
struct TuckerAssembly {
  Jet3<Scalar const, MemorySpace> eta, dxi;
  ProbeView w, p;
  ResidualView r;
  std::size_t s0;

  KOKKOS_INLINE_FUNCTION Scalar contribution(int s, int o, int j) const {
    int const k1 = int(eta.extent(1));
    int const kl = int(dxi.extent(1));
    std::size_t const row = s0 + std::size_t(s);
    Scalar acc = 0;
    for (int k = 0; k < k1; ++k) acc += eta(s, k, o) * r(row, k, j);
    acc += dxi(s, 0, o) * w(row, j);
    if (kl > 1) acc += dxi(s, 1, o) * p(row, j);
    return acc;
  }

  /// contribution(s, o, j0 + q) for q < width, each entry by the same operations in the same order.
  KOKKOS_INLINE_FUNCTION void strip_contribution(int s, int o, int j0, int width, Scalar* term) const {
    int const k1 = int(eta.extent(1));
    int const kl = int(dxi.extent(1));
    std::size_t const row = s0 + std::size_t(s);
    for (int q = 0; q < width; ++q) term[q] = 0;
    for (int k = 0; k < k1; ++k) {
      Scalar const e = eta(s, k, o);
      for (int q = 0; q < width; ++q) term[q] += e * r(row, k, j0 + q);
    }
    Scalar const d0 = dxi(s, 0, o);
    for (int q = 0; q < width; ++q) term[q] += d0 * w(row, j0 + q);
    if (kl > 1) {
      Scalar const d1 = dxi(s, 1, o);
      for (int q = 0; q < width; ++q) term[q] += d1 * p(row, j0 + q);
    }
  }

  void per_probe(ExecutionSpace const& space, Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace> out,
                 std::size_t row0) const {
    int const rows = int(eta.extent(0));
    int const no = int(out.extent(1)), nj = int(out.extent(2));
    if constexpr (assemble_by_rows<ExecutionSpace>()) {
      Kokkos::parallel_for("t3k::probe_derivatives_transpose::assemble_tucker_per_probe_rows",
                           Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows * no),
                           TuckerPerProbeRows<TuckerAssembly, decltype(out)>{*this, out, row0, no, nj});
      return;
    }
    Kokkos::parallel_for("t3k::probe_derivatives_transpose::assemble_tucker_per_probe",
                         Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, no, nj}),
                         TuckerPerProbeEntry<TuckerAssembly, decltype(out)>{*this, out, row0});
  }
};

}  // namespace impl
}  // namespace t3k
