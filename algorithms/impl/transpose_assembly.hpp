#pragma once
/// \file transpose_assembly.hpp
/// The gradient assembly of J^T (SPEC.md section 8, step 5) with a reduction order fixed by absolute probe index.
/// Not API.
///
/// Summed results: each output entry adds the contributions of probes s = 0..W-1 one after another into a block
/// partial, and adds the partial into the result when s + 1 is a multiple of `block` (or s + 1 = W). The partial of
/// a block that a chunk boundary cuts is carried to the next chunk in `open`. The sequence of floating-point
/// operations is therefore the same for every chunking, so chunked sums are bitwise equal to the unchunked one for
/// any chunk size, not only multiples of the block.

#include "algorithms/impl/jet_kernels.hpp"

#include <type_traits>

namespace t3k {
namespace impl {

/// Host backends assemble row-wise: one thread owns a row of outputs (fixed leading indices) and walks the probes
/// with the trailing index innermost, so that every array is read contiguously and the innermost loop vectorizes.
/// Device backends keep one thread per output entry (coalesced across threads). Both compute each entry with the
/// same sequence of operations; only the traversal differs.
template <class ExecutionSpace>
constexpr bool assemble_by_rows() {
  return std::is_same<typename ExecutionSpace::memory_space, Kokkos::HostSpace>::value;
}

/// Width of the register-resident strips of the row-wise kernels, and the tile of the TT assembly.
constexpr int assembly_strip = 64;
constexpr int tile_u = 8;
constexpr int tile_b = 32;

/// Where a block partial ends: after probe s (absolute index) when s + 1 closes a block or the probe set.
KOKKOS_INLINE_FUNCTION bool closes_block(std::size_t s_abs, std::size_t block, std::size_t n_probes) {
  return (s_abs + 1) % block == 0 || s_abs + 1 == n_probes;
}

/// H~[a,u,b] contributions of one chunk (SPEC.md section 8):
///   sum_k MN^(k)[a,b] deta~^(k)[u] + [has_px] PX^(k)[a,u] sigma~[i+1]^(k)[b] + [has_xn] XN^(k)[u,b] tau~[i]^(k)[a].
/// Summed into `out` (rL, nU, rR1) through `open`, or written per probe into `per_probe` rows row0 + s.
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

  void summed(ExecutionSpace const& space, Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace> out,
              Jet3<Scalar, MemorySpace> open, std::size_t s0, std::size_t block, std::size_t n_probes) const {
    int const rows = int(mn.extent(0));
    int const na = int(out.extent(0)), nu = int(out.extent(1)), nb = int(out.extent(2));
    auto self = *this;
    if constexpr (assemble_by_rows<ExecutionSpace>()) {
      // One thread per tile (a, u0..u0+tile_u, b0..b0+tile_b): the tile's accumulators stay in registers/L1 while
      // the probes stream by, and every probe's data for the tile is read once.
      int const tiles_u = (nu + tile_u - 1) / tile_u, tiles_b = (nb + tile_b - 1) / tile_b;
      Kokkos::parallel_for(
          "t3k::probe_derivatives_transpose::assemble_tt_tiles",
          Kokkos::RangePolicy<ExecutionSpace>(space, 0, na * tiles_u * tiles_b), KOKKOS_LAMBDA(int tile) {
            int const a = tile / (tiles_u * tiles_b);
            int const u0 = ((tile / tiles_b) % tiles_u) * tile_u;
            int const b0 = (tile % tiles_b) * tile_b;
            int const wu = nu - u0 < tile_u ? nu - u0 : tile_u;
            int const wb = nb - b0 < tile_b ? nb - b0 : tile_b;
            Scalar acc[tile_u][tile_b], result[tile_u][tile_b], term[tile_u][tile_b];
            for (int x = 0; x < wu; ++x)
              for (int q = 0; q < wb; ++q) {
                acc[x][q] = open(a, u0 + x, b0 + q);
                result[x][q] = out(a, u0 + x, b0 + q);
              }
            for (int s = 0; s < rows; ++s) {
              self.tile_contribution(s, a, u0, wu, b0, wb, term);
              bool const closes = closes_block(s0 + std::size_t(s), block, n_probes);
              for (int x = 0; x < wu; ++x)
                for (int q = 0; q < wb; ++q) {
                  acc[x][q] += term[x][q];
                  if (closes) {
                    result[x][q] += acc[x][q];
                    acc[x][q] = 0;
                  }
                }
            }
            for (int x = 0; x < wu; ++x)
              for (int q = 0; q < wb; ++q) {
                out(a, u0 + x, b0 + q) = result[x][q];
                open(a, u0 + x, b0 + q) = acc[x][q];
              }
          });
      return;
    }
    Kokkos::parallel_for(
        "t3k::probe_derivatives_transpose::assemble_tt", Policy3<ExecutionSpace>(space, {0, 0, 0}, {na, nu, nb}),
        KOKKOS_LAMBDA(int a, int u, int b) {
          Scalar acc = open(a, u, b);
          Scalar result = out(a, u, b);
          for (int s = 0; s < rows; ++s) {
            acc += self.contribution(s, a, u, b);
            if (closes_block(s0 + std::size_t(s), block, n_probes)) {
              result += acc;
              acc = 0;
            }
          }
          out(a, u, b) = result;
          open(a, u, b) = acc;
        });
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
    Kokkos::parallel_for(
        "t3k::probe_derivatives_transpose::assemble_tt_per_probe",
        Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, na, nu * nb}), KOKKOS_LAMBDA(int s, int a, int ub) {
          int const u = ub / nb;
          int const b = ub - u * nb;
          out(row0 + std::size_t(s), a, u, b) = self.contribution(s, a, u, b);
        });
  }
};

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

  void summed(ExecutionSpace const& space, Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace> out,
              Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> open,
              std::size_t block, std::size_t n_probes) const {
    int const rows = int(eta.extent(0));
    int const no = int(out.extent(0)), nj = int(out.extent(1));
    auto self = *this;
    std::size_t const first = s0;
    if constexpr (assemble_by_rows<ExecutionSpace>()) {
      Kokkos::parallel_for(
          "t3k::probe_derivatives_transpose::assemble_tucker_rows", Kokkos::RangePolicy<ExecutionSpace>(space, 0, no),
          KOKKOS_LAMBDA(int o) {
            for (int j0 = 0; j0 < nj; j0 += assembly_strip) {
              int const width = nj - j0 < assembly_strip ? nj - j0 : assembly_strip;
              Scalar acc[assembly_strip], result[assembly_strip], term[assembly_strip];
              for (int q = 0; q < width; ++q) {
                acc[q] = open(o, j0 + q);
                result[q] = out(o, j0 + q);
              }
              for (int s = 0; s < rows; ++s) {
                self.strip_contribution(s, o, j0, width, term);
                for (int q = 0; q < width; ++q) acc[q] += term[q];
                if (closes_block(first + std::size_t(s), block, n_probes)) {
                  for (int q = 0; q < width; ++q) {
                    result[q] += acc[q];
                    acc[q] = 0;
                  }
                }
              }
              for (int q = 0; q < width; ++q) {
                out(o, j0 + q) = result[q];
                open(o, j0 + q) = acc[q];
              }
            }
          });
      return;
    }
    Kokkos::parallel_for(
        "t3k::probe_derivatives_transpose::assemble_tucker", Policy2<ExecutionSpace>(space, {0, 0}, {no, nj}),
        KOKKOS_LAMBDA(int o, int j) {
          Scalar acc = open(o, j);
          Scalar result = out(o, j);
          for (int s = 0; s < rows; ++s) {
            acc += self.contribution(s, o, j);
            if (closes_block(first + std::size_t(s), block, n_probes)) {
              result += acc;
              acc = 0;
            }
          }
          out(o, j) = result;
          open(o, j) = acc;
        });
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
    Kokkos::parallel_for(
        "t3k::probe_derivatives_transpose::assemble_tucker_per_probe",
        Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, no, nj}),
        KOKKOS_LAMBDA(int s, int o, int j) { out(row0 + std::size_t(s), o, j) = self.contribution(s, o, j); });
  }
};

}  // namespace impl
}  // namespace t3k
