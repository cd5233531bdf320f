#pragma once
/// \file khatri_rao_rows.hpp
/// khatri_rao_jets on host backends. Not API.

#include "t3k/algorithms/impl/host/contract_jets_rows.hpp"
#include "t3k/algorithms/impl/host/register_strips.hpp"
#include "t3k/algorithms/impl/jet_pairing.hpp"

namespace t3k {
namespace impl {

/// khatri_rao_jets on host backends: one (s, k) per iteration; each strip of contiguous y (for_each_strip: `strip`
/// wide, then narrower constant widths) is summed in registers row x by row x (the same sums in the same order as
/// KhatriRaoJetsEntry) and stored once. The strips are the outer loop, so each width is a loop of its own: with the
/// full strip and a tail in one row loop, GCC splits the full strip's sums into narrower lanes and the kernel runs
/// markedly slower (BM_ProbeJets).
template <class Scalar, class MemorySpace>
struct KhatriRaoJetsRows {
  static constexpr int strip = 16;
  Jet4<Scalar, MemorySpace> out;
  KhatriRaoTerm<Scalar, MemorySpace> first, second;
  int n_terms, lo, nx, ny;

  KOKKOS_INLINE_FUNCTION void operator()(int sk) const {
    int const s = sk / lo;
    int const k = sk - s * lo;
    CoefficientPairRows<Scalar> const rows_first = coefficient_pair_rows(first.pairs(k), first.a, first.b, s);
    CoefficientPairRows<Scalar> const rows_second =
        n_terms > 1 ? coefficient_pair_rows(second.pairs(k), second.a, second.b, s) : CoefficientPairRows<Scalar>{};
    Scalar* const o = &out(s, k, 0, 0);
    for_each_strip<strip>(ny, [&](auto width, int y0) {
      for (int x = 0; x < nx; ++x) write_strip<decltype(width)::value>(o, x, y0, rows_first, rows_second);
    });
  }

  /// Entries [y0, y0 + Width) of row x.
  template <int Width>
  KOKKOS_INLINE_FUNCTION void write_strip(Scalar* o, int x, int y0, CoefficientPairRows<Scalar> const& rows_first,
                                          CoefficientPairRows<Scalar> const& rows_second) const {
    Scalar acc[Width];
    for (int q = 0; q < Width; ++q) acc[q] = 0;
    add_pairs<Width>(acc, rows_first, x, y0);
    add_pairs<Width>(acc, rows_second, x, y0);
    Scalar* const o_row = o + std::size_t(x) * std::size_t(ny) + y0;
    for (int q = 0; q < Width; ++q) o_row[q] = acc[q];
  }

  template <int Width>
  KOKKOS_INLINE_FUNCTION static void add_pairs(Scalar* acc, CoefficientPairRows<Scalar> const& rows, int x, int y0) {
    for (int c = 0; c < rows.count; ++c) {
      Scalar const ax = rows.a[c * rows.step_a + x];
      Scalar const* const b_row = rows.b + c * rows.step_b + y0;
      for (int q = 0; q < Width; ++q) acc[q] += ax * b_row[q];
    }
  }
};

}  // namespace impl
}  // namespace t3k
