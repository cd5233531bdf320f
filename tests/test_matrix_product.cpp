// The dense matrix products J^T's contractions run on (algorithms/impl/matrix_product.hpp): the Kokkos Kernels path
// (OpenBLAS underneath where it is the BLAS TPL) against a brute-force triple loop on the host, for every transpose
// combination, accumulating or not, odd sizes and an empty inner dimension; the plain kernel (the fallback without
// Kokkos Kernels) against the same reference; and the same call giving the same bits twice.
#include "algorithms/impl/matrix_product.hpp"
#include "test_devices.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace {

using t3k::impl::Op;

template <class C>
class MatrixProductTest : public ::testing::Test {};
TYPED_TEST_SUITE(MatrixProductTest, t3k_test::TestConfigs);

template <class Scalar>
std::vector<Scalar> pseudo_random(std::size_t n, unsigned seed) {
  std::vector<Scalar> v(n);
  unsigned state = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = Scalar(double(state >> 8) / double(1u << 24) - 0.5);
  }
  return v;
}

// C = [C +] op(A) op(B) with A stored (op_a == none ? m x k : k x m) and B (op_b == none ? k x n : n x k).
template <class Scalar>
std::vector<double> reference_product(Op op_a, std::vector<Scalar> const& a, Op op_b, std::vector<Scalar> const& b,
                                      std::vector<Scalar> const& c0, bool accumulate, std::size_t m, std::size_t n,
                                      std::size_t k) {
  std::vector<double> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = accumulate ? double(c0[i * n + j]) : 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        double const av = op_a == Op::none ? a[i * k + p] : a[p * m + i];
        double const bv = op_b == Op::none ? b[p * n + j] : b[j * k + p];
        acc += av * bv;
      }
      c[i * n + j] = acc;
    }
  return c;
}

template <class C, bool use_plain_kernel>
std::vector<typename C::scalar_type> run_product(Op op_a, std::vector<typename C::scalar_type> const& a, Op op_b,
                                                 std::vector<typename C::scalar_type> const& b,
                                                 std::vector<typename C::scalar_type> const& c0, bool accumulate,
                                                 std::size_t m, std::size_t n, std::size_t k) {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  Kokkos::View<S*, Mem> da("a", a.size() + 1), db("b", b.size() + 1), dc("c", c0.size() + 1);
  auto upload = [&](Kokkos::View<S*, Mem> d, std::vector<S> const& h) {
    Kokkos::deep_copy(
        space, Kokkos::subview(d, std::make_pair(std::size_t(0), h.size())),
        Kokkos::View<S const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h.data(), h.size()));
  };
  upload(da, a);
  upload(db, b);
  upload(dc, c0);
  auto const am = t3k::impl::as_matrix<S, Mem>(da.data(), op_a == Op::none ? m : k, op_a == Op::none ? k : m);
  auto const bm = t3k::impl::as_matrix<S, Mem>(db.data(), op_b == Op::none ? k : n, op_b == Op::none ? n : k);
  t3k::impl::Matrix<S, Mem> const cm(dc.data(), m, n);
  if (use_plain_kernel) {
    t3k::impl::matrix_product_kernel(space, "t3k_test::matrix_product", op_a, am, op_b, bm, cm, accumulate);
  } else {
    t3k::impl::matrix_product(space, "t3k_test::matrix_product", op_a, am, op_b, bm, cm, accumulate);
  }
  space.fence();
  std::vector<S> out(m * n);
  Kokkos::deep_copy(Kokkos::View<S*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data(), m * n),
                    Kokkos::subview(dc, std::make_pair(std::size_t(0), m * n)));
  return out;
}

template <class C, bool use_plain_kernel>
void product_matches_reference() {
  using S = typename C::scalar_type;
  struct Dims {
    std::size_t m, n, k;
  };
  for (Dims const dims : {Dims{1, 1, 1}, Dims{7, 5, 3}, Dims{96, 33, 32}, Dims{13, 70, 0}, Dims{192, 512, 32}}) {
    for (Op op_a : {Op::none, Op::transpose})
      for (Op op_b : {Op::none, Op::transpose})
        for (bool accumulate : {false, true}) {
          std::size_t const m = dims.m, n = dims.n, k = dims.k;
          auto const a = pseudo_random<S>(m * k, 1), b = pseudo_random<S>(k * n, 2), c0 = pseudo_random<S>(m * n, 3);
          auto const got = run_product<C, use_plain_kernel>(op_a, a, op_b, b, c0, accumulate, m, n, k);
          auto const want = reference_product(op_a, a, op_b, b, c0, accumulate, m, n, k);
          // Each entry is a sum of k + 1 terms of size <= 1/4: k + 1 roundings of at most |sum| ~ k/4 each.
          double const tol = t3k_test::eps_times<S>(4.0 * double(k + 2)) * (1.0 + double(k) / 4);
          for (std::size_t e = 0; e < m * n; ++e) {
            ASSERT_NEAR(double(got[e]), want[e], tol)
                << "m=" << m << " n=" << n << " k=" << k << " op_a=" << int(op_a) << " op_b=" << int(op_b)
                << " accumulate=" << accumulate << " entry " << e;
          }
          // The same call on the same shapes gives the same bits (what chunk invariance rests on).
          auto const again = run_product<C, use_plain_kernel>(op_a, a, op_b, b, c0, accumulate, m, n, k);
          EXPECT_EQ(again, got);
        }
  }
}

TYPED_TEST(MatrixProductTest, MatchesBruteForceReference) { product_matches_reference<TypeParam, false>(); }
TYPED_TEST(MatrixProductTest, PlainKernelMatchesBruteForceReference) { product_matches_reference<TypeParam, true>(); }

}  // namespace
