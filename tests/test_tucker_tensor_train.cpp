// The T3 type, its uniform form, random T3s, dense tensors, entries and T3 linear algebra.
#include "reference.hpp"
#include "shape_cases.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/t3_linear_algebra.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"

#include <string>

namespace {

using namespace t3k_test;

template <class C>
using T3 = t3k::TuckerTensorTrain<typename C::scalar_type, typename C::memory_space>;

template <class C>
void dense_matches_multi_index_sum() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : t3_shape_cases()) {
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 17);
    auto dense = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::to_dense(space, x));
    auto ref = dense_tensor(host_t3(x));
    ASSERT_EQ(dense.extent(0), ref.size());
    double scale = 0;
    for (auto v : ref) scale = std::max(scale, std::abs(v));
    for (std::size_t e = 0; e < ref.size(); ++e) EXPECT_NEAR(double(dense(e)), ref[e], eps_times<S>(64) * scale);
  }
}

template <class C>
void entries_match_dense() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto sh = t3_shape_cases()[1];
  auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 3);
  auto ref = dense_tensor(host_t3(x));
  std::size_t const total = ref.size();
  Kokkos::View<int**, Kokkos::LayoutRight, typename C::memory_space> idx("idx", total, sh.big_n.size());
  auto hidx = Kokkos::create_mirror_view(idx);
  for (std::size_t e = 0; e < total; ++e) {
    std::size_t rem = e;
    for (std::size_t i = sh.big_n.size(); i-- > 0;) {
      hidx(e, i) = int(rem % sh.big_n[i]);
      rem /= sh.big_n[i];
    }
  }
  Kokkos::deep_copy(idx, hidx);
  auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::t3_entries(space, x, idx));
  for (std::size_t e = 0; e < total; ++e) EXPECT_NEAR(double(vals(e)), ref[e], eps_times<S>(64));
}

template <class C>
void linear_algebra_matches_dense() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto sh = t3_shape_cases()[0];
  auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 5);
  auto y = t3k::random_t3<S>(space, sh.big_n, {2, 3, 1}, {2, 1, 2, 3}, 6);
  auto dx = dense_tensor(host_t3(x));
  auto dy = dense_tensor(host_t3(y));
  double dot = 0, nx = 0;
  for (std::size_t e = 0; e < dx.size(); ++e) {
    dot += dx[e] * dy[e];
    nx += dx[e] * dx[e];
  }
  EXPECT_NEAR(double(t3k::inner_product(space, x, y)), dot, eps_times<S>(256) * std::sqrt(nx) * 4);
  EXPECT_NEAR(double(t3k::norm(space, x)), std::sqrt(nx), eps_times<S>(256) * std::sqrt(nx));
  auto sum = dense_tensor(host_t3(t3k::add(space, x, t3k::scale(space, y, S(-2.5)))));
  for (std::size_t e = 0; e < dx.size(); ++e) EXPECT_NEAR(sum[e], dx[e] - 2.5 * dy[e], eps_times<S>(256));
}

template <class C>
void uniform_round_trip_is_exact() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : t3_shape_cases()) {
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 11);
    auto ux = t3k::to_uniform(space, x);
    auto back = t3k::to_ragged(space, ux);
    ASSERT_EQ(back.tt_ranks(), x.tt_ranks());
    ASSERT_EQ(back.tucker_ranks(), x.tucker_ranks());
    auto hx = host_t3(x);
    auto hb = host_t3(back);
    EXPECT_EQ(hx.u, hb.u);  // bitwise
    EXPECT_EQ(hx.g, hb.g);
    // The padded form is the same tensor.
    auto d1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::to_dense(space, x));
    auto d2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::to_dense(space, ux));
    for (std::size_t e = 0; e < d1.extent(0); ++e) EXPECT_EQ(d1(e), d2(e));
  }
}

template <class C>
void random_t3_is_reproducible_across_backends() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto a = host_t3(t3k::random_t3<S>(space, {3, 4}, {2, 2}, {1, 2, 1}, 99));
  auto b = host_t3(t3k::random_t3<S>(Kokkos::DefaultHostExecutionSpace{}, {3, 4}, {2, 2}, {1, 2, 1}, 99));
  auto c = host_t3(t3k::random_t3<S>(space, {3, 4}, {2, 2}, {1, 2, 1}, 100));
  EXPECT_EQ(a.g, b.g);
  EXPECT_EQ(a.u, b.u);
  EXPECT_NE(a.g, c.g);
}

template <class C>
void bad_shapes_throw_clear_errors() {
  using S = typename C::scalar_type;
  using M = typename C::memory_space;
  using X = t3k::TuckerTensorTrain<S, M>;
  typename X::tucker_core_type u0("u0", 2, 3), u1("u1", 3, 4);
  typename X::tt_core_type g0("g0", 1, 2, 2), g1("g1", 3, 3, 1), g1_bad_n("g1", 2, 2, 1);
  // Mismatched bond ranks: the message names the core and both shapes.
  try {
    X x({u0, u1}, {g0, g1});
    FAIL() << "mismatched TT ranks must throw";
  } catch (t3k::DimensionMismatch const& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("TT core 1 has shape [3 x 3 x 1]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected left rank 2"), std::string::npos) << msg;
  }
  // Tucker rank disagreeing with the TT core's middle extent.
  try {
    X x({u0, u1}, {g0, g1_bad_n});
    FAIL() << "mismatched Tucker ranks must throw";
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("TT core 1 has shape [2 x 2 x 1], expected [2 x 3 x 1]"), std::string::npos)
        << e.what();
  }
  // Zero-sized mode.
  typename X::tucker_core_type u_empty("u", 2, 0);
  EXPECT_THROW(X({u_empty}, {typename X::tt_core_type("g", 1, 2, 1)}), t3k::InvalidArgument);
  EXPECT_THROW(t3k::random_t3<S>(typename C::execution_space{}, {3, 0}, {2, 2}, {1, 2, 1}, 1), t3k::InvalidArgument);
  EXPECT_THROW(t3k::random_t3<S>(typename C::execution_space{}, {3, 4}, {2, 2}, {1, 2}, 1), t3k::DimensionMismatch);
  EXPECT_THROW(X({u0}, {}), t3k::InvalidArgument);
}

template <class C>
class TuckerTensorTrainTest : public ::testing::Test {};
TYPED_TEST_SUITE(TuckerTensorTrainTest, TestConfigs);

TYPED_TEST(TuckerTensorTrainTest, DenseMatchesMultiIndexSum) { dense_matches_multi_index_sum<TypeParam>(); }
TYPED_TEST(TuckerTensorTrainTest, EntriesMatchDense) { entries_match_dense<TypeParam>(); }
TYPED_TEST(TuckerTensorTrainTest, LinearAlgebraMatchesDense) { linear_algebra_matches_dense<TypeParam>(); }
TYPED_TEST(TuckerTensorTrainTest, UniformRoundTripIsExact) { uniform_round_trip_is_exact<TypeParam>(); }
TYPED_TEST(TuckerTensorTrainTest, RandomIsReproducibleAcrossBackends) {
  random_t3_is_reproducible_across_backends<TypeParam>();
}
TYPED_TEST(TuckerTensorTrainTest, BadShapesThrowClearErrors) { bad_shapes_throw_clear_errors<TypeParam>(); }

}  // namespace
