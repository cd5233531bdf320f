// Grouped T3-SVD (docs/math.md, "Shared Tucker factors") against dense references: lossless on exactly shared T3s,
// the group spectrum equal to the singular values of the concatenated dense matricizations, quasi-optimal truncation,
// tied results, the trivial sharing equal to t3_svd bit for bit, and clear errors.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reference.hpp"
#include "shape_cases.hpp"
#include "t3k/algorithms/grouped_t3_svd.hpp"
#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "test_devices.hpp"

namespace {

using namespace t3k_test;

template <class C>
using T3 = t3k::TuckerTensorTrain<typename C::scalar_type, typename C::memory_space>;

struct GroupCase {
  T3ShapeCase shapes;
  std::vector<long long> labels;
  std::vector<long long> max_tucker, max_tt;
};

// A group of 3 non-adjacent modes, a group rank above one mode's r_i r_{i+1} (the group ceiling), boundary ranks != 1
// with every mode shared, two interleaved pairs, and d = 2.
std::vector<GroupCase> group_cases() {
  return {{{{3, 4, 3, 3}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}}, {0, 1, 0, 0}, {1, 2, 1, 1}, {1, 2, 2, 2, 1}},
          {{{4, 4, 3}, {3, 3, 2}, {1, 2, 2, 1}}, {0, 0, 1}, {2, 2, 1}, {1, 2, 2, 1}},
          {{{3, 3, 3}, {2, 2, 2}, {2, 2, 2, 3}}, {5, 5, 5}, {1, 1, 1}, {1, 2, 2, 1}},
          {{{3, 4, 3, 4}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}}, {'a', 'b', 'a', 'b'}, {1, 1, 1, 1}, {1, 2, 2, 2, 1}},
          {{{5, 5}, {3, 3}, {1, 3, 1}}, {0, 0}, {2, 2}, {}}};
}

std::string describe(GroupCase const& c) {
  std::string labels;
  for (auto l : c.labels) labels += std::to_string(l) + " ";
  return "N = " + t3k::impl::shape_string(c.shapes.big_n) + ", labels " + labels;
}

template <class X>
std::vector<double> dense_of(X const& x) {
  return dense_tensor(host_t3(x));
}

double squared_distance(std::vector<double> const& a, std::vector<double> const& b) {
  double s = 0;
  for (std::size_t e = 0; e < a.size(); ++e) s += (a[e] - b[e]) * (a[e] - b[e]);
  return s;
}

double squared_norm(std::vector<double> const& a) {
  double s = 0;
  for (double v : a) s += v * v;
  return s;
}

/// [X_(i_1) | ... | X_(i_k)] of a row-major dense tensor, N_g rows, row-major.
std::vector<double> concatenated_matricization(std::vector<double> const& dense, std::vector<std::size_t> const& shapes,
                                               std::vector<std::size_t> const& modes, int& rows, int& cols) {
  std::size_t const total = dense.size();
  rows = int(shapes[modes.front()]);
  int const per_mode = int(total / std::size_t(rows));
  cols = per_mode * int(modes.size());
  std::vector<double> m(std::size_t(rows) * cols);
  std::vector<std::size_t> j(shapes.size());
  for (std::size_t e = 0; e < total; ++e) {
    std::size_t rem = e;
    for (std::size_t i = shapes.size(); i-- > 0;) {
      j[i] = rem % shapes[i];
      rem /= shapes[i];
    }
    for (std::size_t l = 0; l < modes.size(); ++l) {
      // The column: the other indices in mode order.
      std::size_t col = 0;
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        if (i != modes[l]) col = col * shapes[i] + j[i];
      }
      m[std::size_t(j[modes[l]]) * cols + std::size_t(l) * per_mode + col] = dense[e];
    }
  }
  return m;
}

std::vector<double> singular_values(int rows, int cols, std::vector<double> const& a,
                                    std::vector<double>* left = nullptr) {
  std::vector<double> p, sigma, qt;
  t3k::impl::host_thin_svd(rows, cols, a.data(), p, sigma, qt);
  if (left) *left = p;
  return sigma;
}

template <class T>
double tail_squared(std::vector<T> const& sigma, std::size_t keep) {
  double s = 0;
  for (std::size_t k = keep; k < sigma.size(); ++k) s += double(sigma[k]) * double(sigma[k]);
  return s;
}

template <class C>
void exactly_shared_t3_is_reproduced_without_caps_and_stays_tied() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::uint64_t seed = 10;
  for (auto const& c : group_cases()) {
    auto const& sh = c.shapes;
    std::string const what = describe(c);
    t3k::ModeSharing const sharing(c.labels, sh.big_n);
    auto x = t3k::tie_tucker_factors(t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, ++seed), sharing);
    auto res = t3k::grouped_t3_svd(space, x, sharing);
    auto const dx = dense_of(x);
    double const norm2 = squared_norm(dx);
    // A few QR/SVD steps and a dense contraction: 4096 epsilon relative is 9.1e-13 in double.
    EXPECT_LE(std::sqrt(squared_distance(dense_of(res.t3), dx)), eps_times<S>(4096) * std::sqrt(norm2)) << what;
    EXPECT_TRUE(t3k::has_tied_tucker_factors(res.t3, sharing)) << what;
    // Generic tied cores: exactly the feasible shared ranks (a group rank above one mode's r_i r_{i+1} is kept).
    auto const feasible = t3k::feasible_ranks(sh.big_n, sh.n, sh.r, sharing);
    EXPECT_EQ(res.t3.tucker_ranks(), feasible.tucker_ranks) << what;
    EXPECT_EQ(res.t3.tt_ranks(), feasible.tt_ranks) << what;
    // Every mode of a group carries the whole norm: sum_j s_{g,j}^2 = k_g ||X||^2.
    ASSERT_EQ(res.group_singular_values.size(), sharing.n_groups()) << what;
    for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
      double const k = double(sharing.groups()[g].size());
      EXPECT_NEAR(tail_squared(res.group_singular_values[g], 0), k * norm2, eps_times<S>(512) * k * norm2)
          << what << ", group " << g;
    }
  }
}

template <class C>
void group_spectrum_equals_the_dense_concatenated_matricizations() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::uint64_t seed = 30;
  for (auto const& c : group_cases()) {
    auto const& sh = c.shapes;
    t3k::ModeSharing const sharing(c.labels, sh.big_n);
    auto untied = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, ++seed);
    for (auto const& x : {untied, t3k::tie_tucker_factors(untied, sharing)}) {
      std::string const what = describe(c) + (t3k::has_tied_tucker_factors(x, sharing) ? "(tied)" : "(untied)");
      auto const dx = dense_of(x);
      auto res = t3k::grouped_t3_svd(space, x, sharing);
      for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
        int rows = 0, cols = 0;
        auto const m = concatenated_matricization(dx, sh.big_n, sharing.groups()[g], rows, cols);
        auto const ref = singular_values(rows, cols, m);
        auto const& got = res.group_singular_values[g];
        double const tol = eps_times<S>(4096) * ref[0];
        for (std::size_t k = 0; k < std::max(ref.size(), got.size()); ++k) {
          double const a = k < got.size() ? double(got[k]) : 0.0;
          double const b = k < ref.size() ? ref[k] : 0.0;
          EXPECT_NEAR(a, b, tol) << what << ", group " << g << ", value " << k;
        }
      }
    }
  }
}

template <class C>
void truncation_is_quasi_optimal_and_spans_the_leading_group_subspace() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::uint64_t seed = 50;
  for (auto const& c : group_cases()) {
    auto const& sh = c.shapes;
    std::size_t const d = sh.big_n.size();
    std::string const what = describe(c);
    t3k::ModeSharing const sharing(c.labels, sh.big_n);
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, ++seed);
    t3k::T3SvdOptions const options{c.max_tucker, c.max_tt, 0.0};
    auto res = t3k::grouped_t3_svd(space, x, sharing, options);
    EXPECT_TRUE(t3k::has_tied_tucker_factors(res.t3, sharing)) << what;
    auto const n = res.t3.tucker_ranks();
    auto const r = res.t3.tt_ranks();
    for (std::size_t i = 0; i < d; ++i) EXPECT_LE(n[i], std::size_t(c.max_tucker[i])) << what;
    for (std::size_t e = 1; e < d && !c.max_tt.empty(); ++e) EXPECT_LE(r[e], std::size_t(c.max_tt[e])) << what;

    auto const dx = dense_of(x);
    double const err2 = squared_distance(dense_of(res.t3), dx);
    // The best model of these ranks with shared factors is at least sqrt(tail_g^2 / k_g) away for every group (its
    // concatenated matricization has rank n_g) and at least the tail of every bond unfolding away: a lower bound
    // from dense SVDs.
    double lower2 = 0;
    for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
      auto const& modes = sharing.groups()[g];
      int rows = 0, cols = 0;
      auto const m = concatenated_matricization(dx, sh.big_n, modes, rows, cols);
      std::vector<double> left;
      auto const sigma = singular_values(rows, cols, m, &left);
      std::size_t const keep = n[modes.front()];
      lower2 = std::max(lower2, tail_squared(sigma, keep) / double(modes.size()));
      // The shared factor spans the leading keep left singular vectors (random data: a clear gap).
      auto const u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, res.t3.tucker_core(modes.front()));
      int const k_left = std::min(rows, cols);
      for (std::size_t v = 0; v < keep; ++v) {
        std::vector<double> coords(keep, 0.0);
        for (std::size_t o = 0; o < keep; ++o)
          for (int j = 0; j < rows; ++j) coords[o] += double(u(o, j)) * left[std::size_t(j) * k_left + v];
        EXPECT_NEAR(squared_norm(coords), 1.0, eps_times<S>(1 << 16)) << what << ", group " << g << ", vector " << v;
      }
    }
    std::size_t rows = 1;
    for (std::size_t e = 1; e < d; ++e) {
      rows *= sh.big_n[e - 1];
      auto const sigma = singular_values(int(rows), int(dx.size() / rows), dx);
      lower2 = std::max(lower2, tail_squared(sigma, r[e]));
    }
    // sum_g k_g = d group terms and d - 1 bond terms, each at most the lower bound: 2d - 1 (docs/math.md).
    EXPECT_LE(err2, double(2 * d - 1) * lower2 * (1 + 1e-6) + eps_times<S>(256) * squared_norm(dx)) << what;
    // The error is the projection error (at most the discarded group values) plus exactly the discarded TT values.
    double group_discarded = 0, tt_discarded = 0;
    for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
      auto const& s = res.group_singular_values[g];
      group_discarded += tail_squared(s, n[sharing.groups()[g].front()]);
    }
    for (std::size_t e = 1; e < d; ++e) {
      auto const& s = res.tt_singular_values[e - 1];
      tt_discarded += tail_squared(s, r[e]);
    }
    double const tol = 1e-10 * (group_discarded + tt_discarded) + eps_times<S>(256) * squared_norm(dx);
    EXPECT_LE(err2, group_discarded + tt_discarded + tol) << what;
    EXPECT_GE(err2, tt_discarded - tol) << what;
  }
}

template <class C>
void rtol_keeps_group_values_above_the_threshold() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& c : group_cases()) {
    auto const& sh = c.shapes;
    t3k::ModeSharing const sharing(c.labels, sh.big_n);
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 71);
    for (double rtol : {0.3, 10.0}) {
      t3k::T3SvdOptions options;
      options.rtol = rtol;
      auto res = t3k::grouped_t3_svd(space, x, sharing, options);
      std::string const what = describe(c) + ", rtol " + std::to_string(rtol);
      for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
        auto const& s = res.group_singular_values[g];
        std::size_t k = 0;
        while (k < s.size() && double(s[k]) > rtol * double(s[0])) ++k;
        for (std::size_t i : sharing.groups()[g])
          EXPECT_EQ(res.t3.tucker_ranks()[i], std::max<std::size_t>(k, 1)) << what;
      }
      EXPECT_TRUE(t3k::has_tied_tucker_factors(res.t3, sharing)) << what;
    }
  }
}

template <class C>
void trivial_sharing_is_t3_svd_bit_for_bit() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : t3_shape_cases()) {
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 81);
    std::vector<long long> caps(sh.n.size(), 2);
    t3k::T3SvdOptions const options{caps, {}, 0.0};
    auto a = t3k::t3_svd(space, x, options);
    auto b = t3k::grouped_t3_svd(space, x, t3k::ModeSharing::unshared(sh.big_n), options);
    std::string const what = "N = " + t3k::impl::shape_string(sh.big_n);
    EXPECT_EQ(a.tucker_singular_values, b.group_singular_values) << what;
    EXPECT_EQ(a.tt_singular_values, b.tt_singular_values) << what;
    EXPECT_EQ(host_t3(a.t3).u, host_t3(b.t3).u) << what;
    EXPECT_EQ(host_t3(a.t3).g, host_t3(b.t3).g) << what;
  }
}

template <class C>
void bad_arguments_throw_clear_errors() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto x = t3k::random_t3<S>(space, {3, 4, 3}, {2, 2, 2}, {1, 2, 2, 1}, 3);
  t3k::ModeSharing const sharing({0, 1, 0}, {3, 4, 3});
  t3k::T3SvdOptions uneven;
  uneven.max_tucker_ranks = {2, 2, 1};
  expect_throw_with<t3k::InvalidArgument>([&] { t3k::grouped_t3_svd(space, x, sharing, uneven); },
                                          "t3k::grouped_t3_svd: modes 0 and 2 share a factor but max_tucker_ranks "
                                          "gives them 2 and 1; a group has one rank");
  t3k::T3SvdOptions short_list;
  short_list.max_tt_ranks = {1, 2, 1};
  expect_throw_with<t3k::DimensionMismatch>([&] { t3k::grouped_t3_svd(space, x, sharing, short_list); },
                                            "t3k::grouped_t3_svd: max_tt_ranks has 3 entries, expected d + 1 = 4");
  t3k::ModeSharing const other({0, 0}, {3, 3});
  expect_throw_with<t3k::DimensionMismatch>([&] { t3k::grouped_t3_svd(space, x, other); },
                                            "t3k::grouped_t3_svd: the T3 has mode shapes [3 x 4 x 3], the sharing is "
                                            "for [3 x 3]");
}

template <class C>
class GroupedT3SvdTest : public ::testing::Test {};
TYPED_TEST_SUITE(GroupedT3SvdTest, TestConfigs);

TYPED_TEST(GroupedT3SvdTest, ExactlySharedT3IsReproducedWithoutCapsAndStaysTied) {
  exactly_shared_t3_is_reproduced_without_caps_and_stays_tied<TypeParam>();
}
TYPED_TEST(GroupedT3SvdTest, GroupSpectrumEqualsTheDenseConcatenatedMatricizations) {
  group_spectrum_equals_the_dense_concatenated_matricizations<TypeParam>();
}
TYPED_TEST(GroupedT3SvdTest, TruncationIsQuasiOptimalAndSpansTheLeadingGroupSubspace) {
  truncation_is_quasi_optimal_and_spans_the_leading_group_subspace<TypeParam>();
}
TYPED_TEST(GroupedT3SvdTest, RtolKeepsGroupValuesAboveTheThreshold) {
  rtol_keeps_group_values_above_the_threshold<TypeParam>();
}
TYPED_TEST(GroupedT3SvdTest, TrivialSharingIsT3SvdBitForBit) { trivial_sharing_is_t3_svd_bit_for_bit<TypeParam>(); }
TYPED_TEST(GroupedT3SvdTest, BadArgumentsThrowClearErrors) { bad_arguments_throw_clear_errors<TypeParam>(); }

}  // namespace
