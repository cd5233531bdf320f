// T3-SVD (docs/math.md) and reduce_to_minimal_ranks: exactness on inputs of known lower rank, the truncation
// error identity ||Y - T3SVD(Y)||^2 = sum of discarded sigma^2, rtol truncation, option validation, uniform form.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "orthogonality.hpp"
#include "reference.hpp"
#include "shape_cases.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/t3_from_dense.hpp"
#include "t3k/algorithms/t3_linear_algebra.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"
#include "test_devices.hpp"

namespace {

using namespace t3k_test;

template <class C>
using T3 = t3k::TuckerTensorTrain<typename C::scalar_type, typename C::memory_space>;

// Shapes whose random T3s have exactly these minimal ranks (n_i <= min(N_i, r_i r_{i+1}), r_{i+1} <= r_i n_i and
// r_i <= n_i r_{i+1}, so generic cores are full rank everywhere): d = 1, 2, 4, 5.
std::vector<T3ShapeCase> minimal_cases() {
  return {{{4, 5, 3, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}},
          {{4, 5}, {3, 3}, {1, 3, 1}},
          {{3, 4, 2, 5, 3}, {2, 3, 2, 3, 2}, {1, 2, 3, 3, 2, 1}},
          {{6}, {1}, {1, 1}}};
}

struct TruncationCase {
  T3ShapeCase shapes;
  std::vector<long long> max_tucker, max_tt;
};

// Ragged ranks, boundary TT ranks != 1 (whose cap entries are ignored), n_i > N_i, a size-1 mode, d = 1 and d = 5.
std::vector<TruncationCase> truncation_cases() {
  return {{{{4, 5, 3, 4}, {3, 4, 3, 3}, {1, 3, 4, 3, 1}}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}},
          {{{3, 4, 1, 5}, {4, 4, 2, 5}, {2, 3, 4, 3, 3}}, {2, 2, 1, 3}, {5, 2, 3, 2, 7}},
          {{{3, 4, 2, 5, 3}, {3, 4, 2, 4, 3}, {1, 3, 4, 4, 3, 1}}, {2, 2, 2, 2, 2}, {1, 2, 2, 2, 2, 1}},
          {{{6}, {4}, {2, 3}}, {1}, {1, 1}},
          {{{5, 6}, {4, 5}, {1, 4, 1}}, {}, {1, 2, 1}}};
}

// "Exact" means exact up to rounding: a few QR/SVD steps and a dense contraction. 4096 epsilon times ||X||_F is
// 9.1e-13 relative in double (inside the 1e-12 the T3-SVD contract asks for) and 4.9e-4 in float.
template <class S>
double exact_tol(double norm) {
  return eps_times<S>(4096) * norm;
}

template <class V>
auto to_host(V const& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
}

template <class C>
std::vector<double> dense_of(T3<C> const& x) {
  typename C::execution_space space;
  auto h = to_host(t3k::to_dense(space, x));
  std::vector<double> out(h.extent(0));
  for (std::size_t e = 0; e < out.size(); ++e) out[e] = double(h(e));
  return out;
}

double squared_distance(std::vector<double> const& a, std::vector<double> const& b) {
  double s = 0;
  for (std::size_t e = 0; e < a.size(); ++e) s += (a[e] - b[e]) * (a[e] - b[e]);
  return s;
}

double squared_norm(std::vector<double> const& a) { return squared_distance(a, std::vector<double>(a.size(), 0.0)); }

// y written with larger ranks: every Tucker rank + 1 (extra random Tucker rows) and every interior TT rank + 2, with
// zero TT blocks wherever a padded index appears, so the tensor is unchanged.
template <class C>
T3<C> pad_with_zeros(T3<C> const& y, std::uint64_t seed) {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto const big_n = y.mode_shapes();
  auto n = y.tucker_ranks();
  auto r = y.tt_ranks();
  auto pn = n, pr = r;
  for (auto& v : pn) v += 1;
  for (std::size_t e = 1; e + 1 < pr.size(); ++e) pr[e] += 2;
  auto noise = t3k::random_t3<S>(space, big_n, pn, pr, seed);
  auto z = t3k::zero_t3<S, typename C::execution_space, typename C::memory_space>(space, big_n, pn, pr);
  for (std::size_t i = 0; i < y.n_modes(); ++i) {
    auto hu = to_host(noise.tucker_core(i));
    auto yu = to_host(y.tucker_core(i));
    auto yg = to_host(y.tt_core(i));
    Kokkos::View<S***, Kokkos::LayoutRight, Kokkos::HostSpace> hg("hg", pr[i], pn[i], pr[i + 1]);
    for (std::size_t q = 0; q < n[i]; ++q)
      for (std::size_t j = 0; j < big_n[i]; ++j) hu(q, j) = yu(q, j);
    for (std::size_t a = 0; a < r[i]; ++a)
      for (std::size_t q = 0; q < n[i]; ++q)
        for (std::size_t b = 0; b < r[i + 1]; ++b) hg(a, q, b) = yg(a, q, b);
    Kokkos::deep_copy(z.tucker_core(i), hu);
    Kokkos::deep_copy(z.tt_core(i), hg);
  }
  return z;
}

template <class C>
void reduce_recovers_minimal_ranks_exactly() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : minimal_cases()) {
    auto y = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 41);
    std::string const shape = "N = " + t3k::impl::shape_string(sh.big_n);
    // Two redundant writings of a tensor of the ranks of y: 1.5 y with doubled ranks, and y padded with zero blocks.
    auto doubled = t3k::add(space, y, t3k::scale(space, y, S(0.5)));
    auto padded = pad_with_zeros<C>(y, 42);
    for (auto const& x : {doubled, padded}) {
      auto const ref = dense_of<C>(x);
      double const tol = exact_tol<S>(std::sqrt(squared_norm(ref)));
      auto z = t3k::reduce_to_minimal_ranks(space, x);
      EXPECT_EQ(z.tucker_ranks(), sh.n) << shape;
      EXPECT_EQ(z.tt_ranks(), sh.r) << shape;
      EXPECT_LE(std::sqrt(squared_distance(dense_of<C>(z), ref)), tol) << shape;

      // Caps at the minimal ranks: the same ranks, the same tensor.
      t3k::T3SvdOptions options;
      options.max_tucker_ranks.assign(sh.n.begin(), sh.n.end());
      options.max_tt_ranks.assign(sh.r.begin(), sh.r.end());
      auto capped = t3k::t3_svd(space, x, options);
      EXPECT_EQ(capped.t3.tucker_ranks(), sh.n) << shape;
      EXPECT_EQ(capped.t3.tt_ranks(), sh.r) << shape;
      EXPECT_LE(std::sqrt(squared_distance(dense_of<C>(capped.t3), ref)), tol) << shape;
    }
  }
}

// The successive truncation errors are orthogonal: ||Y - T3SVD(Y)||^2 = sum of the discarded sigma^2.
template <class C>
void check_error_identity(T3<C> const& y,
                          t3k::T3SvdResult<typename C::scalar_type, typename C::memory_space> const& res,
                          std::string const& what) {
  using S = typename C::scalar_type;
  auto const dy = dense_of<C>(y);
  auto const dt = dense_of<C>(res.t3);
  std::size_t const d = y.n_modes();
  auto const n = res.t3.tucker_ranks();
  auto const r = res.t3.tt_ranks();
  ASSERT_EQ(res.tucker_singular_values.size(), d) << what;
  ASSERT_EQ(res.tt_singular_values.size(), d - 1) << what;
  double discarded = 0;
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t k = n[i]; k < res.tucker_singular_values[i].size(); ++k)
      discarded += double(res.tucker_singular_values[i][k]) * double(res.tucker_singular_values[i][k]);
  for (std::size_t e = 1; e < d; ++e)
    for (std::size_t k = r[e]; k < res.tt_singular_values[e - 1].size(); ++k)
      discarded += double(res.tt_singular_values[e - 1][k]) * double(res.tt_singular_values[e - 1][k]);
  // 1e-10 relative in double (the contract); in float the dense difference itself carries ~epsilon ||Y||^2 of
  // rounding, hence the additive 256 epsilon ||Y||^2 (5.7e-14 ||Y||^2 in double, negligible there).
  double const tol = 1e-10 * discarded + eps_times<S>(256) * squared_norm(dy);
  EXPECT_NEAR(squared_distance(dy, dt), discarded, tol) << what;
  // The result is in the gauge the algorithm promises: orthonormal Tucker rows, left-orthogonal TT cores 0..d-2.
  for (std::size_t i = 0; i < d; ++i) {
    EXPECT_LE(row_orthogonality_residual(res.t3.tucker_core(i)), eps_times<S>(64)) << what << ", U " << i;
    if (i + 1 < d) {
      EXPECT_LE(core_orthogonality_residual(res.t3.tt_core(i), 2), eps_times<S>(64)) << what << ", G " << i;
    }
  }
  // Singular values come descending and non-negative.
  for (auto const* list : {&res.tucker_singular_values, &res.tt_singular_values})
    for (auto const& s : *list)
      for (std::size_t k = 0; k < s.size(); ++k) {
        EXPECT_GE(s[k], S(0)) << what;
        if (k) {
          EXPECT_LE(s[k], s[k - 1]) << what;
        }
      }
}

template <class C>
void truncation_error_equals_discarded_singular_values() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& tc : truncation_cases()) {
    auto const& sh = tc.shapes;
    std::size_t const d = sh.big_n.size();
    auto y = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 7);
    t3k::T3SvdOptions const options{tc.max_tucker, tc.max_tt, 0.0};
    auto res = t3k::t3_svd(space, y, options);
    std::string const what = "N = " + t3k::impl::shape_string(sh.big_n);
    // Generic data: every cap below the available count is hit exactly; boundary ranks are 1.
    auto const n = res.t3.tucker_ranks();
    auto const r = res.t3.tt_ranks();
    for (std::size_t i = 0; i < d; ++i) {
      std::size_t const avail = res.tucker_singular_values[i].size();
      std::size_t const want = tc.max_tucker.empty() ? avail : std::min(avail, std::size_t(tc.max_tucker[i]));
      EXPECT_EQ(n[i], want) << what << ", mode " << i;
    }
    EXPECT_EQ(r.front(), 1u) << what;
    EXPECT_EQ(r.back(), 1u) << what;
    for (std::size_t e = 1; e < d; ++e) {
      std::size_t const avail = res.tt_singular_values[e - 1].size();
      std::size_t const want = tc.max_tt.empty() ? avail : std::min(avail, std::size_t(tc.max_tt[e]));
      EXPECT_EQ(r[e], want) << what << ", bond " << e;
    }
    check_error_identity<C>(y, res, what);
  }
}

template <class C>
void without_truncation_t3_svd_is_exact_and_singular_values_carry_the_norm() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& tc : truncation_cases()) {
    auto const& sh = tc.shapes;
    auto y = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 9);
    auto res = t3k::t3_svd(space, y);
    auto const dy = dense_of<C>(y);
    double const norm2 = squared_norm(dy);
    std::string const what = "N = " + t3k::impl::shape_string(sh.big_n);
    EXPECT_LE(std::sqrt(squared_distance(dense_of<C>(res.t3), dy)), exact_tol<S>(std::sqrt(norm2))) << what;
    // Nothing is discarded, so each unfolding's singular values carry the whole norm.
    for (auto const* list : {&res.tucker_singular_values, &res.tt_singular_values})
      for (auto const& s : *list) {
        double sum = 0;
        for (auto v : s) sum += double(v) * double(v);
        EXPECT_NEAR(sum, norm2, eps_times<S>(256) * norm2) << what;
      }
    check_error_identity<C>(y, res, what + " (untruncated)");
  }
}

template <class C>
void rtol_keeps_singular_values_above_the_threshold() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& tc : truncation_cases()) {
    auto const& sh = tc.shapes;
    std::size_t const d = sh.big_n.size();
    auto y = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 19);
    std::string const what = "N = " + t3k::impl::shape_string(sh.big_n);
    for (double rtol : {0.3, 0.05, 10.0}) {
      t3k::T3SvdOptions options;
      options.rtol = rtol;
      auto res = t3k::t3_svd(space, y, options);
      auto count = [rtol](std::vector<S> const& s) {
        std::size_t k = 0;
        while (k < s.size() && double(s[k]) > rtol * double(s[0])) ++k;
        return std::max<std::size_t>(k, 1);
      };
      for (std::size_t i = 0; i < d; ++i)
        EXPECT_EQ(res.t3.tucker_ranks()[i], count(res.tucker_singular_values[i])) << what << ", rtol " << rtol;
      for (std::size_t e = 1; e < d; ++e)
        EXPECT_EQ(res.t3.tt_ranks()[e], count(res.tt_singular_values[e - 1])) << what << ", rtol " << rtol;
      if (rtol > 1) {
        for (auto v : res.t3.tucker_ranks()) EXPECT_EQ(v, 1u) << what;
        for (auto v : res.t3.tt_ranks()) EXPECT_EQ(v, 1u) << what;
      }
      check_error_identity<C>(y, res, what + ", rtol " + std::to_string(rtol));
    }
  }
}

template <class C>
void bad_options_throw_clear_errors() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto y = t3k::random_t3<S>(space, {3, 4, 2, 5}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 3);
  auto uy = t3k::to_uniform(space, y);
  auto with = [](std::vector<long long> tucker, std::vector<long long> tt, double rtol) {
    t3k::T3SvdOptions o;
    o.max_tucker_ranks = std::move(tucker);
    o.max_tt_ranks = std::move(tt);
    o.rtol = rtol;
    return o;
  };
  auto const negative_tt = with({}, {1, 2, -1, 2, 1}, 0);
  expect_throw_with<t3k::InvalidArgument>([&] { t3k::t3_svd(space, y, negative_tt); },
                                          "t3k::t3_svd: max_tt_ranks[2] is -1; ranks must be >= 1");
  expect_throw_with<t3k::InvalidArgument>([&] { t3k::t3_svd(space, uy, negative_tt); },
                                          "t3k::t3_svd: max_tt_ranks[2] is -1; ranks must be >= 1");
  // Boundary entries are ignored but still validated.
  expect_throw_with<t3k::InvalidArgument>(
      [&] {
        t3k::t3_svd(space, y, with({}, {0, 2, 2, 2, 1}, 0));
      },
      "t3k::t3_svd: max_tt_ranks[0] is 0; ranks must be >= 1");
  expect_throw_with<t3k::InvalidArgument>(
      [&] {
        t3k::t3_svd(space, y, with({2, 0, 2, 2}, {}, 0));
      },
      "t3k::t3_svd: max_tucker_ranks[1] is 0; ranks must be >= 1");
  expect_throw_with<t3k::DimensionMismatch>(
      [&] {
        t3k::t3_svd(space, y, with({}, {1, 2, 1}, 0));
      },
      "t3k::t3_svd: max_tt_ranks has 3 entries, expected d + 1 = 5");
  expect_throw_with<t3k::DimensionMismatch>(
      [&] {
        t3k::t3_svd(space, y, with({2, 2, 2}, {}, 0));
      },
      "t3k::t3_svd: max_tucker_ranks has 3 entries, expected d = 4");
  expect_throw_with<t3k::InvalidArgument>([&] { t3k::t3_svd(space, y, with({}, {}, -1)); },
                                          "t3k::t3_svd: rtol is -1; it must be finite and >= 0");
  expect_throw_with<t3k::InvalidArgument>([&] { t3k::reduce_to_minimal_ranks(space, y, -0.5); },
                                          "t3k::reduce_to_minimal_ranks: rtol is -0.5; it must be finite and >= 0");
  expect_throw_with<t3k::InvalidArgument>([&] { t3k::reduce_to_minimal_ranks(space, uy, -0.5); },
                                          "t3k::reduce_to_minimal_ranks: rtol is -0.5");
}

template <class C>
void uniform_form_gives_identical_results() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& tc : truncation_cases()) {
    auto const& sh = tc.shapes;
    auto y = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 23);
    t3k::T3SvdOptions const options{tc.max_tucker, tc.max_tt, 0.0};
    auto res = t3k::t3_svd(space, y, options);
    auto ures = t3k::t3_svd(space, t3k::to_uniform(space, y), options);
    std::string const what = "N = " + t3k::impl::shape_string(sh.big_n);
    EXPECT_EQ(ures.tucker_singular_values, res.tucker_singular_values) << what;
    EXPECT_EQ(ures.tt_singular_values, res.tt_singular_values) << what;
    auto const a = host_t3(res.t3);
    auto const b = host_t3(t3k::to_ragged(space, ures.t3));
    EXPECT_EQ(a.n, b.n) << what;
    EXPECT_EQ(a.r, b.r) << what;
    EXPECT_EQ(a.u, b.u) << what;  // bitwise: the same host computation on the same live blocks
    EXPECT_EQ(a.g, b.g) << what;

    auto padded = t3k::add(space, y, y);
    auto z = t3k::reduce_to_minimal_ranks(space, padded);
    auto uz = t3k::to_ragged(space, t3k::reduce_to_minimal_ranks(space, t3k::to_uniform(space, padded)));
    EXPECT_EQ(host_t3(z).g, host_t3(uz).g) << what;
    EXPECT_EQ(host_t3(z).u, host_t3(uz).u) << what;
  }
}

// t3_from_dense of a dense T3 without caps reproduces it to rounding; of a T3 of ranks r plus noise, capped at r, it
// is within sqrt(2d - 1) times the noise of the dense tensor (the best approximation of those ranks is at most the
// noise away); a dense array of the wrong size is refused.
template <class C>
void t3_from_dense_is_exact_and_quasi_optimal() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::vector<std::size_t> const shapes{5, 4, 6, 3};
  auto x = t3k::random_t3<S>(space, shapes, {3, 2, 3, 2}, {1, 2, 3, 2, 1}, 61);
  auto dense = t3k::to_dense(space, x);
  auto exact = t3k::t3_from_dense(space, dense, shapes).t3;
  EXPECT_LT(relative_dense_error(exact, x), 1000 * std::numeric_limits<S>::epsilon());
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, dense);
  t3k::impl::HostNormalGenerator gen(62);
  double noise2 = 0, norm2 = 0;
  for (std::size_t e = 0; e < h.extent(0); ++e) {
    norm2 += double(h(e)) * double(h(e));
    double const n = 1e-3 * gen.normal();
    noise2 += n * n;
    h(e) += S(n);
  }
  Kokkos::deep_copy(dense, h);
  t3k::T3SvdOptions o;
  o.max_tucker_ranks = {3, 2, 3, 2};
  o.max_tt_ranks = {1, 2, 3, 2, 1};
  auto capped = t3k::t3_from_dense(space, dense, shapes, o).t3;
  EXPECT_EQ(capped.tucker_ranks(), x.tucker_ranks());
  EXPECT_EQ(capped.tt_ranks(), x.tt_ranks());
  EXPECT_LT(relative_dense_error(capped, x), std::sqrt(7.0) * std::sqrt(noise2 / norm2) + 1e-5);
  EXPECT_THROW(t3k::t3_from_dense(space, dense, {5, 4, 6}), t3k::DimensionMismatch);
}

template <class C>
class T3SvdTest : public ::testing::Test {};
TYPED_TEST_SUITE(T3SvdTest, TestConfigs);

TYPED_TEST(T3SvdTest, ReduceRecoversMinimalRanksExactly) { reduce_recovers_minimal_ranks_exactly<TypeParam>(); }
TYPED_TEST(T3SvdTest, TruncationErrorEqualsDiscardedSingularValues) {
  truncation_error_equals_discarded_singular_values<TypeParam>();
}
TYPED_TEST(T3SvdTest, WithoutTruncationIsExactAndSingularValuesCarryTheNorm) {
  without_truncation_t3_svd_is_exact_and_singular_values_carry_the_norm<TypeParam>();
}
TYPED_TEST(T3SvdTest, RtolKeepsSingularValuesAboveTheThreshold) {
  rtol_keeps_singular_values_above_the_threshold<TypeParam>();
}
TYPED_TEST(T3SvdTest, FromDenseIsExactAndQuasiOptimal) { t3_from_dense_is_exact_and_quasi_optimal<TypeParam>(); }
TYPED_TEST(T3SvdTest, BadOptionsThrowClearErrors) { bad_options_throw_clear_errors<TypeParam>(); }
TYPED_TEST(T3SvdTest, UniformFormGivesIdenticalResults) { uniform_form_gives_identical_results<TypeParam>(); }

}  // namespace
