// Shared Tucker factors (docs/math.md): ModeSharing's groups and checks, tying by aliasing, and the manifold
// dimension against an independent reference: the numerical rank of the Jacobian of the map from core entries to the
// dense tensor (multilinear in each core, so its columns are exact dense tensors) at random cores.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "jacobian_reference.hpp"
#include "reference.hpp"
#include "shape_cases.hpp"
#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "test_devices.hpp"

namespace {

using namespace t3k_test;

template <class C>
using T3 = t3k::TuckerTensorTrain<typename C::scalar_type, typename C::memory_space>;

void groups_are_numbered_in_order_of_first_appearance() {
  t3k::ModeSharing const s({7, 3, 7, 2, 3}, {5, 4, 5, 6, 4});
  EXPECT_EQ(s.n_modes(), 5u);
  EXPECT_EQ(s.n_groups(), 3u);
  EXPECT_EQ(s.groups(), (std::vector<std::vector<std::size_t>>{{0, 2}, {1, 4}, {3}}));
  EXPECT_EQ(s.group_of(0), 0u);
  EXPECT_EQ(s.group_of(4), 1u);
  EXPECT_EQ(s.group_of(3), 2u);
  EXPECT_EQ(s.group_shape(1), 4u);
  EXPECT_FALSE(s.is_trivial());
  EXPECT_TRUE(t3k::ModeSharing::unshared({5, 4, 5}).is_trivial());
  EXPECT_TRUE(t3k::ModeSharing({1, 2, 3}, {5, 4, 5}).is_trivial());
  EXPECT_EQ(t3k::ModeSharing::unshared({5, 4}).groups(), (std::vector<std::vector<std::size_t>>{{0}, {1}}));
}

void invalid_sharings_are_refused_naming_modes_and_sizes() {
  expect_throw_with<t3k::DimensionMismatch>(
      [] {
        t3k::ModeSharing({0, 1, 0}, {5, 4, 6});
      },
      "t3k::ModeSharing: modes 0 and 2 share a factor but have sizes 5 and 6");
  expect_throw_with<t3k::DimensionMismatch>(
      [] {
        t3k::ModeSharing({0, 1}, {5, 4, 6});
      },
      "t3k::ModeSharing: got 2 labels for d = 3 modes");
  expect_throw_with<t3k::InvalidArgument>([] { t3k::ModeSharing({}, {}); }, "mode_shapes is empty");
  expect_throw_with<t3k::InvalidArgument>([] { t3k::ModeSharing({0, 0}, {0, 0}); }, "mode_shapes[0] is 0");
  t3k::ModeSharing const s({0, 1, 0}, {5, 4, 5});
  expect_throw_with<t3k::InvalidArgument>([&] { (void)s.group_of(3); }, "mode 3 is not below d = 3");
  expect_throw_with<t3k::DimensionMismatch>(
      [&] {
        s.check_tucker_ranks({3, 2, 4}, "here");
      },
      "here: modes 0 and 2 share a factor but have Tucker ranks 3 and 4");
  expect_throw_with<t3k::DimensionMismatch>(
      [&] {
        s.check_tucker_ranks({3, 2}, "here");
      },
      "here: got 2 Tucker ranks for a sharing of d = 3 modes");
}

template <class C>
void tying_aliases_the_first_factor_of_each_group() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  t3k::ModeSharing const sharing({0, 1, 0, 0}, {4, 3, 4, 4});
  auto x = t3k::random_t3<S>(space, {4, 3, 4, 4}, {2, 3, 2, 2}, {2, 2, 3, 2, 3}, 5);
  EXPECT_FALSE(t3k::has_tied_tucker_factors(x, sharing));
  EXPECT_FALSE(t3k::has_equal_tucker_factors(space, x, sharing));
  // Every mode its own group: any T3 is tied.
  EXPECT_TRUE(t3k::has_tied_tucker_factors(x, t3k::ModeSharing::unshared(x.mode_shapes())));

  auto tied = t3k::tie_tucker_factors(x, sharing);
  EXPECT_TRUE(t3k::has_tied_tucker_factors(tied, sharing));
  EXPECT_TRUE(t3k::has_equal_tucker_factors(space, tied, sharing));
  for (std::size_t i : {0, 2, 3}) EXPECT_EQ(tied.tucker_core(i).data(), x.tucker_core(0).data()) << "mode " << i;
  EXPECT_EQ(tied.tucker_core(1).data(), x.tucker_core(1).data());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(tied.tt_core(i).data(), x.tt_core(i).data()) << "mode " << i;

  // The tensor is that of x with U_0 in place of U_2 and U_3 (brute-force dense reference).
  auto hx = host_t3(x);
  hx.u[2] = hx.u[0];
  hx.u[3] = hx.u[0];
  auto const expected = dense_tensor(hx);
  auto const actual = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::to_dense(space, tied));
  double scale = 0;
  for (double v : expected) scale = std::max(scale, std::abs(v));
  for (std::size_t e = 0; e < expected.size(); ++e) {
    EXPECT_NEAR(double(actual(e)), expected[e], eps_times<S>(64) * scale) << "entry " << e;
  }

  // A copy has equal factors, no longer tied.
  auto copy = t3k::deep_copy_t3(space, tied);
  EXPECT_FALSE(t3k::has_tied_tucker_factors(copy, sharing));
  EXPECT_TRUE(t3k::has_equal_tucker_factors(space, copy, sharing));
  EXPECT_TRUE(t3k::has_tied_tucker_factors(t3k::tie_tucker_factors(copy, sharing), sharing));

  // Ranks that differ within a group, or other mode shapes, cannot be tied.
  auto uneven = t3k::random_t3<S>(space, {4, 3, 4, 4}, {2, 3, 3, 2}, {1, 2, 3, 2, 1}, 6);
  expect_throw_with<t3k::DimensionMismatch>(
      [&] { t3k::tie_tucker_factors(uneven, sharing); },
      "t3k::tie_tucker_factors: modes 0 and 2 share a factor but have Tucker ranks 2 and 3");
  auto other = t3k::random_t3<S>(space, {4, 3, 4}, {2, 3, 2}, {1, 2, 3, 1}, 7);
  expect_throw_with<t3k::DimensionMismatch>([&] { t3k::tie_tucker_factors(other, sharing); },
                                            "the T3 has mode shapes [4 x 3 x 4], the sharing is for [4 x 3 x 4 x 4]");
  EXPECT_FALSE(t3k::has_tied_tucker_factors(other, sharing));
  EXPECT_FALSE(t3k::has_equal_tucker_factors(space, other, sharing));
}

// ---- manifold dimension ----

/// The rank of the Jacobian of (cores) -> dense tensor at random cores: its column for one entry of one core is the
/// dense tensor with that core replaced by the unit core of the entry (the tensor is linear in each core). With a
/// sharing, a group's factor is one parameter block whose column sums the unit replacements over the group's modes.
std::size_t jacobian_rank(T3ShapeCase const& sh, std::vector<long long> const& labels, std::uint64_t seed) {
  Kokkos::DefaultHostExecutionSpace space;
  t3k::ModeSharing const sharing(labels, sh.big_n);
  auto x = host_t3(t3k::random_t3<double>(space, sh.big_n, sh.n, sh.r, seed));
  // Tie: every mode of a group takes its first mode's factor.
  for (auto const& group : sharing.groups()) {
    for (std::size_t i : group) x.u[i] = x.u[group.front()];
  }
  return numerical_rank(column_svd(tied_jacobian_columns(x, sharing)));
}

struct SharedCase {
  T3ShapeCase shapes;
  std::vector<long long> labels;
};

std::vector<T3ShapeCase> dimension_cases() {
  auto cases = t3_shape_cases();  // ragged, boundary ranks != 1, n_i > N_i, size-1 modes, d = 1..5
  cases.push_back({{3, 4, 2, 3}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}});  // minimal ragged
  cases.push_back({{3, 4, 3}, {2, 2, 2}, {2, 2, 3, 3}});           // boundary ranks 2 and 3
  cases.push_back({{3, 4, 3}, {4, 3, 2}, {1, 2, 4, 1}});           // n_0 > N_0, r_2 > n_2 r_3: non-minimal
  cases.push_back({{5}, {3}, {2, 4}});                             // d = 1, boundary ranks != 1
  cases.push_back({{4, 5}, {3, 3}, {1, 3, 1}});                    // a 4 x 5 matrix of rank 3: 18
  return cases;
}

void manifold_dimension_is_the_rank_of_the_jacobian() {
  std::uint64_t seed = 100;
  for (auto const& sh : dimension_cases()) {
    std::string const what = "N = " + t3k::impl::shape_string(sh.big_n) + ", n = " + t3k::impl::shape_string(sh.n) +
                             ", r = " + t3k::impl::shape_string(sh.r);
    std::vector<long long> labels(sh.big_n.size());
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = (long long)i;
    std::size_t const dim = t3k::manifold_dimension(sh.big_n, sh.n, sh.r);
    EXPECT_EQ(dim, jacobian_rank(sh, labels, ++seed)) << what;
    EXPECT_EQ(t3k::manifold_dimension(sh.big_n, sh.n, sh.r, t3k::ModeSharing::unshared(sh.big_n)), dim) << what;
  }
  EXPECT_EQ(t3k::manifold_dimension({4, 5}, {3, 3}, {1, 3, 1}), 18u);  // 3 (4 + 5 - 3)
}

// At feasible ranks the dimension is the number of gauged variations at the frame (docs/math.md): nO_i (N_i - nU_i)
// Tucker entries orthogonal to U_i, and TT blocks rL_i nU_i rR_{i+1} less rL_{i+1} rR_{i+1} orthogonal to L_i for
// i <= d - 2.
void manifold_dimension_counts_the_gauged_variations_at_feasible_ranks() {
  for (auto const& sh : dimension_cases()) {
    auto const f = t3k::feasible_ranks(sh.big_n, sh.n, sh.r);
    auto const fr = t3k::impl::frame_shapes_of_t3("test", sh.big_n, f.tucker_ranks, f.tt_ranks);
    std::size_t const d = sh.big_n.size();
    std::size_t gauged = 0;
    for (std::size_t i = 0; i < d; ++i) {
      gauged += fr.no[i] * (fr.big_n[i] - fr.nu[i]) + fr.rl[i] * fr.nu[i] * fr.rr[i + 1];
      if (i + 2 <= d) gauged -= fr.rl[i + 1] * fr.rr[i + 1];
    }
    EXPECT_EQ(gauged, t3k::manifold_dimension(sh.big_n, sh.n, sh.r)) << "N = " << t3k::impl::shape_string(sh.big_n);
  }
  EXPECT_EQ(t3k::manifold_dimension({5}, {3}, {2, 4}), 5u);  // every vector of R^5
}

void shared_manifold_dimension_is_the_rank_of_the_tied_jacobian() {
  std::vector<SharedCase> const cases{
      {{{3, 4, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}}, {0, 1, 0, 0}},  // a group of 3 modes, not adjacent
      {{{4, 4, 3}, {3, 3, 2}, {1, 2, 2, 1}}, {0, 0, 1}},              // n_g = 3 > r_0 r_1 = 2: the group ceiling
      {{{3, 3, 3}, {2, 2, 2}, {2, 2, 2, 3}}, {5, 5, 5}},              // every mode shared, boundary ranks != 1
      {{{5, 5}, {4, 4}, {1, 1, 1}}, {0, 0}},                          // ceiling min(5, 1 + 1) = 2 clips n_g
      {{{3, 4, 3}, {2, 3, 2}, {1, 2, 2, 1}}, {0, 1, 0}},              // a pair around a singleton
      {{{3, 4, 3, 4}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}}, {'a', 'b', 'a', 'b'}}};  // two pairs, interleaved
  std::uint64_t seed = 200;
  for (auto const& c : cases) {
    auto const& sh = c.shapes;
    std::string const what = "N = " + t3k::impl::shape_string(sh.big_n) + ", n = " + t3k::impl::shape_string(sh.n) +
                             ", r = " + t3k::impl::shape_string(sh.r);
    t3k::ModeSharing const sharing(c.labels, sh.big_n);
    std::size_t const dim = t3k::manifold_dimension(sh.big_n, sh.n, sh.r, sharing);
    EXPECT_EQ(dim, jacobian_rank(sh, c.labels, ++seed)) << what;
    EXPECT_LE(dim, t3k::manifold_dimension(sh.big_n, sh.n, sh.r)) << what;  // tying never adds directions
  }
  // The group ceiling keeps a shared rank that one mode alone would clip: n_0 = 3 > r_0 r_1 = 2.
  t3k::ModeSharing const pair({0, 0, 1}, {4, 4, 3});
  auto const shared = t3k::feasible_ranks({4, 4, 3}, {3, 3, 2}, {1, 2, 2, 1}, pair);
  EXPECT_EQ(shared.tucker_ranks, (std::vector<std::size_t>{3, 3, 2}));
  auto const unshared = t3k::feasible_ranks({4, 4, 3}, {3, 3, 2}, {1, 2, 2, 1});
  EXPECT_EQ(unshared.tucker_ranks, (std::vector<std::size_t>{2, 3, 2}));
  auto const squashed = t3k::feasible_ranks({3, 4, 3}, {4, 3, 2}, {2, 2, 4, 5});
  EXPECT_EQ(squashed.tucker_ranks, (std::vector<std::size_t>{2, 3, 2}));
  EXPECT_EQ(squashed.tt_ranks, (std::vector<std::size_t>{1, 2, 2, 1}));
}

template <class C>
void manifold_dimension_of_a_t3_uses_its_shapes_and_checks_the_sharing() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto x = t3k::random_t3<S>(space, {3, 4, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}, 3);
  t3k::ModeSharing const sharing({0, 1, 0, 0}, {3, 4, 3, 3});
  EXPECT_EQ(t3k::manifold_dimension(x), t3k::manifold_dimension({3, 4, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}));
  EXPECT_EQ(t3k::manifold_dimension(x, sharing),
            t3k::manifold_dimension({3, 4, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}, sharing));
  auto uneven = t3k::random_t3<S>(space, {3, 4, 3, 3}, {2, 2, 3, 2}, {1, 2, 3, 2, 1}, 4);
  expect_throw_with<t3k::DimensionMismatch>(
      [&] { t3k::manifold_dimension(uneven, sharing); },
      "t3k::manifold_dimension: modes 0 and 2 share a factor but have Tucker ranks 2 and 3");
  expect_throw_with<t3k::DimensionMismatch>(
      [&] {
        t3k::manifold_dimension({3, 4}, {2, 2}, {1, 2, 1}, sharing);
      },
      "t3k::manifold_dimension: mode shapes [3 x 4], the sharing is for");
  expect_throw_with<t3k::DimensionMismatch>(
      [] {
        t3k::manifold_dimension({3, 4}, {2, 2}, {1, 1});
      },
      "t3k::manifold_dimension: tt_ranks has 2 entries, expected d + 1 = 3");
  expect_throw_with<t3k::InvalidArgument>([] { t3k::manifold_dimension({}, {}, {1}); },
                                          "t3k::manifold_dimension: mode_shapes is empty");
}

template <class C>
class ModeSharingTest : public ::testing::Test {};
TYPED_TEST_SUITE(ModeSharingTest, TestConfigs);

TEST(ModeSharing, GroupsAreNumberedInOrderOfFirstAppearance) { groups_are_numbered_in_order_of_first_appearance(); }
TEST(ModeSharing, InvalidSharingsAreRefusedNamingModesAndSizes) {
  invalid_sharings_are_refused_naming_modes_and_sizes();
}
TYPED_TEST(ModeSharingTest, TyingAliasesTheFirstFactorOfEachGroup) {
  tying_aliases_the_first_factor_of_each_group<TypeParam>();
}
TEST(ManifoldDimension, IsTheRankOfTheJacobian) { manifold_dimension_is_the_rank_of_the_jacobian(); }
TEST(ManifoldDimension, CountsTheGaugedVariationsAtFeasibleRanks) {
  manifold_dimension_counts_the_gauged_variations_at_feasible_ranks();
}
TEST(ManifoldDimension, SharedIsTheRankOfTheTiedJacobian) {
  shared_manifold_dimension_is_the_rank_of_the_tied_jacobian();
}
TYPED_TEST(ModeSharingTest, ManifoldDimensionOfAT3UsesItsShapesAndChecksTheSharing) {
  manifold_dimension_of_a_t3_uses_its_shapes_and_checks_the_sharing<TypeParam>();
}

}  // namespace
