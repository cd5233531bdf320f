// Fitting from entries and applies (docs/math.md, measurements): the loss with per-sample and per-order weights
// against a host reference, the Riemannian gradient against finite differences along the retraction, chunked
// Gauss-Newton products bit for bit, and planted fits: tensor completion from 1% of a 40^4 tensor's entries (fixed
// ranks and rank continuation from ranks 1), applies, and mixed-order apply jets with per-order weights.
#include "frame_reference.hpp"
#include "random_views.hpp"
#include "reference.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/retraction.hpp"
#include "t3k/algorithms/t3_from_dense.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <cmath>
#include <set>

namespace {

using namespace t3k_test;
using Default = Kokkos::DefaultExecutionSpace;

template <class Space, class Scalar, class Mem>
void set_weights(Space const& space, t3k::FittingProblem<Scalar, Mem>& p, std::vector<double> const& order_weights,
                 std::uint64_t seed) {
  p.order_weights = Kokkos::View<Scalar*, Mem>("order_weights", order_weights.size());
  auto h = Kokkos::create_mirror_view(p.order_weights);
  for (std::size_t k = 0; k < order_weights.size(); ++k) h(k) = Scalar(order_weights[k]);
  Kokkos::deep_copy(p.order_weights, h);
  p.weights = Kokkos::View<Scalar*, Mem>("weights", p.n_probes());
  auto hw = Kokkos::create_mirror_view(p.weights);
  t3k::impl::HostNormalGenerator gen(seed);
  for (std::size_t s = 0; s < hw.extent(0); ++s) hw(s) = Scalar(0.5 + gen.uniform());
  Kokkos::deep_copy(p.weights, hw);
  space.fence();
}

// The weighted loss 0.5 sum_s c_s sum_k omega_k^2 (a_s^(k) - y_s^(k))^2 and its residual c omega^2 (a - y) against a
// host computation from the measured jets, for entries and applies.
template <class C>
void loss_with_weights_matches_host_reference() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::vector<std::size_t> const shapes{5, 4, 6}, tucker{3, 2, 3}, tt{1, 2, 3, 1};
  auto truth = t3k::random_t3<S>(space, shapes, tucker, tt, 1);
  auto x = t3k::random_t3<S>(space, shapes, tucker, tt, 2);
  for (auto kind : {t3k::MeasurementKind::entries, t3k::MeasurementKind::applies}) {
    auto problem = t3k::make_planted_problem(space, truth, kind, 40, 2, 0.0, 3);
    set_weights(space, problem, {1.0, 0.5, 0.25}, 4);
    auto eval = t3k::evaluate_loss(space, problem, x);
    auto a = flat_host(kind == t3k::MeasurementKind::entries
                      ? t3k::entry_derivatives(space, x, problem.indices, problem.pp, 2)
                      : t3k::apply_derivatives(space, x, problem.ww, problem.pp, 2));
    auto y = flat_host(problem.targets[0]);
    auto c = flat_host(problem.weights);
    auto r = flat_host(eval.residual[0]);
    double const omega[] = {1.0, 0.5, 0.25};
    double loss = 0, zero = 0;
    for (std::size_t s = 0; s < 40; ++s) {
      for (std::size_t k = 0; k < 3; ++k) {
        double const e = a[s * 3 + k] - y[s * 3 + k], o2 = omega[k] * omega[k];
        loss += 0.5 * c[s] * o2 * e * e;
        zero += 0.5 * c[s] * o2 * y[s * 3 + k] * y[s * 3 + k];
        EXPECT_NEAR(r[s * 3 + k], c[s] * o2 * e, eps_times<S>(64) * (1 + std::abs(e))) << t3k::to_string(kind);
      }
    }
    EXPECT_NEAR(eval.loss, loss, eps_times<S>(256) * loss) << t3k::to_string(kind);
    EXPECT_NEAR(t3k::zero_model_loss(space, problem), zero, eps_times<S>(256) * zero) << t3k::to_string(kind);
    auto const sc = t3k::score(space, problem, x);
    EXPECT_EQ(sc.loss, eval.loss);
    EXPECT_NEAR(sc.relative_residual, std::sqrt(loss / zero), eps_times<S>(256)) << t3k::to_string(kind);
    EXPECT_THROW(t3k::score(space, problem, t3k::random_t3<S>(space, {5, 4}, {2, 2}, {1, 2, 1}, 5)),
                 t3k::DimensionMismatch);
  }
}

// The Riemannian gradient of every kind (weighted, jets of order 1) is the derivative of the loss along the
// retraction, and Gauss-Newton products are bitwise the same for every chunk size.
template <class C>
void gradient_matches_finite_differences_and_products_are_chunk_invariant() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  // Entries of a tensor large enough for 3 reduction blocks of distinct samples on every backend.
  std::vector<std::size_t> const shapes{12, 10, 14, 9}, tucker{3, 2, 3, 2}, tt{1, 2, 3, 2, 1};
  auto truth = t3k::random_t3<S>(space, shapes, tucker, tt, 21);
  auto x = t3k::perturb_t3(space, truth, 0.3, 23);
  auto frame = t3k::orthogonal_frame(space, x);
  std::size_t const w = 3 * block_of<C>() + 7;
  for (auto kind : {t3k::MeasurementKind::entries, t3k::MeasurementKind::applies}) {
    for (std::size_t order : {std::size_t(0), std::size_t(1)}) {
      std::string const what = std::string(t3k::to_string(kind)) + " order " + std::to_string(order);
      auto problem = t3k::make_planted_problem(space, truth, kind, w, order, 0.0, 22);
      std::vector<double> ow(order + 1, 1.0);
      ow.back() = 0.5;
      set_weights(space, problem, ow, 25);
      auto eval = t3k::evaluate_loss(space, problem, x);
      auto g = t3k::riemannian_gradient(space, problem, frame, eval, t3k::ChunkSize::none());
      auto v = t3k::random_variation(space, frame, 1, 24);
      t3k::gauge_project_in_place(space, frame, v);
      double const slope = double(t3k::variation_dot(space, g, v));
      auto fd = [&](double eps) {
        auto plus = t3k::evaluate_loss(space, problem, t3k::retract(space, frame, t3k::impl::scaled(space, v, eps)));
        auto minus = t3k::evaluate_loss(space, problem, t3k::retract(space, frame, t3k::impl::scaled(space, v, -eps)));
        return (plus.loss - minus.loss) / (2 * eps);
      };
      if (std::is_same<S, double>::value) {
        // Steps 1e-4 and 1e-5: the retraction curve's curvature is large against these slopes, and the central
        // difference's rounding (eps * loss / step) stays far below them.
        double const e1 = std::abs(fd(1e-4) - slope), e2 = std::abs(fd(1e-5) - slope);
        EXPECT_LT(e2, 1e-4 * std::abs(slope)) << what << ": slope " << slope << " vs " << fd(1e-5);
        EXPECT_GT(e1 / e2, 30.0) << what << ": central differences must converge at second order";
      }
      auto chunked = t3k::riemannian_gradient(space, problem, frame, eval, t3k::ChunkSize::of(block_of<C>()));
      EXPECT_EQ(flat_host(chunked.tt[1]), flat_host(g.tt[1])) << what;
      EXPECT_EQ(flat_host(chunked.tucker[2]), flat_host(g.tucker[2])) << what;
      auto gn = t3k::gauss_newton_product(space, problem, frame, v, t3k::ChunkSize::none());
      auto gn_chunked = t3k::gauss_newton_product(space, problem, frame, v, t3k::ChunkSize::of(2 * block_of<C>()));
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        EXPECT_EQ(flat_host(gn_chunked.tt[i]), flat_host(gn.tt[i])) << what;
        EXPECT_EQ(flat_host(gn_chunked.tucker[i]), flat_host(gn.tucker[i])) << what;
      }
      // <v, GN v> = sum_s c_s sum_k omega_k^2 (J v)_s^(k)^2 >= 0: the product is the weighted normal operator.
      EXPECT_GT(double(t3k::variation_dot(space, gn, v)), 0.0) << what;
    }
  }
}

/// Relative error of `fit` against `truth` on `n` entries that the problem's samples do not hold (held out), drawn
/// uniformly by `seed`.
template <class T3, class Problem>
double held_out_entry_error(T3 const& fit, T3 const& truth, Problem const& problem, std::size_t n, std::uint64_t seed) {
  Default space;
  auto const shapes = truth.mode_shapes();
  auto train = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, problem.indices);
  std::set<std::vector<int>> seen;
  for (std::size_t s = 0; s < train.extent(0); ++s) {
    std::vector<int> idx(shapes.size());
    for (std::size_t i = 0; i < shapes.size(); ++i) idx[i] = train(s, i);
    seen.insert(idx);
  }
  t3k::EntryIndices<Default::memory_space> held("held_out", n, shapes.size());
  auto h = Kokkos::create_mirror_view(held);
  t3k::impl::HostNormalGenerator gen(seed);
  for (std::size_t s = 0; s < n;) {
    std::vector<int> idx(shapes.size());
    for (std::size_t i = 0; i < shapes.size(); ++i) idx[i] = int(gen.next() % shapes[i]);
    if (seen.count(idx)) continue;
    for (std::size_t i = 0; i < shapes.size(); ++i) h(s, i) = idx[i];
    ++s;
  }
  Kokkos::deep_copy(held, h);
  auto a = flat_host(t3k::entries(space, fit, held));
  auto b = flat_host(t3k::entries(space, truth, held));
  double num = 0, den = 0;
  for (std::size_t s = 0; s < n; ++s) {
    num += (a[s] - b[s]) * (a[s] - b[s]);
    den += b[s] * b[s];
  }
  return std::sqrt(num / den);
}

/// The spectral start of a completion problem: the T3 (at the given ranks) of the zero-filled tensor of its entries
/// rescaled by (entries of the tensor) / W, an unbiased estimate of the whole tensor.
template <class Problem>
auto spectral_start(Problem const& problem, std::vector<std::size_t> const& shapes, long long tucker, long long tt) {
  std::size_t total = 1;
  for (auto n : shapes) total *= n;
  Kokkos::View<double*, Kokkos::HostSpace> dense("dense", total);
  auto idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, problem.indices);
  auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, problem.targets[0]);
  std::size_t const w = idx.extent(0);
  for (std::size_t s = 0; s < w; ++s) {
    std::size_t e = 0;
    for (std::size_t i = 0; i < shapes.size(); ++i) e = e * shapes[i] + std::size_t(idx(s, i));
    dense(e) += y(s, 0, 0) * double(total) / double(w);
  }
  t3k::T3SvdOptions o;
  o.max_tucker_ranks.assign(shapes.size(), tucker);
  o.max_tt_ranks.assign(shapes.size() + 1, tt);
  return t3k::t3_from_dense(Default(), dense, shapes, o).t3;
}

// Tensor completion: a 40^4 T3 of Tucker ranks 4 and TT ranks (1, 4, 4, 4, 1) recovered by newton_cg from 1% of its
// entries (25,600, drawn without repeats) to 1e-8 on 10,000 other entries, at the planted ranks from the spectral
// start and by rank continuation from ranks 1 (a random start at the planted ranks stalls in a poor local minimum:
// completion needs one of the two). Builds with assertions (the Debug and sanitizer legs) fit a 12^4 tensor of
// ranks 3 from 8% of its entries instead.
void tensor_completion_recovers_the_planted_tensor() {
  Default space;
#ifdef NDEBUG
  std::size_t const big_n = 40, rank = 4, w = 25600;
#else
  std::size_t const big_n = 12, rank = 3, w = 1650;
#endif
  std::vector<std::size_t> const shapes(4, big_n), tucker(4, rank), tt{1, rank, rank, rank, 1};
  auto truth = t3k::random_t3<double>(space, shapes, tucker, tt, 31);
  auto problem = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::entries, w, 0, 0.0, 32);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 60;
  o.common.tol_relative_residual = 1e-12;
  o.cg_max_iterations = 100;
  auto fixed = t3k::newton_cg(space, problem, spectral_start(problem, shapes, rank, rank), o);
  EXPECT_LT(held_out_entry_error(fixed.x, truth, problem, 10000, 34), 1e-8) << fixed.reason;

  auto x1 = t3k::random_t3<double>(space, shapes, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 35);
  o.common.max_iterations = 200;
  o.common.continuation.max_tucker_ranks.assign(4, big_n);
  o.common.continuation.max_tt_ranks = {1, big_n, big_n * big_n, big_n, 1};
  auto grown = t3k::newton_cg(space, problem, x1, o);
  EXPECT_EQ(grown.x.tucker_ranks(), truth.tucker_ranks()) << grown.reason;
  EXPECT_EQ(grown.x.tt_ranks(), truth.tt_ranks()) << grown.reason;
  EXPECT_LT(held_out_entry_error(grown.x, truth, problem, 10000, 34), 1e-8) << grown.reason;
}

// Applies of order 0, and applies with jets of order 2 weighted (1, 0.1, 0.01) with 3% noise on the top order: the
// order-0 fit recovers the planted tensor; the weighted jet fit recovers it to the noise the weights let through.
void apply_fits_recover_the_planted_tensor() {
  Default space;
  std::vector<std::size_t> const shapes{8, 7, 9, 6, 8};
  std::vector<std::size_t> const tucker{3, 2, 3, 2, 3}, tt{1, 2, 3, 3, 2, 1};
  auto truth = t3k::random_t3<double>(space, shapes, tucker, tt, 41);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 60;
  o.common.tol_relative_residual = 1e-11;
  o.cg_max_iterations = 100;
  auto x0 = t3k::perturb_t3(space, truth, 0.5, 43);
  auto plain = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::applies, 600, 0, 0.0, 42);
  auto fit = t3k::newton_cg(space, plain, x0, o);
  EXPECT_LT(relative_dense_error(fit.x, truth), 1e-8) << fit.reason;

  auto jets = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::applies, 300, 2, 0.0, 44);
  {  // 3% noise on order 2 alone, which the weights damp
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, jets.targets[0]);
    t3k::impl::HostNormalGenerator gen(45);
    double rms = 0;
    for (std::size_t s = 0; s < h.extent(0); ++s) rms += h(s, 2, 0) * h(s, 2, 0);
    rms = std::sqrt(rms / double(h.extent(0)));
    for (std::size_t s = 0; s < h.extent(0); ++s) h(s, 2, 0) += 0.03 * rms * gen.normal();
    Kokkos::deep_copy(jets.targets[0], h);
  }
  set_weights(space, jets, {1.0, 0.1, 0.01}, 46);
  o.common.tol_relative_residual = 0;
  o.common.max_iterations = 30;
  auto weighted = t3k::newton_cg(space, jets, x0, o);
  jets.order_weights = {};
  auto unweighted = t3k::newton_cg(space, jets, x0, o);
  double const e_weighted = relative_dense_error(weighted.x, truth);
  double const e_unweighted = relative_dense_error(unweighted.x, truth);
  EXPECT_LT(e_weighted, 1e-3) << weighted.reason;
  EXPECT_LT(e_weighted, 0.5 * e_unweighted) << "the weights must damp the noisy top order";
}

template <class C>
class FitMeasurementKinds : public ::testing::Test {};
TYPED_TEST_SUITE(FitMeasurementKinds, TestConfigs);

TYPED_TEST(FitMeasurementKinds, LossWithWeightsMatchesAHostReference) {
  loss_with_weights_matches_host_reference<TypeParam>();
}
TYPED_TEST(FitMeasurementKinds, GradientMatchesFiniteDifferencesAndProductsAreChunkInvariant) {
  gradient_matches_finite_differences_and_products_are_chunk_invariant<TypeParam>();
}

TEST(FitMeasurementKinds, TensorCompletionRecoversThePlantedTensor) { tensor_completion_recovers_the_planted_tensor(); }
TEST(FitMeasurementKinds, ApplyFitsRecoverThePlantedTensor) { apply_fits_recover_the_planted_tensor(); }

}  // namespace
