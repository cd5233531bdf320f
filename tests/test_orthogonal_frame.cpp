// Orthogonalization sweeps and the orthogonal frame (docs/math.md): orthogonality, the rank rules,
// and reconstruction of the tensor from every frame diagram against the brute-force dense reference.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "orthogonality.hpp"
#include "reference.hpp"
#include "shape_cases.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/orthogonalize.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/t3_linear_algebra.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"
#include "test_devices.hpp"

namespace {

using namespace t3k_test;

template <class C>
using T3 = t3k::TuckerTensorTrain<typename C::scalar_type, typename C::memory_space>;
template <class C>
using Frame = t3k::OrthogonalFrame<typename C::scalar_type, typename C::memory_space>;

// The shared cases, and bond ranks larger than the cores can carry (the rank rules then cut them), N up to 6 and
// another d = 5 with a size-1 mode.
std::vector<T3ShapeCase> shape_cases() {
  auto cases = t3_shape_cases();
  cases.push_back({{3, 6}, {3, 2}, {2, 4, 2}});
  cases.push_back({{6, 4, 1, 5, 3}, {3, 5, 2, 2, 4}, {3, 2, 4, 3, 5, 2}});
  cases.push_back({{2, 2, 2}, {2, 2, 2}, {1, 5, 5, 1}});
  return cases;
}

// Orthogonality residuals are entrywise |Gram - I|. Householder QR gives an orthogonality error of a few epsilon
// times a small multiple of the unfolding size (here at most ~30 rows); 64 epsilon leaves room for that and is
// 1.4e-14 in double, below the 1e-13 the frame contract asks for.
template <class S>
double ortho_tol() {
  return eps_times<S>(64);
}

// Reconstructions go through d QR steps and a dense contraction of up to 5 cores; 512 epsilon times ||X||_F bounds
// the accumulated rounding of both (1.1e-13 relative in double, 6e-5 in float).
template <class S>
double reconstruction_tol(double norm) {
  return eps_times<S>(512) * norm;
}

template <class V>
auto to_host(V const& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
}

double frobenius(std::vector<double> const& v) {
  double s = 0;
  for (double e : v) s += e * e;
  return std::sqrt(s);
}

template <class C>
std::vector<double> dense_of(T3<C> const& x) {
  typename C::execution_space space;
  auto h = to_host(t3k::to_dense(space, x));
  std::vector<double> out(h.extent(0));
  for (std::size_t e = 0; e < out.size(); ++e) out[e] = double(h(e));
  return out;
}

void expect_dense_near(std::vector<double> const& actual, std::vector<double> const& expected, double tol,
                       std::string const& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double worst = 0;
  for (std::size_t e = 0; e < actual.size(); ++e) worst = std::max(worst, std::abs(actual[e] - expected[e]));
  EXPECT_LE(worst, tol) << what;
}

// Expected frame shapes by the rank rules of docs/math.md (r after squashing: r_0 = r_d = 1).
struct FrameRanks {
  std::vector<std::size_t> nu, no, rl, rr;
};
FrameRanks expected_frame_ranks(T3ShapeCase const& sh) {
  std::size_t const d = sh.big_n.size();
  FrameRanks f;
  f.nu.resize(d);
  f.no.resize(d);
  f.rl.assign(d + 1, 1);
  f.rr.assign(d + 1, 1);
  for (std::size_t i = 0; i < d; ++i) f.nu[i] = std::min(sh.n[i], sh.big_n[i]);
  for (std::size_t i = 0; i + 1 < d; ++i) f.rl[i + 1] = std::min(f.rl[i] * f.nu[i], sh.r[i + 1]);
  for (std::size_t i = d; i-- > 1;) f.rr[i] = std::min(f.rl[i], f.nu[i] * f.rr[i + 1]);
  for (std::size_t i = 0; i < d; ++i) f.no[i] = std::min(f.rl[i] * f.rr[i + 1], f.nu[i]);
  return f;
}

// A device core from a host core (explicit copy, so the host buffer is never aliased).
template <class DeviceView, class HostView>
DeviceView device_from(HostView const& h, std::string const& label) {
  DeviceView d(label, h.layout());
  Kokkos::deep_copy(d, h);
  return d;
}

// C_i[a,u,b] = Σ_o O_i[a,o,b] S_i[o,u] on the host, copied to the device.
template <class C>
typename Frame<C>::core_type centre_core(Frame<C> const& f, std::size_t i) {
  using S = typename C::scalar_type;
  auto o = to_host(f.outer_tt(i));
  auto s = to_host(f.centre_tucker(i));
  Kokkos::View<S***, Kokkos::LayoutRight, Kokkos::HostSpace> c("c", o.extent(0), s.extent(1), o.extent(2));
  for (std::size_t a = 0; a < o.extent(0); ++a)
    for (std::size_t u = 0; u < s.extent(1); ++u)
      for (std::size_t b = 0; b < o.extent(2); ++b) {
        double acc = 0;
        for (std::size_t k = 0; k < o.extent(1); ++k) acc += double(o(a, k, b)) * double(s(k, u));
        c(a, u, b) = S(acc);
      }
  return device_from<typename Frame<C>::core_type>(c, "centre");
}

// S_i U_i on the host, copied to the device.
template <class C>
typename Frame<C>::matrix_type centre_times_up(Frame<C> const& f, std::size_t i) {
  using S = typename C::scalar_type;
  auto s = to_host(f.centre_tucker(i));
  auto u = to_host(f.up_tucker(i));
  Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace> su("su", s.extent(0), u.extent(1));
  for (std::size_t o = 0; o < s.extent(0); ++o)
    for (std::size_t j = 0; j < u.extent(1); ++j) {
      double acc = 0;
      for (std::size_t k = 0; k < s.extent(1); ++k) acc += double(s(o, k)) * double(u(k, j));
      su(o, j) = S(acc);
    }
  return device_from<typename Frame<C>::matrix_type>(su, "su");
}

template <class C>
void frame_is_orthogonal_and_follows_rank_rules() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 21);
    auto f = t3k::orthogonal_frame(space, x);
    std::size_t const d = sh.big_n.size();
    auto const want = expected_frame_ranks(sh);
    ASSERT_EQ(f.n_modes(), d);
    EXPECT_EQ(f.mode_shapes(), sh.big_n);
    EXPECT_EQ(f.up_ranks(), want.nu);
    EXPECT_EQ(f.outer_ranks(), want.no);
    EXPECT_EQ(f.left_ranks(), want.rl);
    EXPECT_EQ(f.right_ranks(), want.rr);
    ASSERT_TRUE(f.has_centre());
    for (std::size_t i = 0; i < d; ++i) {
      std::string const at = "mode " + std::to_string(i) + " of d = " + std::to_string(d);
      EXPECT_EQ(f.centre_tucker(i).extent(0), want.no[i]) << at;
      EXPECT_EQ(f.centre_tucker(i).extent(1), want.nu[i]) << at;
      EXPECT_LE(row_orthogonality_residual(f.up_tucker(i)), ortho_tol<S>()) << "U " << at;
      if (i + 2 <= d) {
        EXPECT_LE(core_orthogonality_residual(f.left_tt(i), 2), ortho_tol<S>()) << "L " << at;
      }
      if (i >= 1) {
        EXPECT_LE(core_orthogonality_residual(f.right_tt(i), 0), ortho_tol<S>()) << "R " << at;
      }
      EXPECT_LE(core_orthogonality_residual(f.outer_tt(i), 1), ortho_tol<S>()) << "O " << at;
    }
  }
}

template <class C>
void frame_diagrams_reconstruct_the_tensor() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 5);
    auto const before = host_t3(x);
    auto const ref = dense_tensor(before);
    double const tol = reconstruction_tol<S>(frobenius(ref));
    auto f = t3k::orthogonal_frame(space, x);
    std::size_t const d = sh.big_n.size();
    std::vector<typename Frame<C>::matrix_type> up;
    std::vector<typename Frame<C>::core_type> left, right;
    for (std::size_t i = 0; i < d; ++i) {
      up.push_back(f.up_tucker(i));
      left.push_back(f.left_tt(i));
      right.push_back(f.right_tt(i));
    }
    std::string const shape = "d = " + std::to_string(d) + ", N = " + t3k::impl::shape_string(sh.big_n);
    expect_dense_near(dense_of<C>(T3<C>(up, left)), ref, tol, "D(L_0..L_{d-1}; U), " + shape);
    expect_dense_near(dense_of<C>(T3<C>(up, right)), ref, tol, "D(R_0..R_{d-1}; U), " + shape);
    for (std::size_t i = 0; i < d; ++i) {
      std::vector<typename Frame<C>::core_type> cores;
      for (std::size_t k = 0; k < i; ++k) cores.push_back(f.left_tt(k));
      cores.push_back(centre_core<C>(f, i));
      for (std::size_t k = i + 1; k < d; ++k) cores.push_back(f.right_tt(k));
      std::string const at = ", centre " + std::to_string(i) + ", " + shape;
      expect_dense_near(dense_of<C>(T3<C>(up, cores)), ref, tol, "D(L.., C_i, ..R; U)" + at);
      cores[i] = f.outer_tt(i);
      auto up_i = up;
      up_i[i] = centre_times_up<C>(f, i);
      expect_dense_near(dense_of<C>(T3<C>(up_i, cores)), ref, tol, "D(L.., O_i, ..R; S_i U_i)" + at);
    }
    // The input is left as it was (the host copies never alias x's cores, even in HostSpace).
    auto const after = host_t3(x);
    EXPECT_EQ(before.u, after.u);
    EXPECT_EQ(before.g, after.g);
  }
}

// QR does not truncate: a numerically rank-deficient T3 (X + X written with doubled ranks) keeps the full shapes of
// the rank rules, and the frame still reconstructs it.
template <class C>
void rank_deficient_input_keeps_full_frame_shapes() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  T3ShapeCase const half{{4, 5, 6, 3}, {1, 2, 2, 1}, {1, 2, 2, 1, 1}};
  auto y = t3k::random_t3<S>(space, half.big_n, half.n, half.r, 8);
  auto x = t3k::add(space, y, y);
  T3ShapeCase sh{half.big_n, x.tucker_ranks(), x.tt_ranks()};
  auto f = t3k::orthogonal_frame(space, x);
  auto const want = expected_frame_ranks(sh);
  EXPECT_EQ(f.up_ranks(), want.nu);
  EXPECT_EQ(f.outer_ranks(), want.no);
  EXPECT_EQ(f.left_ranks(), want.rl);
  EXPECT_EQ(f.right_ranks(), want.rr);
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    EXPECT_LE(row_orthogonality_residual(f.up_tucker(i)), ortho_tol<S>()) << i;
    if (i + 2 <= f.n_modes()) {
      EXPECT_LE(core_orthogonality_residual(f.left_tt(i), 2), ortho_tol<S>()) << i;
    }
    if (i >= 1) {
      EXPECT_LE(core_orthogonality_residual(f.right_tt(i), 0), ortho_tol<S>()) << i;
    }
    EXPECT_LE(core_orthogonality_residual(f.outer_tt(i), 1), ortho_tol<S>()) << i;
  }
  auto const ref = dense_tensor(host_t3(x));
  std::vector<typename Frame<C>::matrix_type> up;
  std::vector<typename Frame<C>::core_type> left;
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    up.push_back(f.up_tucker(i));
    left.push_back(f.left_tt(i));
  }
  expect_dense_near(dense_of<C>(T3<C>(up, left)), ref, reconstruction_tol<S>(frobenius(ref)), "D(L; U)");
}

template <class C>
void orthogonalize_sweeps_keep_the_tensor() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 13);
    auto const ref = dense_tensor(host_t3(x));
    double const tol = reconstruction_tol<S>(frobenius(ref));
    std::size_t const d = sh.big_n.size();
    std::string const shape = "d = " + std::to_string(d) + ", N = " + t3k::impl::shape_string(sh.big_n);

    auto sq = t3k::squash_tails(space, x);
    EXPECT_EQ(sq.tt_ranks().front(), 1u) << shape;
    EXPECT_EQ(sq.tt_ranks().back(), 1u) << shape;
    EXPECT_EQ(sq.tucker_ranks(), sh.n) << shape;
    expect_dense_near(dense_of<C>(sq), ref, tol, "squash_tails, " + shape);

    auto up = t3k::up_orthogonalize(space, x);
    EXPECT_EQ(up.tt_ranks(), sh.r) << shape;
    for (std::size_t i = 0; i < d; ++i) {
      EXPECT_EQ(up.tucker_ranks()[i], std::min(sh.n[i], sh.big_n[i])) << shape;
      EXPECT_LE(row_orthogonality_residual(up.tucker_core(i)), ortho_tol<S>()) << "U " << i << ", " << shape;
    }
    expect_dense_near(dense_of<C>(up), ref, tol, "up_orthogonalize, " + shape);

    auto left = t3k::left_orthogonalize(space, x);
    auto const rl = left.tt_ranks();
    EXPECT_EQ(rl.front(), sh.r.front()) << shape;
    EXPECT_EQ(rl.back(), sh.r.back()) << shape;
    EXPECT_EQ(left.tucker_ranks(), sh.n) << shape;
    for (std::size_t i = 0; i + 1 < d; ++i) {
      EXPECT_EQ(rl[i + 1], std::min(rl[i] * sh.n[i], sh.r[i + 1])) << shape;
      EXPECT_LE(core_orthogonality_residual(left.tt_core(i), 2), ortho_tol<S>()) << "left " << i << ", " << shape;
    }
    expect_dense_near(dense_of<C>(left), ref, tol, "left_orthogonalize, " + shape);

    auto right = t3k::right_orthogonalize(space, x);
    auto const rr = right.tt_ranks();
    EXPECT_EQ(rr.front(), sh.r.front()) << shape;
    EXPECT_EQ(rr.back(), sh.r.back()) << shape;
    for (std::size_t i = d; i-- > 1;) {
      EXPECT_EQ(rr[i], std::min(sh.r[i], sh.n[i] * rr[i + 1])) << shape;
      EXPECT_LE(core_orthogonality_residual(right.tt_core(i), 0), ortho_tol<S>()) << "right " << i << ", " << shape;
    }
    expect_dense_near(dense_of<C>(right), ref, tol, "right_orthogonalize, " + shape);

    // Composition: the standard form used by the frame.
    auto standard = t3k::left_orthogonalize(space, t3k::up_orthogonalize(space, t3k::squash_tails(space, x)));
    expect_dense_near(dense_of<C>(standard), ref, tol, "left(up(squash)), " + shape);
  }
}

template <class C>
void uniform_frame_equals_ragged_frame() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 31);
    auto f = t3k::orthogonal_frame(space, x);
    auto fu = t3k::orthogonal_frame(space, t3k::to_uniform(space, x));
    ASSERT_EQ(fu.up_ranks(), f.up_ranks());
    ASSERT_EQ(fu.outer_ranks(), f.outer_ranks());
    ASSERT_EQ(fu.left_ranks(), f.left_ranks());
    ASSERT_EQ(fu.right_ranks(), f.right_ranks());
    auto same = [](auto const& a, auto const& b) {
      auto ha = to_host(a);
      auto hb = to_host(b);
      if (ha.size() != hb.size()) return false;
      for (std::size_t e = 0; e < ha.size(); ++e)
        if (ha.data()[e] != hb.data()[e]) return false;
      return true;
    };
    // The live blocks are cut out exactly and the same host computation runs: bitwise identical.
    for (std::size_t i = 0; i < f.n_modes(); ++i) {
      EXPECT_TRUE(same(f.up_tucker(i), fu.up_tucker(i))) << i;
      EXPECT_TRUE(same(f.left_tt(i), fu.left_tt(i))) << i;
      EXPECT_TRUE(same(f.right_tt(i), fu.right_tt(i))) << i;
      EXPECT_TRUE(same(f.outer_tt(i), fu.outer_tt(i))) << i;
      EXPECT_TRUE(same(f.centre_tucker(i), fu.centre_tucker(i))) << i;
    }
  }
}

template <class C>
class OrthogonalFrameTest : public ::testing::Test {};
TYPED_TEST_SUITE(OrthogonalFrameTest, TestConfigs);

TYPED_TEST(OrthogonalFrameTest, FrameIsOrthogonalAndFollowsRankRules) {
  frame_is_orthogonal_and_follows_rank_rules<TypeParam>();
}
TYPED_TEST(OrthogonalFrameTest, FrameDiagramsReconstructTheTensor) {
  frame_diagrams_reconstruct_the_tensor<TypeParam>();
}
TYPED_TEST(OrthogonalFrameTest, RankDeficientInputKeepsFullFrameShapes) {
  rank_deficient_input_keeps_full_frame_shapes<TypeParam>();
}
TYPED_TEST(OrthogonalFrameTest, OrthogonalizeSweepsKeepTheTensor) { orthogonalize_sweeps_keep_the_tensor<TypeParam>(); }
TYPED_TEST(OrthogonalFrameTest, UniformFrameEqualsRaggedFrame) { uniform_frame_equals_ragged_frame<TypeParam>(); }

}  // namespace
