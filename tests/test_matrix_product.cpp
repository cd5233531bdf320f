// The dense matrix products J^T's contractions run on (t3k/algorithms/impl/matrix_product.hpp): the Kokkos Kernels path
// (OpenBLAS underneath where it is the BLAS TPL) against a brute-force triple loop on the host, for every transpose
// combination, accumulating or not, odd sizes and an empty inner dimension; the plain kernel (the fallback without
// Kokkos Kernels) against the same reference; and the same call giving the same bits twice. Also the Khatri-Rao jets
// that feed those products and the jet contractions that read them (t3k/algorithms/impl/jet_kernels.hpp), against their
// definitions by coefficient pairs; apply_matrix, whose host form spreads whole block products over threads; the
// Khatri-Rao jets formed block by block before their products; the probe-pair input products (in place or packed,
// one matrix or several); the probe-jet output kernel; the column slabs the summed assembly products are split into
// on host threads; and the host kernel for the sweeps' small products (host_small_product.hpp) against sequential sums.
#include "t3k/algorithms/impl/host/host_small_product.hpp"
#include "t3k/algorithms/impl/host/register_strips.hpp"
#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/impl/matrix_product.hpp"
#include "t3k/core/memory_tracking.hpp"
#include "test_devices.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
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

/// Copies host values into the leading entries of a View of the config's memory space, on the instance `space`, and
/// waits for it (host threads may read the View next without going through the instance).
template <class ExecutionSpace, class Scalar, class Mem>
void upload(ExecutionSpace const& space, Kokkos::View<Scalar*, Mem> const& d, std::vector<Scalar> const& h) {
  Kokkos::deep_copy(
      space, Kokkos::subview(d, std::make_pair(std::size_t(0), h.size())),
      Kokkos::View<Scalar const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h.data(), h.size()));
  space.fence();
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
  upload(space, da, a);
  upload(space, db, b);
  upload(space, dc, c0);
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
  // 64 x 8 x 1000 and 131 x 40 x 9 are the probe sweeps' small products (an output or an inner dimension of a rank),
  // which builds for AVX2 hosts compute by host_small_product: a transposed 1000 x 8 factor in several panels.
  for (Dims const dims : {Dims{1, 1, 1}, Dims{7, 5, 3}, Dims{96, 33, 32}, Dims{13, 70, 0}, Dims{192, 512, 32},
                          Dims{64, 8, 1000}, Dims{131, 40, 9}}) {
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

#ifdef T3K_HAVE_HOST_SMALL_PRODUCT
// host_small_product on row-major factors with padded rows (row strides past the row lengths, as column slabs have):
// every entry within the bound of a sequential sum, C's padding untouched, and each row the same bits when computed
// alone (a probe's row never depends on the block's row count or the register tile holding it). Shapes hit every
// tile: full 6-row tiles and each shorter one, strips of two vectors, one vector and single entries, and (B
// transposed) several packed panels.
template <class S>
void host_small_product_matches_sequential_sums(bool transpose_b, bool accumulate) {
  struct Shape {
    int m, n, k;
  };
  for (Shape const sh : {Shape{1, 1, 1}, Shape{5, 3, 2}, Shape{6, 8, 8}, Shape{13, 17, 5}, Shape{64, 64, 8},
                         Shape{7, 9, 300}, Shape{19, 40, 130}, Shape{64, 8, 1000}, Shape{12, 24, 16}}) {
    int const m = sh.m, n = sh.n, k = sh.k;
    if (!t3k::impl::host_small_product_fits<S>(n, k, transpose_b, accumulate)) {
      // An accumulating product over several panels of a transposed B is the BLAS's (matrix_product).
      EXPECT_TRUE(transpose_b && accumulate && k > t3k::impl::host_small_product_panel<S>(n));
      continue;
    }
    std::size_t const lda = std::size_t(k) + 3, ldb = std::size_t(transpose_b ? k : n) + 2, ldc = std::size_t(n) + 5;
    auto const a = pseudo_random<S>(std::size_t(m) * lda, 11);
    auto const b = pseudo_random<S>(std::size_t(transpose_b ? n : k) * ldb, 12);
    auto const c0 = pseudo_random<S>(std::size_t(m) * ldc, 13);
    auto c = c0;
    t3k::impl::host_small_product<S>(m, n, k, a.data(), lda, b.data(), ldb, transpose_b, c.data(), ldc, accumulate);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        double exact = accumulate ? double(c0[i * ldc + j]) : 0.0, magnitude = std::abs(exact);
        for (int p = 0; p < k; ++p) {
          double const term = double(a[i * lda + p]) * double(transpose_b ? b[j * ldb + p] : b[p * ldb + j]);
          exact += term;
          magnitude += std::abs(term);
        }
        // A sequential sum of k + 1 terms: at most k + 1 roundings, each of at most eps times the running sum.
        ASSERT_NEAR(double(c[i * ldc + j]), exact, t3k_test::eps_times<S>(double(k + 2)) * magnitude)
            << "m=" << m << " n=" << n << " k=" << k << " transpose_b=" << transpose_b << " entry " << i << "," << j;
      }
      for (std::size_t j = std::size_t(n); j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], c0[i * ldc + j]) << "padding";
    }
    for (int i = 0; i < m; ++i) {
      std::vector<S> row(c0.begin() + std::ptrdiff_t(i * ldc), c0.begin() + std::ptrdiff_t((i + 1) * ldc));
      t3k::impl::host_small_product<S>(1, n, k, a.data() + i * lda, lda, b.data(), ldb, transpose_b, row.data(), ldc,
                                       accumulate);
      for (int j = 0; j < n; ++j) ASSERT_EQ(row[j], c[i * ldc + j]) << "row " << i << " alone, m=" << m << " n=" << n;
    }
  }
}

// A transposed B, packed panel by panel with the sums carried on over panels, gives the bits of the untransposed
// product with the transpose written out: the same sequential sums.
template <class S>
void host_small_product_panels_carry_the_sums() {
  int const m = 19, n = 40, k = 300;  // 16384-byte panels: 51 inner indices of 40 doubles, 102 of 40 floats
  ASSERT_GT(k, 2 * t3k::impl::host_small_product_panel<S>(n));
  auto const a = pseudo_random<S>(std::size_t(m) * k, 21);
  auto const bt = pseudo_random<S>(std::size_t(n) * k, 22);  // B^T, n x k
  std::vector<S> b(std::size_t(k) * n);
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < n; ++j) b[p * n + j] = bt[j * k + p];
  std::vector<S> from_panels(std::size_t(m) * n), direct(std::size_t(m) * n);
  t3k::impl::host_small_product<S>(m, n, k, a.data(), k, bt.data(), k, true, from_panels.data(), n, false);
  t3k::impl::host_small_product<S>(m, n, k, a.data(), k, b.data(), n, false, direct.data(), n, false);
  EXPECT_EQ(from_panels, direct);
}
#endif

void host_small_product_tests() {
#ifdef T3K_HAVE_HOST_SMALL_PRODUCT
  for (bool transpose_b : {false, true})
    for (bool accumulate : {false, true}) {
      host_small_product_matches_sequential_sums<double>(transpose_b, accumulate);
      host_small_product_matches_sequential_sums<float>(transpose_b, accumulate);
    }
  host_small_product_panels_carry_the_sums<double>();
  host_small_product_panels_carry_the_sums<float>();
#else
  GTEST_SKIP() << "host_small_product needs GNU vector extensions (GCC or Clang host code)";
#endif
}

// Entries of two Views of the same span (any memory space) that are not equal, compared on the host: 0 when two
// computations of the same values agree bitwise (as values: the kernels here produce no NaN).
template <class A, class B>
std::size_t unequal_entries(A const& a, B const& b) {
  auto const ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto const hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  EXPECT_EQ(ha.span(), hb.span());
  std::size_t count = 0;
  for (std::size_t e = 0; e < ha.span() && e < hb.span(); ++e) count += ha.data()[e] == hb.data()[e] ? 0 : 1;
  return count;
}

// A jet (rows, L, n) of pseudo-random entries on the device and its host copy.
template <class C>
struct TestJet {
  Kokkos::View<typename C::scalar_type***, Kokkos::LayoutRight, typename C::memory_space> device;
  std::vector<typename C::scalar_type> host;
  std::size_t l, n;
  TestJet(std::size_t rows, std::size_t l_, std::size_t n_, unsigned seed)
      : device("jet", rows, l_, n_), host(pseudo_random<typename C::scalar_type>(rows * l_ * n_, seed)), l(l_), n(n_) {
    Kokkos::deep_copy(device, Kokkos::View<typename C::scalar_type const***, Kokkos::LayoutRight, Kokkos::HostSpace,
                                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), rows, l, n));
  }
  double at(std::size_t s, std::size_t k, std::size_t x) const { return host[(s * l + k) * n + x]; }
};

// Whether coefficient l of a and m of b enter order k of a Khatri-Rao term (docs/math.md, written out).
bool pairs_with(t3k::impl::JetPairing pairing, std::size_t k, std::size_t l, std::size_t m) {
  switch (pairing) {
    case t3k::impl::JetPairing::product:
      return l + m == k;
    case t3k::impl::JetPairing::correlate_y_fixed:
      return m == l + k;
    default:
      return l == m + k;
  }
}

// khatri_rao_jets, one term and two, every pairing for each, against the sum over all coefficient pairs; widths that
// hit each strip width of the host kernel: 7 = 4 + 2 + 1, 47 = 16 + 16 + 8 + 4 + 2 + 1 (for_each_strip).
template <class C>
void khatri_rao_jets_match_definition() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using t3k::impl::JetPairing;
  typename C::execution_space space;
  std::size_t const rows = 5, lo = 3;
  for (std::size_t const ny : {std::size_t(7), std::size_t(47)}) {
    std::size_t const nx = 4;
    TestJet<C> const a1(rows, 3, nx, 11), b1(rows, 2, ny, 12), a2(rows, 2, nx, 13), b2(rows, 3, ny, 14);
    for (JetPairing p1 : {JetPairing::product, JetPairing::correlate_y_fixed, JetPairing::correlate_v_fixed})
      for (JetPairing p2 : {JetPairing::product, JetPairing::correlate_y_fixed, JetPairing::correlate_v_fixed})
        for (bool two_terms : {false, true}) {
          if (!two_terms && p2 != JetPairing::product) continue;
          Kokkos::View<S****, Kokkos::LayoutRight, Mem> out("kr", rows, lo, nx, ny);
          Kokkos::deep_copy(out, S(-7));  // every entry must be written
          using Term = t3k::impl::KhatriRaoTerm<S, Mem>;
          t3k::impl::khatri_rao_jets(space, "t3k_test::khatri_rao_jets", t3k::impl::Jet4<S, Mem>(out),
                                     Term{a1.device, b1.device, p1}, Term{a2.device, b2.device, p2}, two_terms);
          auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
          for (std::size_t s = 0; s < rows; ++s)
            for (std::size_t k = 0; k < lo; ++k)
              for (std::size_t x = 0; x < nx; ++x)
                for (std::size_t y = 0; y < ny; ++y) {
                  double want = 0;
                  for (std::size_t l = 0; l < a1.l; ++l)
                    for (std::size_t m = 0; m < b1.l; ++m)
                      if (pairs_with(p1, k, l, m)) want += a1.at(s, l, x) * b1.at(s, m, y);
                  if (two_terms) {
                    for (std::size_t l = 0; l < a2.l; ++l)
                      for (std::size_t m = 0; m < b2.l; ++m)
                        if (pairs_with(p2, k, l, m)) want += a2.at(s, l, x) * b2.at(s, m, y);
                  }
                  ASSERT_NEAR(double(got(s, k, x, y)), want, t3k_test::eps_times<S>(16))
                      << "pairings " << int(p1) << "/" << int(p2) << " two terms " << two_terms << " at (" << s << ", "
                      << k << ", " << x << ", " << y << ")";
                }
        }
  }
}

TYPED_TEST(MatrixProductTest, KhatriRaoJetsMatchDefinition) { khatri_rao_jets_match_definition<TypeParam>(); }

// contract_jets over either axis, every pairing, accumulating or not, against the sum over all coefficient pairs and
// the contracted axis; output widths that hit each of the host kernel's strip widths (63 = 32 + 16 + 8 + 4 + 2 + 1,
// for_each_strip) and its dot form's full and partial passes of eight outputs. Seven probes: a full group of the
// grouped host kernel (ContractJetsGroups, four probes) and a partial one; each probe's rows must also be bitwise
// equal to the same call made for that probe alone.
template <class C>
void contract_jets_match_definition() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using t3k::impl::ContractAxis;
  using t3k::impl::JetPairing;
  typename C::execution_space space;
  std::size_t const rows = 7, lo = 3, ly = 3, lv = 2;
  for (ContractAxis axis : {ContractAxis::first, ContractAxis::second})
    for (std::size_t const n_out : {std::size_t(3), std::size_t(8), std::size_t(19), std::size_t(63)})
      for (std::size_t const n_sum : {std::size_t(5), std::size_t(12)}) {
        bool const first = axis == ContractAxis::first;
        std::size_t const p = first ? n_sum : n_out, q = first ? n_out : n_sum;
        // Y (rows, ly, p, q) as a jet of rows, ly, p * q.
        TestJet<C> const y(rows, ly, p * q, 21), v(rows, lv, n_sum, 22), start(rows, lo, n_out, 23);
        for (JetPairing pairing : {JetPairing::product, JetPairing::correlate_y_fixed, JetPairing::correlate_v_fixed})
          for (bool accumulate : {false, true}) {
            Kokkos::View<S***, Kokkos::LayoutRight, Mem> out("out", rows, lo, n_out);
            Kokkos::deep_copy(out, start.device);
            t3k::impl::contract_jets(space, "t3k_test::contract_jets", t3k::impl::Jet3<S, Mem>(out),
                                     t3k::impl::Jet4<S const, Mem>(y.device.data(), rows, ly, p, q), axis,
                                     t3k::impl::Jet3<S const, Mem>(v.device), pairing, accumulate);
            auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
            Kokkos::View<S***, Kokkos::LayoutRight, Mem> alone("alone", rows, lo, n_out);
            Kokkos::deep_copy(alone, start.device);
            for (std::size_t s = 0; s < rows; ++s) {
              t3k::impl::contract_jets(
                  space, "t3k_test::contract_jets_alone",
                  t3k::impl::Jet3<S, Mem>(alone.data() + s * lo * n_out, 1, lo, n_out),
                  t3k::impl::Jet4<S const, Mem>(y.device.data() + s * ly * p * q, 1, ly, p, q), axis,
                  t3k::impl::Jet3<S const, Mem>(v.device.data() + s * lv * n_sum, 1, lv, n_sum), pairing, accumulate);
            }
            EXPECT_EQ(unequal_entries(out, alone), 0u)
                << "one probe per call: axis " << int(axis) << " pairing " << int(pairing) << " accumulate "
                << accumulate << " n_out " << n_out << " n_sum " << n_sum;
            for (std::size_t s = 0; s < rows; ++s)
              for (std::size_t n = 0; n < lo; ++n)
                for (std::size_t x = 0; x < n_out; ++x) {
                  double want = accumulate ? start.at(s, n, x) : 0.0;
                  for (std::size_t a = 0; a < ly; ++a)
                    for (std::size_t b = 0; b < lv; ++b) {
                      if (!pairs_with(pairing, n, a, b)) continue;
                      for (std::size_t j = 0; j < n_sum; ++j) {
                        want += y.at(s, a, first ? j * q + x : x * q + j) * v.at(s, b, j);
                      }
                    }
                  ASSERT_NEAR(double(got(s, n, x)), want, t3k_test::eps_times<S>(8.0 * double(n_sum + 1)))
                      << "axis " << int(axis) << " pairing " << int(pairing) << " accumulate " << accumulate
                      << " n_out " << n_out << " n_sum " << n_sum << " at (" << s << ", " << n << ", " << x << ")";
                }
          }
      }
}

// apply_matrix over several blocks of probe rows, both sides, accumulating or not: against its definition, and
// bitwise against the same call made one block at a time. On an OpenMP space with several threads the blocks of
// the many-block call are spread over the threads (t3k/algorithms/impl/host/host_blocks.hpp) while each one-block call
// has a block alone; a block's bits must depend neither on the thread that ran it nor on how many blocks its call had.
// The products are above OpenBLAS's threading threshold, where its sgemm on two threads gives other last bits than on
// one (this test failed when a lone block ran on the BLAS's threads).
template <class C>
void apply_matrix_matches_definition_and_single_blocks() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using t3k::impl::MatrixSide;
  typename C::execution_space space;
  std::size_t const b = t3k_test::block_of<C>();
  std::size_t const rows = 5 * b + 17, l = 3, ny = 64, nx = 96;  // products above OpenBLAS's threading threshold
  TestJet<C> const in(rows, l, ny, 31), start(rows, l, nx, 32), m(1, 1, nx * ny, 33);
  for (MatrixSide side : {MatrixSide::rows_out, MatrixSide::cols_out})
    for (bool accumulate : {false, true}) {
      // M is nx x ny for rows_out, ny x nx for cols_out: the same entries read either way.
      auto const mat = t3k::impl::as_matrix<S, Mem>(m.device.data(), side == MatrixSide::rows_out ? nx : ny,
                                                    side == MatrixSide::rows_out ? ny : nx);
      Kokkos::View<S***, Kokkos::LayoutRight, Mem> whole("whole", rows, l, nx), blockwise("blockwise", rows, l, nx);
      Kokkos::deep_copy(whole, start.device);
      Kokkos::deep_copy(blockwise, start.device);
      t3k::impl::apply_matrix(space, "t3k_test::apply_matrix", t3k::impl::Jet3<S, Mem>(whole),
                              t3k::impl::Jet3<S const, Mem>(in.device), mat, side, accumulate);
      for (std::size_t s = 0; s < rows; s += b) {
        std::size_t const block = std::min(b, rows - s);
        t3k::impl::apply_matrix(
            space, "t3k_test::apply_matrix", t3k::impl::Jet3<S, Mem>(blockwise.data() + s * l * nx, block, l, nx),
            t3k::impl::Jet3<S const, Mem>(in.device.data() + s * l * ny, block, l, ny), mat, side, accumulate);
      }
      auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole);
      auto const one_at_a_time = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), blockwise);
      std::size_t mismatches = 0;
      for (std::size_t s = 0; s < rows; ++s)
        for (std::size_t k = 0; k < l; ++k)
          for (std::size_t x = 0; x < nx; ++x) {
            double want = accumulate ? start.at(s, k, x) : 0.0;
            for (std::size_t y = 0; y < ny; ++y) {
              want += m.host[side == MatrixSide::rows_out ? x * ny + y : y * nx + x] * in.at(s, k, y);
            }
            ASSERT_NEAR(double(got(s, k, x)), want, t3k_test::eps_times<S>(8.0 * double(ny + 1)))
                << "side " << int(side) << " accumulate " << accumulate << " at (" << s << ", " << k << ", " << x
                << ")";
            mismatches += got(s, k, x) == one_at_a_time(s, k, x) ? 0 : 1;
          }
      EXPECT_EQ(mismatches, 0u) << "side " << int(side) << " accumulate " << accumulate;
    }
}

// khatri_rao_then_apply_matrix (one block's Khatri-Rao rows formed right before its product, on the thread that
// multiplies it) gives bitwise what khatri_rao_jets and then apply_matrix give, the Khatri-Rao jet included: several
// blocks and a short last one, one term and two, both sides, accumulating or not; and against apply_matrix's
// definition on the Khatri-Rao jet.
template <class C>
void khatri_rao_then_apply_matches_two_calls() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using t3k::impl::JetPairing;
  using t3k::impl::MatrixSide;
  using Term = t3k::impl::KhatriRaoTerm<S, Mem>;
  using J3 = t3k::impl::Jet3<S, Mem>;
  using J3c = t3k::impl::Jet3<S const, Mem>;
  using J4 = t3k::impl::Jet4<S, Mem>;
  typename C::execution_space space;
  std::size_t const rows = 3 * t3k_test::block_of<C>() + 9, lo = 3, nx = 8, ny = 16, n_out = 24;
  TestJet<C> const a1(rows, 3, nx, 51), b1(rows, 3, ny, 52), a2(rows, 2, nx, 53), b2(rows, 3, ny, 54),
      start(rows, lo, n_out, 55), m(1, 1, n_out * nx * ny, 56);
  for (MatrixSide side : {MatrixSide::rows_out, MatrixSide::cols_out})
    for (bool two_terms : {false, true})
      for (bool accumulate : {false, true}) {
        auto const mat = t3k::impl::as_matrix<S, Mem>(m.device.data(), side == MatrixSide::rows_out ? n_out : nx * ny,
                                                      side == MatrixSide::rows_out ? nx * ny : n_out);
        Term const first{a1.device, b1.device, JetPairing::product};
        Term const second{a2.device, b2.device, JetPairing::correlate_y_fixed};
        Kokkos::View<S****, Kokkos::LayoutRight, Mem> kr_fused("kr_fused", rows, lo, nx, ny),
            kr_apart("kr_apart", rows, lo, nx, ny);
        Kokkos::View<S***, Kokkos::LayoutRight, Mem> fused("fused", rows, lo, n_out), apart("apart", rows, lo, n_out);
        Kokkos::deep_copy(kr_fused, S(-7));  // every entry must be written
        Kokkos::deep_copy(fused, start.device);
        Kokkos::deep_copy(apart, start.device);
        t3k::impl::khatri_rao_then_apply_matrix(space, "t3k_test::kr", J4(kr_fused), first, second, two_terms,
                                                "t3k_test::apply", J3(fused), mat, side, accumulate);
        t3k::impl::khatri_rao_jets(space, "t3k_test::kr", J4(kr_apart), first, second, two_terms);
        t3k::impl::apply_matrix(space, "t3k_test::apply", J3(apart), J3c(kr_apart.data(), rows, lo, nx * ny), mat, side,
                                accumulate);
        EXPECT_EQ(unequal_entries(kr_fused, kr_apart), 0u) << "side " << int(side) << " two terms " << two_terms;
        EXPECT_EQ(unequal_entries(fused, apart), 0u)
            << "side " << int(side) << " two terms " << two_terms << " accumulate " << accumulate;
        auto const kr_want = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), kr_apart);
        auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fused);
        // The product itself against its definition (on the Khatri-Rao jet khatri_rao_jets' own test checks).
        for (std::size_t s = 0; s < rows; s += 37)
          for (std::size_t k = 0; k < lo; ++k)
            for (std::size_t x = 0; x < n_out; ++x) {
              double acc = accumulate ? start.at(s, k, x) : 0.0;
              for (std::size_t y = 0; y < nx * ny; ++y) {
                double const mv = m.host[side == MatrixSide::rows_out ? x * nx * ny + y : y * n_out + x];
                acc += mv * double(kr_want(s, k, y / ny, y % ny));
              }
              ASSERT_NEAR(double(got(s, k, x)), acc, t3k_test::eps_times<S>(16.0 * double(nx * ny + 1)))
                  << "side " << int(side) << " at (" << s << ", " << k << ", " << x << ")";
            }
      }
}

// apply_to_probe_pair, order 0 and linear jets, several blocks and a short one, from a probe offset: on probe rows
// that are a matrix (LayoutRight: products written straight into xi's columns, blocks on threads) and on LayoutLeft
// probes (packed first on hosts), both against the definition; the matrix form bitwise against the same call made
// one block at a time. Two output widths (8 and 24: a tile of 16 and of 32 columns in the device backends' tiled
// kernel).
template <class C>
void apply_to_probe_pair_matches_definition(std::size_t n_out) {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using J3 = t3k::impl::Jet3<S, Mem>;
  typename C::execution_space space;
  std::size_t const b = t3k_test::block_of<C>();
  std::size_t const n_probes = 4 * b, s0 = b, rows = 2 * b + 13, n_in = 96;
  TestJet<C> const wj(n_probes, 1, n_in, 61), pj(n_probes, 1, n_in, 62), m(1, 1, n_out * n_in, 63);
  Kokkos::View<S**, Kokkos::LayoutRight, Mem> const w_right(wj.device.data(), n_probes, n_in),
      p_right(pj.device.data(), n_probes, n_in);
  Kokkos::View<S**, Kokkos::LayoutLeft, Mem> w_left("w_left", n_probes, n_in), p_left("p_left", n_probes, n_in);
  Kokkos::deep_copy(w_left, w_right);
  Kokkos::deep_copy(p_left, p_right);
  auto const u = t3k::impl::as_matrix<S, Mem>(m.device.data(), n_out, n_in);
  for (std::size_t kl : {std::size_t(1), std::size_t(2)}) {
    Kokkos::View<S***, Kokkos::LayoutRight, Mem> pack("pack", b, kl, n_in), from_matrix("from_matrix", rows, kl, n_out),
        by_blocks("by_blocks", rows, kl, n_out), from_packed("from_packed", rows, kl, n_out);
    Kokkos::deep_copy(from_matrix, S(-7));  // every entry must be written
    Kokkos::deep_copy(from_packed, S(-7));
    t3k::impl::apply_to_probe_pair(space, "t3k_test::xi", J3(from_matrix), u, w_right, p_right, int(s0), J3(pack));
    t3k::impl::apply_to_probe_pair(space, "t3k_test::xi", J3(from_packed), u, w_left, p_left, int(s0), J3(pack));
    for (std::size_t s = 0; s < rows; s += b) {
      std::size_t const block = std::min(b, rows - s);
      t3k::impl::apply_to_probe_pair(space, "t3k_test::xi", J3(by_blocks.data() + s * kl * n_out, block, kl, n_out), u,
                                     w_right, p_right, int(s0 + s), J3(pack));
    }
    space.fence();
    auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), from_matrix);
    auto const got_packed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), from_packed);
    auto const one_at_a_time = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_blocks);
    std::size_t mismatches = 0;
    for (std::size_t s = 0; s < rows; ++s)
      for (std::size_t k = 0; k < kl; ++k)
        for (std::size_t x = 0; x < n_out; ++x) {
          double want = 0;
          for (std::size_t j = 0; j < n_in; ++j) {
            want += m.host[x * n_in + j] * (k == 0 ? wj.at(s0 + s, 0, j) : pj.at(s0 + s, 0, j));
          }
          double const tol = t3k_test::eps_times<S>(8.0 * double(n_in + 1));
          ASSERT_NEAR(double(got(s, k, x)), want, tol)
              << "n_out " << n_out << " kl " << kl << " at (" << s << ", " << k << ", " << x << ")";
          ASSERT_NEAR(double(got_packed(s, k, x)), want, tol)
              << "packed, n_out " << n_out << " kl " << kl << " at (" << s << ", " << k << ", " << x << ")";
          mismatches += got(s, k, x) == one_at_a_time(s, k, x) ? 0 : 1;
        }
    EXPECT_EQ(mismatches, 0u) << "n_out " << n_out << " kl " << kl;
  }
}

// apply_to_probe_pair_products with two matrices of different widths (8 and 24 rows: tiles of 16 and 32 columns on
// device backends) on the same probe rows, in place and packed: bitwise what
// one apply_to_probe_pair call per matrix gives (each block of probe vectors is read once for both, and neither
// product depends on the other), for order 0 and linear jets, several blocks and a short one, from a probe offset.
template <class C>
void probe_pair_products_match_single_calls() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using J3 = t3k::impl::Jet3<S, Mem>;
  using Product = t3k::impl::ProbePairProduct<S, Mem>;
  typename C::execution_space space;
  std::size_t const b = t3k_test::block_of<C>();
  std::size_t const n_probes = 4 * b, s0 = b, rows = 2 * b + 13, n_in = 96, n_u = 8, n_v = 24;
  TestJet<C> const wj(n_probes, 1, n_in, 81), pj(n_probes, 1, n_in, 82), mu(1, 1, n_u * n_in, 83),
      mv(1, 1, n_v * n_in, 84);
  Kokkos::View<S**, Kokkos::LayoutRight, Mem> const w_right(wj.device.data(), n_probes, n_in),
      p_right(pj.device.data(), n_probes, n_in);
  Kokkos::View<S**, Kokkos::LayoutLeft, Mem> w_left("w_left", n_probes, n_in), p_left("p_left", n_probes, n_in);
  Kokkos::deep_copy(w_left, w_right);
  Kokkos::deep_copy(p_left, p_right);
  auto const u = t3k::impl::as_matrix<S, Mem>(mu.device.data(), n_u, n_in);
  auto const v = t3k::impl::as_matrix<S, Mem>(mv.device.data(), n_v, n_in);
  for (std::size_t kl : {std::size_t(1), std::size_t(2)}) {
    Kokkos::View<S***, Kokkos::LayoutRight, Mem> pack("pack", b, kl, n_in);
    auto run = [&](auto const& w, auto const& p, char const* what) {
      Kokkos::View<S***, Kokkos::LayoutRight, Mem> xu("xu", rows, kl, n_u), xv("xv", rows, kl, n_v),
          yu("yu", rows, kl, n_u), yv("yv", rows, kl, n_v);
      Kokkos::deep_copy(xu, S(-7));  // every entry must be written
      Kokkos::deep_copy(xv, S(-7));
      t3k::impl::apply_to_probe_pair_products(
          space, "t3k_test::xi_dxi", 2,
          [&](std::size_t q) {
            return q == 0 ? Product{J3(xu), u} : Product{J3(xv), v};
          },
          w, p, int(s0), J3(pack));
      t3k::impl::apply_to_probe_pair(space, "t3k_test::xi", J3(yu), u, w, p, int(s0), J3(pack));
      t3k::impl::apply_to_probe_pair(space, "t3k_test::dxi", J3(yv), v, w, p, int(s0), J3(pack));
      space.fence();
      EXPECT_EQ(unequal_entries(xu, yu), 0u) << what << ", kl " << kl;
      EXPECT_EQ(unequal_entries(xv, yv), 0u) << what << ", kl " << kl;
    };
    run(w_right, p_right, "probe rows as a matrix");
    run(w_left, p_left, "LayoutLeft probe rows (packed on hosts)");
  }
}

// write_probe_jets against its definition: orders past K1 zeroed, one matrix and two, rows that hit every strip width
// (47 = 16 + 16 + 8 + 4 + 2 + 1), a probe offset and a row count that leave the host kernel's probe groups partial at
// both ends, z LayoutRight and LayoutStride (rows not contiguous); and bitwise what one call per probe gives (the
// host kernel writes a group of probes' rows strip by strip together: the grouping must not change a bit).
template <class C>
void write_probe_jets_match_definition() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using J3c = t3k::impl::Jet3<S const, Mem>;
  typename C::execution_space space;
  std::size_t const n_probes = 40, s0 = 3, rows = 29, n = 47, n1 = 8, n2 = 5;
  for (std::size_t k1 : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(5)}) {
    std::size_t const n_orders = k1 + 1;
    TestJet<C> const e1(rows, k1, n1, 91), e2(rows, k1, n2, 92), m1(1, 1, n1 * n, 93), m2(1, 1, n2 * n, 94);
    auto const mat1 = t3k::impl::as_matrix<S, Mem>(m1.device.data(), n1, n);
    auto const mat2 = t3k::impl::as_matrix<S, Mem>(m2.device.data(), n2, n);
    for (bool two : {false, true}) {
      J3c const second = two ? J3c(e2.device) : J3c();
      // z as a strided View over a buffer with its last two axes swapped, and as a plain LayoutRight View.
      Kokkos::View<S***, Kokkos::LayoutRight, Mem> z("z", n_probes, n_orders, n),
          by_probe("by_probe", n_probes, n_orders, n);
      Kokkos::View<S***, Kokkos::LayoutRight, Mem> z_t_buffer("z_t", n_probes, n, n_orders);
      Kokkos::LayoutStride const strided(n_probes, n * n_orders, n_orders, 1, n, n_orders);
      Kokkos::View<S***, Kokkos::LayoutStride, Mem> const z_t(z_t_buffer.data(), strided);
      Kokkos::deep_copy(z, S(-7));  // every entry in the rows must be written
      Kokkos::deep_copy(z_t_buffer, S(-7));
      t3k::impl::write_probe_jets(space, "t3k_test::z", z, int(s0), int(rows), mat1, J3c(e1.device), mat2, second);
      t3k::impl::write_probe_jets(space, "t3k_test::z", z_t, int(s0), int(rows), mat1, J3c(e1.device), mat2, second);
      for (std::size_t s = 0; s < rows; ++s) {
        auto const one = [&](J3c const& e) {
          return e.data() ? J3c(e.data() + s * e.extent(1) * e.extent(2), 1, e.extent(1), e.extent(2)) : J3c();
        };
        t3k::impl::write_probe_jets(space, "t3k_test::z", by_probe, int(s0 + s), 1, mat1, one(J3c(e1.device)), mat2,
                                    one(second));
      }
      space.fence();
      auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
      auto const got_t = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z_t_buffer);
      auto const single = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_probe);
      std::size_t mismatches = 0;
      for (std::size_t s = 0; s < n_probes; ++s)
        for (std::size_t k = 0; k < n_orders; ++k)
          for (std::size_t j = 0; j < n; ++j) {
            bool const in_rows = s >= s0 && s < s0 + rows;
            double want = in_rows ? 0.0 : -7.0;
            if (in_rows && k < k1) {
              for (std::size_t t = 0; t < n1; ++t) want += m1.host[t * n + j] * e1.at(s - s0, k, t);
              if (two) {
                for (std::size_t t = 0; t < n2; ++t) want += m2.host[t * n + j] * e2.at(s - s0, k, t);
              }
            }
            double const tol = t3k_test::eps_times<S>(4.0 * double(n1 + n2 + 1));
            ASSERT_NEAR(double(got(s, k, j)), want, tol)
                << "k1 " << k1 << " two " << two << " at (" << s << ", " << k << ", " << j << ")";
            ASSERT_NEAR(double(got_t(s, j, k)), want, tol)
                << "strided, k1 " << k1 << " two " << two << " at (" << s << ", " << k << ", " << j << ")";
            if (in_rows) mismatches += got(s, k, j) == single(s, k, j) ? 0 : 1;
          }
      EXPECT_EQ(mismatches, 0u) << "k1 " << k1 << " two " << two;
    }
  }
}

// Tool callbacks only ever come from the calling thread: with a Kokkos Tools region callback set (as a loaded tool
// library sets it), the host loops run on the calling thread, so Kokkos Kernels' profiling region around each BLAS
// call is never pushed from another thread (tools keep one region stack per process). Without one they spread again,
// and allocation callbacks alone (AllocationTracker) do not change the schedule.
std::atomic<int> region_pushes{0}, region_pushes_off_caller{0};
std::thread::id caller_thread;

template <class C>
void tools_see_calls_from_the_calling_thread_only() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  if constexpr (t3k::impl::runs_on_host<typename C::execution_space>()) {
    std::size_t const rows = 3 * t3k::reduction_block_size + 5, l = 2, ny = 32, nx = 48;
    TestJet<C> const in(rows, l, ny, 71), m(1, 1, nx * ny, 72);
    Kokkos::View<S***, Kokkos::LayoutRight, Mem> out("out", rows, l, nx);
    bool const spreads_without_tool = t3k::impl::spreads_blocks_over_threads(space);
    {
      t3k::AllocationTracker tracker;  // allocation callbacks alone leave the schedule as it is
      EXPECT_EQ(t3k::impl::spreads_blocks_over_threads(space), spreads_without_tool);
    }
    caller_thread = std::this_thread::get_id();
    region_pushes = 0;
    region_pushes_off_caller = 0;
    Kokkos::Tools::Experimental::set_push_region_callback([](char const*) {
      ++region_pushes;
      if (std::this_thread::get_id() != caller_thread) ++region_pushes_off_caller;
    });
    bool const spreads_with_tool = t3k::impl::spreads_blocks_over_threads(space);
    t3k::impl::apply_matrix(
        space, "t3k_test::apply_matrix", t3k::impl::Jet3<S, Mem>(out), t3k::impl::Jet3<S const, Mem>(in.device),
        t3k::impl::as_matrix<S, Mem>(m.device.data(), nx, ny), t3k::impl::MatrixSide::rows_out, false);
    t3k::impl::for_each_column_slab_on_host_threads(space, 256, [&](std::size_t, std::size_t) {
      Kokkos::Profiling::pushRegion("t3k_test::slab");
      Kokkos::Profiling::popRegion();
    });
    space.fence();
    Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
    EXPECT_FALSE(spreads_with_tool);
    EXPECT_GE(region_pushes.load(), 1);  // at least the slab body's own region
    EXPECT_EQ(region_pushes_off_caller.load(), 0);
    EXPECT_EQ(t3k::impl::spreads_blocks_over_threads(space), spreads_without_tool);
  }
}

// Products on every host execution space that the BLAS takes (all but host_small_product's, in builds that dispatch to
// it) run in the BLAS library Kokkos Kernels was configured with. Kokkos Kernels 4.1+ calls its BLAS TPL only where
// the Views' execution space is the instance's, and a HostSpace View's is the default host space: before
// kokkos_blas_gemm re-typed the Views, a product on Kokkos::Serial in a build whose default host space is OpenMP ran
// Kokkos Kernels' own GEMM. Kokkos Kernels names the path it takes in the profiling
// region it pushes around each call ("KokkosBlas::gemm[TPL_BLAS,double]"; a one-column product goes through gemv).
std::vector<std::string> blas_regions;

template <class C>
void host_products_call_the_blas_library() {
#if defined(T3K_HAVE_KOKKOSKERNELS) && defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using MatrixC = t3k::impl::Matrix<S const, Mem>;
  typename C::execution_space space;
  if constexpr (t3k::impl::runs_on_host<typename C::execution_space>()) {
    // Inner dimension and output wider than host_small_product_max_side, so that no build takes host_small_product.
    std::size_t const m = 9, k = 20, n = 24;
    TestJet<C> const a(1, 1, m * k, 81), b(1, 1, k * n, 82);
    Kokkos::View<S**, Kokkos::LayoutRight, Mem> c("c", m, n);
    t3k::impl::Matrix<S, Mem> const cm(c.data(), m, n);
    blas_regions.clear();
    Kokkos::Tools::Experimental::set_push_region_callback([](char const* name) { blas_regions.emplace_back(name); });
    t3k::impl::matrix_product(space, "t3k_test::blas", Op::none, MatrixC(a.device.data(), m, k), Op::none,
                              MatrixC(b.device.data(), k, n), cm, false);
    std::size_t const after_nn = blas_regions.size();
    t3k::impl::matrix_product(space, "t3k_test::blas", Op::transpose, MatrixC(a.device.data(), k, m), Op::none,
                              MatrixC(b.device.data(), k, 20), t3k::impl::column_slab(cm, 2, 22), true);
    std::size_t const after_tn = blas_regions.size();
    // A one-column product: gemv in Kokkos Kernels (narrower than a vector: never host_small_product's).
    Kokkos::View<S**, Kokkos::LayoutRight, Mem> c1("c1", m, 1);
    t3k::impl::matrix_product(space, "t3k_test::blas", Op::none, MatrixC(a.device.data(), m, 7), Op::none,
                              MatrixC(b.device.data(), 7, 1), t3k::impl::Matrix<S, Mem>(c1.data(), m, 1), false);
    std::size_t const after_gemv = blas_regions.size();
    // An inner dimension of 7: host_small_product's where the build dispatches to it, else the BLAS's.
    t3k::impl::matrix_product(space, "t3k_test::blas", Op::none, MatrixC(a.device.data(), m, 7), Op::none,
                              MatrixC(b.device.data(), 7, 16), t3k::impl::column_slab(cm, 0, 16), false);
    space.fence();
    Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
    EXPECT_GT(after_nn, 0u);
    EXPECT_GT(after_tn, after_nn);
    EXPECT_GT(after_gemv, after_tn);
#ifdef T3K_HOST_SMALL_PRODUCT_DISPATCH
    EXPECT_EQ(blas_regions.size(), after_gemv);
#else
    EXPECT_GT(blas_regions.size(), after_gemv);
#endif
    for (std::string const& region : blas_regions) EXPECT_NE(region.find("TPL_BLAS"), std::string::npos) << region;
  }
#else
  GTEST_SKIP() << "Kokkos Kernels without a host BLAS TPL";
#endif
}

// for_each_block_on_host_threads runs every block exactly once, on any space (a host space: it is host-only).
template <class C>
void host_blocks_run_each_block_once() {
  typename C::execution_space space;
  if constexpr (t3k::impl::runs_on_host<typename C::execution_space>()) {
    for (int const n_blocks : {0, 1, 2, 7, 64}) {
      std::vector<int> visits(std::size_t(n_blocks), 0);
      t3k::impl::for_each_block_on_host_threads(space, n_blocks, [&](int block) { ++visits[std::size_t(block)]; });
      EXPECT_EQ(visits, std::vector<int>(std::size_t(n_blocks), 1)) << n_blocks << " blocks";
    }
  }
}

// for_each_column_slab_on_host_threads partitions the columns into contiguous ranges, each visited once, with edges
// on multiples of column_slab_width, none narrower than it, at most one per thread; one range where it does not
// spread work (or the columns are too few to split).
template <class C>
void column_slabs_partition_the_columns() {
  typename C::execution_space space;
  if constexpr (t3k::impl::runs_on_host<typename C::execution_space>()) {
    std::size_t const width = t3k::impl::column_slab_width;
    std::size_t const threads = t3k::impl::block_threads(space);
    for (std::size_t const n_cols : {std::size_t(0), std::size_t(1), width - 1, width, 2 * width - 1, 2 * width,
                                     std::size_t(64), std::size_t(512), 7 * width + 5}) {
      std::vector<int> visits(n_cols, 0);
      std::vector<std::pair<std::size_t, std::size_t>> ranges;
      std::mutex ranges_mutex;
      t3k::impl::for_each_column_slab_on_host_threads(space, n_cols, [&](std::size_t c0, std::size_t c1) {
        for (std::size_t c = c0; c < c1; ++c) ++visits[c];
        std::lock_guard<std::mutex> lock(ranges_mutex);
        ranges.emplace_back(c0, c1);
      });
      std::size_t const n_ranges = ranges.size();
      EXPECT_EQ(visits, std::vector<int>(n_cols, 1)) << n_cols << " columns";
      std::size_t const want_ranges = std::max<std::size_t>(1, std::min(threads, n_cols / width));
      ASSERT_EQ(n_ranges, want_ranges) << n_cols << " columns, " << threads << " threads";
      for (std::size_t i = 0; i < n_ranges && n_ranges > 1; ++i) {
        auto const [c0, c1] = ranges[i];
        EXPECT_EQ(c0 % width, 0u) << n_cols << " columns: range [" << c0 << ", " << c1 << ")";
        EXPECT_TRUE(c1 == n_cols || c1 % width == 0) << n_cols << " columns: range [" << c0 << ", " << c1 << ")";
        EXPECT_GE(c1 - c0, width) << n_cols << " columns: range [" << c0 << ", " << c1 << ")";
      }
    }
  }
}

// for_each_strip splits a row into contiguous strips in order, every width a power of two no wider than the strip
// (a compile-time constant: the host kernels keep their sums in registers only then), full strips first and at most
// one strip of each narrower width after them.
constexpr int test_strip = 16;

// Records the strips for_each_strip hands out (a functor with device-legal code: nvcc warns about a host lambda called
// from the helper, which is a host-and-device function).
struct StripRecorder {
  int* starts;
  int* widths;
  int* count;
  template <class Width>
  KOKKOS_INLINE_FUNCTION void operator()(Width, int j0) const {
    constexpr int w = Width::value;
    static_assert(w > 0 && w <= test_strip && (w & (w - 1)) == 0, "strip widths are powers of two up to the strip");
    starts[*count] = j0;
    widths[*count] = w;
    ++*count;
  }
};

void strips_partition_a_row_in_constant_widths() {
  constexpr int strip = test_strip;
  for (int n = 0; n <= 3 * strip + 7; ++n) {
    std::vector<int> starts(std::size_t(n) + 1), widths(std::size_t(n) + 1);
    int count = 0;
    t3k::impl::for_each_strip<strip>(n, StripRecorder{starts.data(), widths.data(), &count});
    int next = 0;
    for (int i = 0; i < count; ++i) {
      int const j0 = starts[std::size_t(i)], w = widths[std::size_t(i)];
      ASSERT_EQ(j0, next) << n << " entries: strip " << i;
      EXPECT_TRUE(w == strip || i + 1 == count || widths[std::size_t(i) + 1] < w)
          << n << " entries: strip " << i << " of width " << w << " is followed by one as wide or wider";
      next = j0 + w;
    }
    EXPECT_EQ(next, n) << n << " entries";
    EXPECT_EQ(std::count(widths.begin(), widths.begin() + count, strip), n / strip) << n << " entries";
  }
}

// for_each_row_range_on_host_threads partitions the rows into contiguous ranges of whole blocks, each visited once,
// range t starting at or after block t (what probe_pack_slot relies on), at most one per thread; one range of all rows
// where it does not spread work. Inside a range parallel_for_rows runs on the calling thread; outside it does not.
template <class C>
void row_ranges_partition_the_rows() {
  typename C::execution_space space;
  std::size_t const block = t3k::reduction_block_size;
  std::size_t const threads = t3k::impl::block_threads(space);
  for (std::size_t const rows :
       {std::size_t(0), std::size_t(1), block, block + 1, 2 * block, 3 * block + 10, 64 * block + 3}) {
    std::vector<int> visits(rows, 0);
    std::vector<t3k::impl::RowRange> ranges;
    std::mutex ranges_mutex;
    bool inside_everywhere = true;
    t3k::impl::for_each_row_range_on_host_threads(space, rows, block, [&](t3k::impl::RowRange const& g) {
      for (std::size_t s = g.first; s < g.first + g.count; ++s) ++visits[s];
      // parallel_for_rows inside a range: every index on this thread.
      std::vector<std::thread::id> ids(3);
      t3k::impl::parallel_for_rows(space, "test::inside", 3,
                                   [&](int i) { ids[std::size_t(i)] = std::this_thread::get_id(); });
      std::lock_guard<std::mutex> lock(ranges_mutex);
      ranges.push_back(g);
      for (auto const& id : ids) inside_everywhere = inside_everywhere && id == std::this_thread::get_id();
    });
    EXPECT_EQ(visits, std::vector<int>(rows, 1)) << rows << " rows";
    EXPECT_TRUE(inside_everywhere) << rows << " rows";
    EXPECT_FALSE(t3k::impl::inside_row_range());
    if (rows == 0) continue;
    std::size_t const n_blocks = (rows + block - 1) / block;
    EXPECT_LE(ranges.size(), std::max<std::size_t>(1, std::min(threads, n_blocks))) << rows << " rows";
    if (threads == 1) {
      EXPECT_EQ(ranges.size(), 1u);
    }
    for (auto const& g : ranges) {
      EXPECT_EQ(g.first % block, 0u) << rows << " rows: range " << g.range_index << " at " << g.first;
      EXPECT_TRUE(g.first + g.count == rows || g.count % block == 0) << rows << " rows: range " << g.range_index;
      EXPECT_GE(g.first, std::size_t(g.range_index) * block) << rows << " rows: range " << g.range_index;
      EXPECT_LT(std::size_t(g.range_index), std::max<std::size_t>(threads, 1)) << rows << " rows";
    }
  }
}

// range_rows: the rows of disjoint ranges never share an entry, whatever widths (up to the capacity) two steps lay
// them out with, and the whole chunk is the chunk's own layout for each width.
template <class C>
void range_rows_of_disjoint_ranges_never_overlap() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  std::size_t const rows = 200, coeffs = 3, capacity = 8;
  t3k::impl::Jet3<S, Mem> const j(reinterpret_cast<S*>(std::uintptr_t(4096)), rows, coeffs,
                                  capacity);  // addresses only
  std::vector<t3k::impl::RowRange> const ranges{{0, 64, 0}, {64, 64, 1}, {128, 72, 2}};
  auto span = [&](t3k::impl::RowRange const& g, std::size_t width) {
    auto v = t3k::impl::range_rows(j, g, width);
    EXPECT_EQ(v.stride(0), coeffs * width);
    return std::make_pair(v.data(), v.data() + g.count * coeffs * width);
  };
  for (std::size_t a = 0; a < ranges.size(); ++a) {
    for (std::size_t b = 0; b < ranges.size(); ++b) {
      if (a == b) continue;
      for (std::size_t wa = 1; wa <= capacity; ++wa) {
        for (std::size_t wb = 1; wb <= capacity; ++wb) {
          auto const x = span(ranges[a], wa), y = span(ranges[b], wb);
          EXPECT_TRUE(x.second <= y.first || y.second <= x.first)
              << "ranges " << a << ", " << b << " at widths " << wa << ", " << wb;
        }
      }
    }
  }
  for (std::size_t width = 1; width <= capacity; ++width) {
    auto const whole = t3k::impl::range_rows(j, t3k::impl::RowRange{0, rows, 0}, width);
    EXPECT_EQ(whole.data(), j.data());
    EXPECT_EQ(whole.extent(0), rows);
    EXPECT_EQ(whole.stride(0), coeffs * width);
  }
  auto const flat = t3k::impl::range_rows<S, Mem>(j.data(), coeffs * capacity, ranges[1], coeffs, 2, 4);
  EXPECT_EQ(flat.data(), j.data() + 64 * coeffs * capacity);
  EXPECT_EQ(flat.extent(0), 64u);
}

// The summed products of the gradient assembly in column slabs: for each slab [c0, c1) of C (m x n) and B (k x n),
// C[:, c0:c1] += A^T B[:, c0:c1] over several blocks in turn (the matrices strided Views, which the BLAS takes with
// their leading dimension), against the brute-force reference: every column is accumulated once per block, and
// columns are neither skipped nor shifted.
template <class C>
void column_slab_products_match_reference() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using Matrix = t3k::impl::Matrix<S, Mem>;
  using MatrixC = t3k::impl::Matrix<S const, Mem>;
  typename C::execution_space space;
  std::size_t const m = 32, n = 7 * t3k::impl::column_slab_width + 5, k = 96, blocks = 3;
  auto const a = pseudo_random<S>(blocks * k * m, 41), b = pseudo_random<S>(blocks * k * n, 42),
             c0 = pseudo_random<S>(m * n, 43);
  Kokkos::View<S*, Mem> a_d("a", a.size()), b_d("b", b.size()), c_d("c", c0.size());
  upload(space, a_d, a);
  upload(space, b_d, b);
  upload(space, c_d, c0);
  Matrix const c_all(c_d.data(), m, n);
  t3k::impl::for_each_column_slab_on_host_threads(space, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t blk = 0; blk < blocks; ++blk) {
      t3k::impl::matrix_product(space, "t3k_test::column_slab", Op::transpose, MatrixC(a_d.data() + blk * k * m, k, m),
                                Op::none, t3k::impl::column_slab(MatrixC(b_d.data() + blk * k * n, k, n), lo, hi),
                                t3k::impl::column_slab(c_all, lo, hi), true);
    }
  });
  space.fence();
  auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c_d);
  std::vector<S> want(c0.begin(), c0.end());
  for (std::size_t blk = 0; blk < blocks; ++blk) {
    std::vector<S> const ab(a.begin() + long(blk * k * m), a.begin() + long((blk + 1) * k * m));
    std::vector<S> const bb(b.begin() + long(blk * k * n), b.begin() + long((blk + 1) * k * n));
    auto const step = reference_product(Op::transpose, ab, Op::none, bb, want, true, m, n, k);
    for (std::size_t e = 0; e < m * n; ++e) want[e] = S(step[e]);
  }
  double const tol = t3k_test::eps_times<S>(4.0 * double(blocks * (k + 2))) * (1.0 + double(blocks * k) / 4);
  for (std::size_t e = 0; e < m * n; ++e) {
    ASSERT_NEAR(double(got(e)), double(want[e]), tol) << "entry (" << e / n << ", " << e % n << ")";
  }
}

// One-column slabs of B and C (rows a row stride apart), as for_each_column_slab_on_host_threads can hand out: each
// column j of C = op(A) B[:, j], with C's other columns left as they were. Kokkos Kernels 3.5+ sends an (N, N)
// one-column product to gemv with B's and C's column taken as contiguous; on Kokkos Kernels 4.6 that wrote other
// columns' entries before matrix_product kept such products out of it.
template <class C>
void single_column_slab_products_match_reference() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using Matrix = t3k::impl::Matrix<S, Mem>;
  using MatrixC = t3k::impl::Matrix<S const, Mem>;
  typename C::execution_space space;
  std::size_t const m = 6, n = 5, k = 4;
  auto const a = pseudo_random<S>(m * k, 51), b = pseudo_random<S>(k * n, 52), c0 = pseudo_random<S>(m * n, 53);
  Kokkos::View<S*, Mem> a_d("a", a.size()), b_d("b", b.size()), c_d("c", c0.size());
  upload(space, a_d, a);
  upload(space, b_d, b);
  for (Op const op_a : {Op::none, Op::transpose}) {
    for (std::size_t j = 0; j < n; ++j) {
      upload(space, c_d, c0);
      MatrixC const am(a_d.data(), op_a == Op::none ? m : k, op_a == Op::none ? k : m);
      t3k::impl::matrix_product(space, "t3k_test::single_column", op_a, am, Op::none,
                                t3k::impl::column_slab(MatrixC(b_d.data(), k, n), j, j + 1),
                                t3k::impl::column_slab(Matrix(c_d.data(), m, n), j, j + 1), false);
      space.fence();
      auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c_d);
      auto const full = reference_product(op_a, a, Op::none, b, c0, false, m, n, k);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t jj = 0; jj < n; ++jj) {
          double const want = jj == j ? full[i * n + jj] : double(c0[i * n + jj]);
          ASSERT_NEAR(double(got(i * n + jj)), want, t3k_test::eps_times<S>(4.0 * double(k + 2)))
              << "op_a " << int(op_a) << ", column " << j << ": entry (" << i << ", " << jj << ")";
        }
    }
  }
}

TYPED_TEST(MatrixProductTest, KhatriRaoThenApplyMatchesTwoCalls) {
  khatri_rao_then_apply_matches_two_calls<TypeParam>();
}
TYPED_TEST(MatrixProductTest, ApplyToProbePairMatchesDefinition) {
  for (std::size_t n_out : {std::size_t(8), std::size_t(24)}) apply_to_probe_pair_matches_definition<TypeParam>(n_out);
}
TYPED_TEST(MatrixProductTest, ProbePairProductsMatchSingleCalls) {
  probe_pair_products_match_single_calls<TypeParam>();
}
TYPED_TEST(MatrixProductTest, WriteProbeJetsMatchDefinition) { write_probe_jets_match_definition<TypeParam>(); }
TYPED_TEST(MatrixProductTest, ToolsSeeCallsFromTheCallingThreadOnly) {
  tools_see_calls_from_the_calling_thread_only<TypeParam>();
}
TYPED_TEST(MatrixProductTest, HostProductsCallTheBlasLibrary) { host_products_call_the_blas_library<TypeParam>(); }
TEST(HostSmallProduct, MatchesSequentialSumsAndPanelsCarryThem) { host_small_product_tests(); }
TEST(RegisterStrips, PartitionARowInConstantPowerOfTwoWidths) { strips_partition_a_row_in_constant_widths(); }
TYPED_TEST(MatrixProductTest, ColumnSlabsPartitionTheColumns) { column_slabs_partition_the_columns<TypeParam>(); }
TYPED_TEST(MatrixProductTest, ColumnSlabProductsMatchReference) { column_slab_products_match_reference<TypeParam>(); }
TYPED_TEST(MatrixProductTest, SingleColumnSlabProductsMatchReference) {
  single_column_slab_products_match_reference<TypeParam>();
}
TYPED_TEST(MatrixProductTest, ContractJetsMatchDefinition) { contract_jets_match_definition<TypeParam>(); }
TYPED_TEST(MatrixProductTest, ApplyMatrixMatchesDefinitionAndSingleBlocks) {
  apply_matrix_matches_definition_and_single_blocks<TypeParam>();
}
TYPED_TEST(MatrixProductTest, HostBlocksRunEachBlockOnce) { host_blocks_run_each_block_once<TypeParam>(); }
TYPED_TEST(MatrixProductTest, RowRangesPartitionTheRows) {
  if constexpr (t3k::impl::runs_on_host<typename TypeParam::execution_space>()) {
    row_ranges_partition_the_rows<TypeParam>();
  }
}
TYPED_TEST(MatrixProductTest, RangeRowsOfDisjointRangesNeverOverlap) {
  range_rows_of_disjoint_ranges_never_overlap<TypeParam>();
}
TYPED_TEST(MatrixProductTest, MatchesBruteForceReference) { product_matches_reference<TypeParam, false>(); }
TYPED_TEST(MatrixProductTest, PlainKernelMatchesBruteForceReference) { product_matches_reference<TypeParam, true>(); }

}  // namespace
