#pragma once
/// \file jet_pairing.hpp
/// Which coefficient pairs a jet contraction or a Khatri-Rao jet combines (docs/math.md, jet algebra). Shared by
/// the host and device kernels. Not API.

#include "t3k/core/impl/jet_views.hpp"

namespace t3k {
namespace impl {

/// Which pairs of coefficients a jet contraction combines (docs/math.md).
enum class JetPairing {
  product,            ///< out^(n) = sum_{a+b=n} Y^(a) v^(b)        (truncated Cauchy product)
  correlate_y_fixed,  ///< out^(n) = sum_a Y^(a) v^(a+n)          (transpose of multiplying by the fixed jet Y)
  correlate_v_fixed   ///< out^(n) = sum_b v^(b) Y^(b+n)          (transpose of multiplying by the fixed jet v)
};

/// Which axis of the jet of matrices Y (rows, L, P, Q) is summed against v.
enum class ContractAxis {
  first,  ///< out[x] = sum_p Y[p, x] (*) v[p]   (x runs over Q)
  second  ///< out[x] = sum_q Y[x, q] (*) v[q]   (x runs over P)
};

/// The extents of one jet contraction out (rows, lo, n_out) [+]= Y (rows, ly, P, Q) (*) v (rows, lv, n_sum), read
/// once by its dispatch point and handed to the host or device kernel.
struct ContractJetsExtents {
  int rows, lo, n_out, ly, lv, n_sum;
  template <class Out, class Y, class V>
  ContractJetsExtents(Out const& out, Y const& ymat, V const& v)
      : rows(int(out.extent(0))),
        lo(int(out.extent(1))),
        n_out(int(out.extent(2))),
        ly(int(ymat.extent(1))),
        lv(int(v.extent(1))),
        n_sum(int(v.extent(2))) {}
};

/// The coefficient pairs (a of Y, b of v) a jet contraction combines for output order n: a in [begin, end).
struct CoefficientPairs {
  int begin = 0, end = 0, shift = 0, sign = 0;
  KOKKOS_INLINE_FUNCTION int b_of(int a) const { return sign > 0 ? a + shift : shift - a; }
};

KOKKOS_INLINE_FUNCTION CoefficientPairs coefficient_pairs(JetPairing pairing, int n, int ly, int lv) {
  CoefficientPairs p;
  if (pairing == JetPairing::product) {  // b = n - a
    p.begin = n - lv + 1 > 0 ? n - lv + 1 : 0;
    p.end = n + 1 < ly ? n + 1 : ly;
    p.shift = n;
    p.sign = -1;
  } else if (pairing == JetPairing::correlate_y_fixed) {  // b = a + n
    p.begin = 0;
    p.end = lv - n < ly ? lv - n : ly;
    p.shift = n;
    p.sign = 1;
  } else {  // a = b + n, i.e. b = a - n
    p.begin = n;
    p.end = lv + n < ly ? lv + n : ly;
    p.shift = -n;
    p.sign = 1;
  }
  return p;
}

/// One term of a Khatri-Rao jet: out^(k)[x,y] += sum over the coefficient pairs (l, m) that `pairing` combines for
/// order k (coefficient_pairs with Y = a, v = b) of a^(l)[x] b^(m)[y]:
///   product:           sum_{l+m=k} a^(l)[x] b^(m)[y]
///   correlate_y_fixed: sum_l a^(l)[x] b^(l+k)[y]
///   correlate_v_fixed: sum_m a^(m+k)[x] b^(m)[y]
template <class Scalar, class MemorySpace>
struct KhatriRaoTerm {
  Jet3<Scalar const, MemorySpace> a, b;
  JetPairing pairing = JetPairing::product;

  KOKKOS_INLINE_FUNCTION CoefficientPairs pairs(int k) const {
    return coefficient_pairs(pairing, k, int(a.extent(1)), int(b.extent(1)));
  }
};

}  // namespace impl
}  // namespace t3k
