#pragma once
/// \file entry_kernels.hpp
/// The sweeps' per-entry kernels on device backends: one output entry per thread, each a sequential sum in a
/// fixed order, neighbouring threads on neighbouring entries (the last index is the fastest). Not API.

#include "t3k/algorithms/impl/jet_pairing.hpp"
#include "t3k/algorithms/impl/matrix_product.hpp"

namespace t3k {
namespace impl {

// The kernel bodies below are named functors, not KOKKOS_LAMBDAs: nvcc (seen with 13.0 on an H200, reported for
// 11.x-12.x by other Kokkos projects) can break an extended __host__ __device__ lambda inside an inline function
// template that several translation units of one program instantiate: launching the kernel then calls a null
// pointer on the host (t3k_bench, whose benchmark files all instantiate these kernels, crashed so). A functor has no
// lambda wrapper.

/// contract_jets on device backends: one output entry per thread, summing over the pairs (a, b), then over y.
template <class Scalar, class MemorySpace>
struct ContractJetsEntry {
  Jet3<Scalar, MemorySpace> out;
  Jet4<Scalar const, MemorySpace> ymat;
  Jet3<Scalar const, MemorySpace> v;
  JetPairing pairing;
  int ly, lv, n_sum;
  bool first, accumulate;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int n, int x) const {
    Scalar acc = 0;
    CoefficientPairs const pairs = coefficient_pairs(pairing, n, ly, lv);
    for (int a = pairs.begin; a < pairs.end; ++a) {
      int const b = pairs.b_of(a);
      if (first) {
        for (int y = 0; y < n_sum; ++y) acc += ymat(s, a, y, x) * v(s, b, y);
      } else {
        for (int y = 0; y < n_sum; ++y) acc += ymat(s, a, x, y) * v(s, b, y);
      }
    }
    out(s, n, x) = accumulate ? out(s, n, x) + acc : acc;
  }
};

/// khatri_rao_jets on device backends: one output entry per thread, the first term's pairs, then the second's.
template <class Scalar, class MemorySpace>
struct KhatriRaoJetsEntry {
  Jet4<Scalar, MemorySpace> out;
  KhatriRaoTerm<Scalar, MemorySpace> first, second;
  int n_terms, ny;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int xy) const {
    int const x = xy / ny;
    int const y = xy - x * ny;
    Scalar acc = 0;
    add_term(acc, first, s, k, x, y);
    if (n_terms > 1) add_term(acc, second, s, k, x, y);
    out(s, k, x, y) = acc;
  }
  KOKKOS_INLINE_FUNCTION static void add_term(Scalar& acc, KhatriRaoTerm<Scalar, MemorySpace> const& term, int s, int k,
                                              int x, int y) {
    CoefficientPairs const pairs = term.pairs(k);
    for (int l = pairs.begin; l < pairs.end; ++l) acc += term.a(s, l, x) * term.b(s, pairs.b_of(l), y);
  }
};

/// write_probe_jets entry by entry: a sequential sum over u, then over o.
template <class Scalar, class MemorySpace, class OutputView>
struct WriteProbeJetsEntry {
  OutputView z;
  Matrix<Scalar const, MemorySpace> m1;
  Jet3<Scalar const, MemorySpace> e1;
  Matrix<Scalar const, MemorySpace> m2;
  Jet3<Scalar const, MemorySpace> e2;
  int s0, k1, n1, n2;
  KOKKOS_INLINE_FUNCTION void operator()(int s, int k, int j) const {
    Scalar acc = 0;
    if (k < k1) {
      for (int u = 0; u < n1; ++u) acc += m1(u, j) * e1(s, k, u);
      for (int o = 0; o < n2; ++o) acc += m2(o, j) * e2(s, k, o);
    }
    z(s0 + s, k, j) = acc;
  }
};

/// The operands of a write_probe_jets call (M2 and e2 absent when e2 has no data), shared by its host and device
/// kernels.
template <class Scalar, class MemorySpace, class OutputView>
WriteProbeJetsEntry<Scalar, MemorySpace, OutputView> write_probe_jets_operands(OutputView z, int s0,
                                                                               Matrix<Scalar const, MemorySpace> m1,
                                                                               Jet3<Scalar const, MemorySpace> e1,
                                                                               Matrix<Scalar const, MemorySpace> m2,
                                                                               Jet3<Scalar const, MemorySpace> e2) {
  return {z, m1, e1, m2, e2, s0, int(e1.extent(1)), int(m1.extent(0)), e2.data() ? int(m2.extent(0)) : 0};
}

}  // namespace impl
}  // namespace t3k
