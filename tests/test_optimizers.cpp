// The four optimizers on planted problems (docs/math.md), the gradient and the Gauss-Newton operator.
#include "test_devices.hpp"
#include "frame_reference.hpp"

#include "algorithms/random_t3.hpp"
#include "algorithms/to_dense.hpp"
#include "core/memory_tracking.hpp"
#include "optimizers/adam.hpp"
#include "optimizers/gradient_descent.hpp"
#include "optimizers/mc_sgd.hpp"
#include "optimizers/newton_cg.hpp"
#include "optimizers/planted_problem.hpp"

namespace {

using namespace t3k_test;

struct Planted {
  std::vector<std::size_t> big_n, n, r;
  std::size_t order, n_probes;
};

template <class X>
double relative_dense_error(X const& a, X const& b) {
  auto da = dense_tensor(host_t3(a));
  auto db = dense_tensor(host_t3(b));
  double num = 0, den = 0;
  for (std::size_t e = 0; e < da.size(); ++e) {
    num += (da[e] - db[e]) * (da[e] - db[e]);
    den += db[e] * db[e];
  }
  return std::sqrt(num / den);
}

// newton_cg from a nearby start reaches a relative residual below 1e-10 and recovers the planted tensor.
template <class C>
void newton_cg_recovers_planted_t3() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::vector<Planted> cases{{{4, 5, 3, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 2, 40},
                             {{3, 4, 3, 3, 4}, {2, 3, 3, 2, 2}, {1, 2, 4, 3, 2, 1}, 1, 60},
                             {{3, 3, 3, 3, 3, 3}, {2, 2, 3, 3, 2, 2}, {1, 2, 4, 6, 4, 2, 1}, 0, 200}};
  for (auto const& pc : cases) {
    auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 1);
    auto problem = t3k::make_planted_problem(space, truth, pc.n_probes, pc.order, 0.0, 2);
    auto x0 = t3k::perturb_t3(space, truth, 1e-2, 3);
    t3k::NewtonCgOptions o;
    o.common.max_iterations = 30;
    o.common.tol_relative_residual = 1e-12;
    o.cg_max_iterations = 200;
    auto fit = t3k::newton_cg(space, problem, x0, o);
    ASSERT_FALSE(fit.history.empty());
    EXPECT_LT(fit.history.back().relative_residual, 1e-10)
        << "d=" << pc.big_n.size() << " K=" << pc.order << " stopped: " << fit.reason;
    EXPECT_LT(relative_dense_error(fit.x, truth), 1e-8) << "d=" << pc.big_n.size();
    for (std::size_t k = 1; k < fit.history.size(); ++k) EXPECT_LE(fit.history[k].loss, fit.history[k - 1].loss);
  }
}

Planted gradient_case() { return {{4, 5, 3, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 2, 300}; }

template <class C, class Fit>
void reduces_loss_by_three_orders(Fit&& fit_fn, char const* name) {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto pc = gradient_case();
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 11);
  auto problem = t3k::make_planted_problem(space, truth, pc.n_probes, pc.order, 0.0, 12);
  auto x0 = t3k::perturb_t3(space, truth, 0.1, 13);
  auto fit = fit_fn(space, problem, x0);
  ASSERT_GE(fit.history.size(), 2u);
  double const first = fit.history.front().loss;
  double const last = fit.history.back().loss;
  EXPECT_LT(last, 1e-3 * first) << name << ": loss " << first << " -> " << last << " (" << fit.reason << ", "
                                << fit.history.size() - 1 << " iterations)";
}

template <class C>
void gradient_descent_reduces_loss() {
  reduces_loss_by_three_orders<C>(
      [](auto const& space, auto const& problem, auto const& x0) {
        t3k::GradientDescentOptions o;
        o.common.max_iterations = 60;
        return t3k::gradient_descent(space, problem, x0, o);
      },
      "gradient_descent");
}

template <class C>
void mc_sgd_reduces_loss() {
  reduces_loss_by_three_orders<C>(
      [](auto const& space, auto const& problem, auto const& x0) {
        t3k::McSgdOptions o;
        o.common.max_iterations = 400;
        o.batch_size = 64;
        o.eval_every = 50;
        return t3k::mc_sgd(space, problem, x0, o);
      },
      "mc_sgd");
}

template <class C>
void adam_reduces_loss() {
  reduces_loss_by_three_orders<C>(
      [](auto const& space, auto const& problem, auto const& x0) {
        t3k::AdamOptions o;
        o.common.max_iterations = 300;
        o.alpha_rel = 3e-2;
        return t3k::adam(space, problem, x0, o);
      },
      "adam");
}

// The gradient is the derivative of the loss along the retraction: central differences converge like eps^2.
template <class C>
void gradient_matches_finite_differences() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto pc = gradient_case();
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 21);
  auto problem = t3k::make_planted_problem(space, truth, 50, pc.order, 0.0, 22);
  auto x = t3k::perturb_t3(space, truth, 0.3, 23);
  auto frame = t3k::orthogonal_frame(space, x);
  auto eval = t3k::evaluate_loss(space, problem, x);
  auto g = t3k::riemannian_gradient(space, problem, frame, eval, t3k::ChunkSize::none());
  auto v = t3k::random_variation(space, frame, 1, 24);
  t3k::gauge_project_in_place(space, frame, v);
  double const slope = double(t3k::variation_dot(space, g, v));
  auto fd = [&](double eps) {
    auto plus = t3k::evaluate_loss(space, problem, t3k::retract(space, frame, t3k::impl::scaled(space, v, eps))).loss;
    auto minus = t3k::evaluate_loss(space, problem, t3k::retract(space, frame, t3k::impl::scaled(space, v, -eps))).loss;
    return (plus - minus) / (2 * eps);
  };
  // Second-order convergence of the central difference along the retraction curve (the curve's own curvature
  // and the loss's third derivative give a sizeable constant, hence small steps).
  double const e1 = std::abs(fd(1e-3) - slope), e2 = std::abs(fd(1e-4) - slope);
  EXPECT_LT(e2, 1e-4 * std::abs(slope)) << "slope " << slope << " vs " << fd(1e-4);
  EXPECT_GT(e1 / e2, 30.0) << "central differences must converge at second order (" << e1 << ", " << e2 << ")";
}

// <u, GN v> = <GN u, v> and <v, GN v> >= 0 on random gauged tangents; stacks give the same products.
template <class C>
void gauss_newton_is_symmetric_psd() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto pc = gradient_case();
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 31);
  auto problem = t3k::make_planted_problem(space, truth, 8, pc.order, 0.0, 32);  // few probes: GN is singular
  auto frame = t3k::orthogonal_frame(space, truth);
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    auto u = t3k::random_variation(space, frame, 1, 100 + seed);
    auto v = t3k::random_variation(space, frame, 1, 200 + seed);
    t3k::gauge_project_in_place(space, frame, u);
    t3k::gauge_project_in_place(space, frame, v);
    auto gu = t3k::gauss_newton_product(space, problem, frame, u, t3k::ChunkSize::of(3));
    auto gv = t3k::gauss_newton_product(space, problem, frame, v, t3k::ChunkSize::none());
    double const a = double(t3k::variation_dot(space, u, gv));
    double const b = double(t3k::variation_dot(space, gu, v));
    EXPECT_NEAR(a, b, 1e-12 * (std::abs(a) + std::abs(b) + 1));
    EXPECT_GE(double(t3k::variation_dot(space, v, gv)), -1e-14);
  }
}

// Chunking inside an optimizer (auto on host backends) gives iterates bit for bit equal to chunk_size none.
template <class C>
void auto_chunk_iterates_equal_none() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  // On host backends `auto` caps the chunk's workspace, and 300 probes at these ranks exceed it. Device backends
  // (and builds with T3K_DEVICE_CODE_PATHS_ON_HOST) take every probe that fits in memory, so there the case chunks
  // by a fixed block over two blocks and a part of one instead.
  bool const host = t3k::impl::runs_on_host<typename C::execution_space>();
  std::size_t const block = block_of<C>();
  Planted pc{{6, 6, 6, 6}, {4, 4, 4, 4}, {1, 4, 8, 4, 1}, 2, host ? 300 : 2 * block + 36};
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 41);
  auto problem = t3k::make_planted_problem(space, truth, pc.n_probes, pc.order, 0.0, 42);
  auto x0 = t3k::perturb_t3(space, truth, 0.05, 43);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 3;
  o.common.chunk_size = host ? t3k::ChunkSize::automatic() : t3k::ChunkSize::of(block);
  auto a = t3k::newton_cg(space, problem, x0, o);
  o.common.chunk_size = t3k::ChunkSize::none();
  auto b = t3k::newton_cg(space, problem, x0, o);
  ASSERT_LT(a.chunk_size, pc.n_probes) << "the case must actually chunk";
  ASSERT_EQ(a.history.size(), b.history.size());
  for (std::size_t k = 0; k < a.history.size(); ++k) {
    EXPECT_EQ(a.history[k].loss, b.history[k].loss);
    EXPECT_EQ(a.history[k].gradient_norm, b.history[k].gradient_norm);
  }
  auto ha = host_t3(a.x), hb = host_t3(b.x);
  EXPECT_EQ(ha.g, hb.g);
  EXPECT_EQ(ha.u, hb.u);
}

// Same seed, same backend: the same iterates.
template <class C>
void minibatch_fits_are_reproducible() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto pc = gradient_case();
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 51);
  auto problem = t3k::make_planted_problem(space, truth, 100, pc.order, 0.01, 52);
  auto x0 = t3k::perturb_t3(space, truth, 0.1, 53);
  t3k::McSgdOptions o;
  o.common.max_iterations = 10;
  o.common.seed = 7;
  o.batch_size = 16;
  o.eval_every = 1;
  auto a = t3k::mc_sgd(space, problem, x0, o);
  auto b = t3k::mc_sgd(space, problem, x0, o);
  o.common.seed = 8;
  auto c = t3k::mc_sgd(space, problem, x0, o);
  ASSERT_EQ(a.history.size(), b.history.size());
  for (std::size_t k = 0; k < a.history.size(); ++k) EXPECT_EQ(a.history[k].loss, b.history[k].loss);
  EXPECT_NE(a.history.back().loss, c.history.back().loss);
}

// Two fits are the same bit for bit: every history record's loss and gradient norm, and the final T3's cores.
template <class Result>
void expect_same_fit(Result const& expected, Result const& got, char const* name) {
  ASSERT_EQ(got.history.size(), expected.history.size()) << name;
  for (std::size_t k = 0; k < expected.history.size(); ++k) {
    EXPECT_EQ(got.history[k].loss, expected.history[k].loss) << name << " iteration " << k;
    EXPECT_EQ(got.history[k].gradient_norm, expected.history[k].gradient_norm) << name << " iteration " << k;
  }
  auto a = host_t3(expected.x), b = host_t3(got.x);
  EXPECT_EQ(a.g, b.g) << name;
  EXPECT_EQ(a.u, b.u) << name;
}

// gradient_case's planted problem on 120 probes (1% noise) and a start at a 10% perturbation of the planted T3.
template <class C>
struct SmallFit {
  t3k::FittingProblem<typename C::scalar_type, typename C::memory_space> problem;
  t3k::TuckerTensorTrain<typename C::scalar_type, typename C::memory_space> x0;
};
template <class C>
SmallFit<C> small_fit(typename C::execution_space const& space, std::uint64_t seed) {
  auto pc = gradient_case();
  auto truth = t3k::random_t3<typename C::scalar_type>(space, pc.big_n, pc.n, pc.r, seed);
  return {t3k::make_planted_problem(space, truth, 120, pc.order, 0.01, seed + 1),
          t3k::perturb_t3(space, truth, 0.1, seed + 2)};
}

// Resuming from the checkpoint of iteration 3 reproduces iterations 4..6 of an uninterrupted run bit for bit.
template <class C, class Fit>
void resume_reproduces_uninterrupted(Fit&& fit_fn, char const* name) {
  using S = typename C::scalar_type;
  using M = typename C::memory_space;
  typename C::execution_space space;
  auto const fit = small_fit<C>(space, 61);
  auto const& problem = fit.problem;
  auto const& x0 = fit.x0;
  std::vector<t3k::OptimizerCheckpoint<S, M>> saved;
  t3k::CheckpointControl<S, M> control;
  control.every = 3;
  control.write = [&](t3k::OptimizerCheckpoint<S, M> const& c) { saved.push_back(c); };
  auto full = fit_fn(space, problem, x0, control);
  ASSERT_EQ(saved.size(), 2u) << name;
  EXPECT_EQ(saved[0].iteration, 3u);
  t3k::CheckpointControl<S, M> resume;
  resume.resume_from = &saved[0];
  auto resumed = fit_fn(space, problem, x0, resume);
  expect_same_fit(full, resumed, name);
}

template <class C>
void every_optimizer_resumes_exactly() {
  using S = typename C::scalar_type;
  using M = typename C::memory_space;
  using Control = t3k::CheckpointControl<S, M>;
  resume_reproduces_uninterrupted<C>(
      [](auto const& space, auto const& problem, auto const& x0, Control const& c) {
        t3k::NewtonCgOptions o;
        o.common.max_iterations = 6;
        o.common.tol_gradient = 0;
        o.levenberg_marquardt = true;
        return t3k::newton_cg(space, problem, x0, o, c);
      },
      "newton_cg");
  resume_reproduces_uninterrupted<C>(
      [](auto const& space, auto const& problem, auto const& x0, Control const& c) {
        t3k::GradientDescentOptions o;
        o.common.max_iterations = 6;
        return t3k::gradient_descent(space, problem, x0, o, c);
      },
      "gradient_descent");
  resume_reproduces_uninterrupted<C>(
      [](auto const& space, auto const& problem, auto const& x0, Control const& c) {
        t3k::McSgdOptions o;
        o.common.max_iterations = 6;
        o.batch_size = 50;  // 120 probes: epochs end with partial batches and reshuffle mid-run
        o.eval_every = 2;
        return t3k::mc_sgd(space, problem, x0, o, c);
      },
      "mc_sgd");
  resume_reproduces_uninterrupted<C>(
      [](auto const& space, auto const& problem, auto const& x0, Control const& c) {
        t3k::AdamOptions o;
        o.common.max_iterations = 6;
        o.batch_size = 50;
        return t3k::adam(space, problem, x0, o, c);
      },
      "adam");
  // Full batch: each step takes the full-loss evaluation of the point it starts from (residual included) where the
  // uninterrupted run has one, while the resumed run forms it afresh.
  resume_reproduces_uninterrupted<C>(
      [](auto const& space, auto const& problem, auto const& x0, Control const& c) {
        t3k::AdamOptions o;
        o.common.max_iterations = 6;
        return t3k::adam(space, problem, x0, o, c);
      },
      "adam (full batch)");
}

// evaluate_loss against a host reference (weighted loss 0.5 sum c ||z - y||^2, residual c (z - y) in the scalar
// type); with a recycled residual array it writes into that array and gives the same bits as a fresh evaluation;
// gauss_newton_product with a J v buffer reuses the buffer and gives the same bits as without one, for a second
// variation too (so every J v entry is overwritten).
template <class C>
void reused_buffers_give_the_same_bits() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto pc = gradient_case();
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 41);
  auto problem = t3k::make_planted_problem(space, truth, 70, pc.order, 0.0, 42);
  problem.weights = Kokkos::View<S*, typename C::memory_space>("weights", 70);
  auto hw = Kokkos::create_mirror_view(problem.weights);
  for (std::size_t s = 0; s < 70; ++s) hw(s) = S(0.5 + 0.01 * double(s));
  Kokkos::deep_copy(problem.weights, hw);
  auto x = t3k::perturb_t3(space, truth, 0.1, 43);
  auto x2 = t3k::perturb_t3(space, truth, 0.2, 44);

  auto eval = t3k::evaluate_loss(space, problem, x);
  auto z = t3k::probe_derivatives(space, x, problem.ww, problem.pp, problem.order);
  double loss = 0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, z[i]);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, problem.targets[i]);
    auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, eval.residual[i]);
    for (std::size_t s = 0; s < hz.extent(0); ++s) {
      for (std::size_t k = 0; k < hz.extent(1); ++k) {
        for (std::size_t j = 0; j < hz.extent(2); ++j) {
          S const e = hz(s, k, j) - hy(s, k, j);
          EXPECT_EQ(hr(s, k, j), S(hw(s) * e)) << "mode " << i;
          loss += 0.5 * double(hw(s)) * double(e) * double(e);
        }
      }
    }
  }
  EXPECT_NEAR(eval.loss, loss, 1e-12 * loss);

  auto fresh = t3k::evaluate_loss(space, problem, x2);
  auto recycled = t3k::evaluate_loss(space, problem, x2, eval.residual);
  EXPECT_EQ(recycled.loss, fresh.loss);
  for (std::size_t i = 0; i < z.size(); ++i) {
    EXPECT_EQ(recycled.residual[i].data(), eval.residual[i].data()) << "mode " << i << ": array not reused";
    EXPECT_EQ(flat_host(recycled.residual[i]), flat_host(fresh.residual[i])) << "mode " << i;
  }
  auto frame = t3k::orthogonal_frame(space, x);
  auto v = t3k::random_variation(space, frame, 1, 45);
  t3k::gauge_project_in_place(space, frame, v);
  auto v2 = t3k::random_variation(space, frame, 1, 46);  // a second product must overwrite every J v entry
  t3k::gauge_project_in_place(space, frame, v2);
  auto const chunk = t3k::ChunkSize::automatic();
  auto plain = t3k::gauss_newton_product(space, problem, frame, v, chunk);
  auto plain2 = t3k::gauss_newton_product(space, problem, frame, v2, chunk);
  t3k::TangentProbeJets<S, typename C::memory_space> buffer;
  auto first = t3k::gauss_newton_product(space, problem, frame, v, chunk, &buffer);
  ASSERT_EQ(buffer.size(), pc.big_n.size());
  auto const* allocated = buffer[0].data();
  auto second = t3k::gauss_newton_product(space, problem, frame, v2, chunk, &buffer);
  EXPECT_EQ(buffer[0].data(), allocated);
  for (std::size_t i = 0; i < pc.big_n.size(); ++i) {
    EXPECT_EQ(flat_host(first.tucker[i]), flat_host(plain.tucker[i]));
    EXPECT_EQ(flat_host(first.tt[i]), flat_host(plain.tt[i]));
    EXPECT_EQ(flat_host(second.tucker[i]), flat_host(plain2.tucker[i]));
    EXPECT_EQ(flat_host(second.tt[i]), flat_host(plain2.tt[i]));
  }
}

// keep_loss_stack (mc_sgd, minibatch adam): the same iterates bit for bit, and the full loss's probe-jet stack
// allocated once per fit instead of once per full-loss evaluation (one View per mode each time).
template <class C>
void kept_loss_stack_gives_the_same_iterates() {
  using M = typename C::memory_space;
  typename C::execution_space space;
  auto const fit = small_fit<C>(space, 71);
  auto const& problem = fit.problem;
  auto const& x0 = fit.x0;
  std::size_t const d = x0.n_modes();
  // Full losses at x0, at iterations 2, 4, 6 and at the end (7): five evaluations.
  std::size_t const iterations = 7, eval_every = 2, evaluations = 5;
  auto run = [&](auto const& fit_fn, bool keep, std::int64_t& allocations) {
    space.fence();
    t3k::AllocationTracker tracker;
    auto result = fit_fn(keep);
    space.fence();
    allocations = tracker.allocations(M().name());
    return result;
  };
  auto check = [&](auto const& fit_fn, char const* name) {
    std::int64_t allocations_fresh = 0, allocations_kept = 0;
    auto fresh = run(fit_fn, false, allocations_fresh);
    auto kept = run(fit_fn, true, allocations_kept);
    expect_same_fit(fresh, kept, name);
    EXPECT_EQ(allocations_fresh - allocations_kept, std::int64_t((evaluations - 1) * d)) << name;
  };
  // The same settings for both (McSgdOptions and AdamOptions share these fields).
  auto with_settings = [&](auto o, bool keep) {
    o.common.max_iterations = iterations;
    o.common.tol_gradient = 0;
    o.batch_size = 50;
    o.eval_every = eval_every;
    o.keep_loss_stack = keep;
    return o;
  };
  check([&](bool keep) { return t3k::mc_sgd(space, problem, x0, with_settings(t3k::McSgdOptions{}, keep)); }, "mc_sgd");
  check([&](bool keep) { return t3k::adam(space, problem, x0, with_settings(t3k::AdamOptions{}, keep)); }, "adam");
}

template <class C>
class OptimizerTest : public ::testing::Test {};
TYPED_TEST_SUITE(OptimizerTest, DoubleConfigs);

// Convergence runs exercise the optimizers' logic on top of kernels that every backend's typed suites check; they
// run on the default execution space only, to keep the suite's time in bounds.
using Default = t3k_test::Config<Kokkos::DefaultExecutionSpace, double>;
TEST(OptimizerConvergence, NewtonCgRecoversPlantedT3) { newton_cg_recovers_planted_t3<Default>(); }
TEST(OptimizerConvergence, GradientDescentReducesLoss) { gradient_descent_reduces_loss<Default>(); }
TEST(OptimizerConvergence, McSgdReducesLoss) { mc_sgd_reduces_loss<Default>(); }
TEST(OptimizerConvergence, AdamReducesLoss) { adam_reduces_loss<Default>(); }
TYPED_TEST(OptimizerTest, GradientMatchesFiniteDifferences) { gradient_matches_finite_differences<TypeParam>(); }
TYPED_TEST(OptimizerTest, GaussNewtonIsSymmetricPsd) { gauss_newton_is_symmetric_psd<TypeParam>(); }
TYPED_TEST(OptimizerTest, AutoChunkIteratesEqualNone) { auto_chunk_iterates_equal_none<TypeParam>(); }
TYPED_TEST(OptimizerTest, EveryOptimizerResumesExactly) { every_optimizer_resumes_exactly<TypeParam>(); }
TYPED_TEST(OptimizerTest, MinibatchFitsAreReproducible) { minibatch_fits_are_reproducible<TypeParam>(); }
TYPED_TEST(OptimizerTest, ReusedBuffersGiveTheSameBits) { reused_buffers_give_the_same_bits<TypeParam>(); }
TYPED_TEST(OptimizerTest, KeptLossStackGivesTheSameIterates) { kept_loss_stack_gives_the_same_iterates<TypeParam>(); }

}  // namespace
