#pragma once
/// \file transpose_assembly.hpp
/// The gradient assembly of J^T (SPEC.md section 8, step 5) with a reduction order fixed by absolute probe index.
/// Not API.
///
/// Summed results are added block by block (blocks of reduction_block_size probes aligned to the absolute probe
/// index, which chunk boundaries never cut), by matrix products over each block's (probe, order) axis. The sequence
/// of floating-point operations is therefore the same for every chunking, so chunked sums are bitwise equal to the
/// unchunked one. Per-probe results are kernels over (probe, output entry).

#include "algorithms/impl/jet_kernels.hpp"
#include "algorithms/impl/matrix_product.hpp"
#include "core/chunk_size.hpp"

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

/// Width of the register-resident strips of the row-wise kernels, and the tile of the TT assembly.
constexpr int assembly_strip = 64;
constexpr int tile_u = 8;
constexpr int tile_b = 32;

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
    out(row0 + std::size_t(s), a, u, b) = self.contribution(s, a, u, b);
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

/// H~[a,u,b] contributions of one chunk (SPEC.md section 8):
///   sum_k MN^(k)[a,b] deta~^(k)[u] + [has_px] PX^(k)[a,u] sigma~[i+1]^(k)[b] + [has_xn] XN^(k)[u,b] tau~[i]^(k)[a].
/// Written per probe into rows row0 + s of a per-probe result (the summed result is assemble_tt_summed).
template <class ExecutionSpace, class Scalar, class MemorySpace>
struct TtAssembly {
  Jet4<Scalar const, MemorySpace> mn, px, xn;
  Jet3<Scalar const, MemorySpace> deta, sigma, tau;
  bool has_px, has_xn;

  KOKKOS_INLINE_FUNCTION Scalar contribution(int s, int a, int u, int b) const {
    int const k1 = int(mn.extent(1));
    Scalar acc = 0;
    for (int k = 0; k < k1; ++k) {
      acc += mn(s, k, a, b) * deta(s, k, u);
      if (has_px) acc += px(s, k, a, u) * sigma(s, k, b);
      if (has_xn) acc += xn(s, k, u, b) * tau(s, k, a);
    }
    return acc;
  }

  /// contribution(s, a, u0 + x, b0 + q) for x < wu, q < wb, each entry by the same operations in the same order.
  KOKKOS_INLINE_FUNCTION void tile_contribution(int s, int a, int u0, int wu, int b0, int wb,
                                                Scalar (*term)[tile_b]) const {
    int const k1 = int(mn.extent(1));
    for (int x = 0; x < wu; ++x)
      for (int q = 0; q < wb; ++q) term[x][q] = 0;
    for (int k = 0; k < k1; ++k) {
      Scalar const* mn_row = &mn(s, k, a, b0);
      Scalar const* sg_row = has_px ? &sigma(s, k, b0) : nullptr;
      Scalar const ta = has_xn ? tau(s, k, a) : Scalar(0);
      for (int x = 0; x < wu; ++x) {
        Scalar const du = deta(s, k, u0 + x);
        Scalar* t = term[x];
        if (has_px && has_xn) {
          Scalar const pa = px(s, k, a, u0 + x);
          Scalar const* xn_row = &xn(s, k, u0 + x, b0);
          for (int q = 0; q < wb; ++q) t[q] = ((t[q] + mn_row[q] * du) + pa * sg_row[q]) + xn_row[q] * ta;
        } else if (has_px) {
          Scalar const pa = px(s, k, a, u0 + x);
          for (int q = 0; q < wb; ++q) t[q] = (t[q] + mn_row[q] * du) + pa * sg_row[q];
        } else if (has_xn) {
          Scalar const* xn_row = &xn(s, k, u0 + x, b0);
          for (int q = 0; q < wb; ++q) t[q] = (t[q] + mn_row[q] * du) + xn_row[q] * ta;
        } else {
          for (int q = 0; q < wb; ++q) t[q] = t[q] + mn_row[q] * du;
        }
      }
    }
  }

  void per_probe(ExecutionSpace const& space, Kokkos::View<Scalar****, Kokkos::LayoutRight, MemorySpace> out,
                 std::size_t row0) const {
    int const rows = int(mn.extent(0));
    int const na = int(out.extent(1)), nu = int(out.extent(2)), nb = int(out.extent(3));
    auto self = *this;
    if constexpr (assemble_by_rows<ExecutionSpace>()) {
      int const tiles_u = (nu + tile_u - 1) / tile_u, tiles_b = (nb + tile_b - 1) / tile_b;
      Kokkos::parallel_for(
          "t3k::probe_derivatives_transpose::assemble_tt_per_probe_tiles",
          Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows * na * tiles_u * tiles_b), KOKKOS_LAMBDA(int index) {
            int const tile = index % (na * tiles_u * tiles_b);
            int const s = index / (na * tiles_u * tiles_b);
            int const a = tile / (tiles_u * tiles_b);
            int const u0 = ((tile / tiles_b) % tiles_u) * tile_u;
            int const b0 = (tile % tiles_b) * tile_b;
            int const wu = nu - u0 < tile_u ? nu - u0 : tile_u;
            int const wb = nb - b0 < tile_b ? nb - b0 : tile_b;
            Scalar term[tile_u][tile_b];
            self.tile_contribution(s, a, u0, wu, b0, wb, term);
            for (int x = 0; x < wu; ++x)
              for (int q = 0; q < wb; ++q) out(row0 + std::size_t(s), a, u0 + x, b0 + q) = term[x][q];
          });
      return;
    }
    Kokkos::parallel_for("t3k::probe_derivatives_transpose::assemble_tt_per_probe",
                         Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, na, nu * nb}),
                         TtPerProbeEntry<TtAssembly, decltype(out)>{self, out, row0, nb});
  }
};

/// H~ (rL, nU, rR1) += the chunk's contributions summed over probes (SPEC.md section 8), as matrix products over
/// the (probe, order) axis of each block of reduction_block_size probes, blocks in order:
///   H~[(a,u), b] += sum_{s,m} Q^(m)[a,u] nu[i+1]^(m)[b]            (Q^(m)[a,u] = sum_l mu^(l)[a] deta~^(l+m)[u])
///                 + [has_px] sum_{s,k} PX^(k)[a,u] sigma~[i+1]^(k)[b]
///   H~[a, (u,b)] += [has_xn] sum_{s,k} tau~[i]^(k)[a] XN^(k)[u,b]
/// The first line is the MN deta~ term of SPEC.md with the order sum regrouped: sum_k sum_{l<=k} mu^(l) nu^(k-l)
/// deta~^(k) = sum_m (sum_l mu^(l) deta~^(l+m)) nu^(m); so regrouped, all three terms write H~ in its own layout
/// and need no transposed copy. `rows` (the extent of every jet) are a chunk's probes, starting on a block.
template <class ExecutionSpace, class Scalar, class MemorySpace, class OutView>
void assemble_tt_summed(ExecutionSpace const& space, OutView const& out, Jet4<Scalar const, MemorySpace> q,
                        Jet3<Scalar const, MemorySpace> nu_next, Jet4<Scalar const, MemorySpace> px,
                        Jet3<Scalar const, MemorySpace> sigma, Jet4<Scalar const, MemorySpace> xn,
                        Jet3<Scalar const, MemorySpace> tau, bool has_px, bool has_xn) {
  static_assert(std::is_same<typename OutView::array_layout, Kokkos::LayoutRight>::value, "H~ must be contiguous");
  using MatrixC = Matrix<Scalar const, MemorySpace>;
  std::size_t const rows = q.extent(0), k1 = q.extent(1);
  std::size_t const na = out.extent(0), nu = out.extent(1), nb = out.extent(2);
  Matrix<Scalar, MemorySpace> const au_b(out.data(), na * nu, nb), a_ub(out.data(), na, nu * nb);
  char const* label = "t3k::probe_derivatives_transpose::assemble_tt";
  for (std::size_t s = 0; s < rows; s += reduction_block_size) {
    std::size_t const m = min_of(reduction_block_size, rows - s) * k1;
    std::size_t const row = s * k1;
    matrix_product(space, label, Op::transpose, MatrixC(q.data() + row * na * nu, m, na * nu), Op::none,
                   MatrixC(nu_next.data() + row * nb, m, nb), au_b, true);
    if (has_px) {
      matrix_product(space, label, Op::transpose, MatrixC(px.data() + row * na * nu, m, na * nu), Op::none,
                     MatrixC(sigma.data() + row * nb, m, nb), au_b, true);
    }
    if (has_xn) {
      matrix_product(space, label, Op::transpose, MatrixC(tau.data() + row * na, m, na), Op::none,
                     MatrixC(xn.data() + row * nu * nb, m, nu * nb), a_ub, true);
    }
  }
}

/// V~ (nO, N) += the chunk's contributions summed over probes (SPEC.md section 8), as matrix products over the
/// (probe, order) axis of each block of reduction_block_size probes, blocks in order:
///   V~ += sum_{s,k} eta^(k) (x) r^(k) + sum_{s,m} dxi~^(m) (x) omega^(m)
/// with the chunk's residuals and probe pairs packed into contiguous jets `resid` (rows, K1, N), `omega` (rows, Kl, N).
template <class ExecutionSpace, class Scalar, class MemorySpace, class OutView>
void assemble_tucker_summed(ExecutionSpace const& space, OutView const& out, Jet3<Scalar const, MemorySpace> eta,
                            Jet3<Scalar const, MemorySpace> resid, Jet3<Scalar const, MemorySpace> dxi,
                            Jet3<Scalar const, MemorySpace> omega) {
  static_assert(std::is_same<typename OutView::array_layout, Kokkos::LayoutRight>::value, "V~ must be contiguous");
  using MatrixC = Matrix<Scalar const, MemorySpace>;
  std::size_t const rows = eta.extent(0), k1 = eta.extent(1), kl = dxi.extent(1);
  std::size_t const no = out.extent(0), nj = out.extent(1);
  Matrix<Scalar, MemorySpace> const v(out.data(), no, nj);
  char const* label = "t3k::probe_derivatives_transpose::assemble_tucker";
  for (std::size_t s = 0; s < rows; s += reduction_block_size) {
    std::size_t const block = min_of(reduction_block_size, rows - s);
    matrix_product(space, label, Op::transpose, MatrixC(eta.data() + s * k1 * no, block * k1, no), Op::none,
                   MatrixC(resid.data() + s * k1 * nj, block * k1, nj), v, true);
    matrix_product(space, label, Op::transpose, MatrixC(dxi.data() + s * kl * no, block * kl, no), Op::none,
                   MatrixC(omega.data() + s * kl * nj, block * kl, nj), v, true);
  }
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
    auto self = *this;
    if constexpr (assemble_by_rows<ExecutionSpace>()) {
      Kokkos::parallel_for(
          "t3k::probe_derivatives_transpose::assemble_tucker_per_probe_rows",
          Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows * no), KOKKOS_LAMBDA(int so) {
            int const s = so / no;
            int const o = so - s * no;
            for (int j0 = 0; j0 < nj; j0 += assembly_strip) {
              int const width = nj - j0 < assembly_strip ? nj - j0 : assembly_strip;
              self.strip_contribution(s, o, j0, width, &out(row0 + std::size_t(s), o, j0));
            }
          });
      return;
    }
    Kokkos::parallel_for("t3k::probe_derivatives_transpose::assemble_tucker_per_probe",
                         Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, no, nj}),
                         TuckerPerProbeEntry<TuckerAssembly, decltype(out)>{self, out, row0});
  }
};

}  // namespace impl
}  // namespace t3k
