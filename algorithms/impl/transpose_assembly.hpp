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

namespace t3k {
namespace impl {

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

  void summed(ExecutionSpace const& space, Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace> out,
              Jet3<Scalar, MemorySpace> open, std::size_t s0, std::size_t block, std::size_t n_probes) const {
    int const rows = int(mn.extent(0));
    int const na = int(out.extent(0)), nu = int(out.extent(1)), nb = int(out.extent(2));
    auto self = *this;
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

  void summed(ExecutionSpace const& space, Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace> out,
              Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> open,
              std::size_t block, std::size_t n_probes) const {
    int const rows = int(eta.extent(0));
    int const no = int(out.extent(0)), nj = int(out.extent(1));
    auto self = *this;
    std::size_t const first = s0;
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
    Kokkos::parallel_for(
        "t3k::probe_derivatives_transpose::assemble_tucker_per_probe",
        Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, no, nj}),
        KOKKOS_LAMBDA(int s, int o, int j) { out(row0 + std::size_t(s), o, j) = self.contribution(s, o, j); });
  }
};

}  // namespace impl
}  // namespace t3k
