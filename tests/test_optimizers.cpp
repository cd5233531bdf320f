// The four optimizers on planted problems (docs/math.md), the gradient and the Gauss-Newton operator.
#include "frame_reference.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/memory_tracking.hpp"
#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/armijo_line_search.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"

namespace {

using namespace t3k_test;

struct Planted {
  std::vector<std::size_t> big_n, n, r;
  std::size_t order, n_probes;
};

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

/// Sum of squares of every entry of a View (on the host).
template <class View>
double square_sum(View const& v) {
  double sum = 0;
  for (double x : flat_host(v)) sum += x * x;
  return sum;
}

/// <J a, J b> over every probe, mode and order: J from tangent_probe_derivatives (checked against brute force in
/// test_jacobian), unweighted.
template <class Space, class Problem, class Frame, class V>
double jacobian_inner_product(Space const& space, Problem const& problem, Frame const& frame, V const& a, V const& b) {
  auto ja = t3k::tangent_probe_derivatives(space, frame, a, problem.ww, problem.pp, problem.order);
  auto jb = t3k::tangent_probe_derivatives(space, frame, b, problem.ww, problem.pp, problem.order);
  double sum = 0;
  for (std::size_t i = 0; i < ja.size(); ++i) {
    auto const ha = flat_host(ja[i]), hb = flat_host(jb[i]);
    for (std::size_t e = 0; e < ha.size(); ++e) sum += ha[e] * hb[e];
  }
  return sum;
}

// On gauged tangents, <u, GN v> = <J u, J v> (GN = P J^T J, P the gauge projection), chunked a block per pass over
// several blocks and in one pass; so GN is symmetric and positive semidefinite.
template <class C>
void gauss_newton_matches_jacobian_products() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto pc = gradient_case();
  std::size_t const w = 2 * block_of<C>() + 5;
  auto const chunk = t3k::ChunkSize::of(block_of<C>());
  ASSERT_EQ(chunk_passes<C>(chunk, w), 3u);
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 31);
  auto problem = t3k::make_planted_problem(space, truth, w, pc.order, 0.0, 32);
  auto frame = t3k::orthogonal_frame(space, t3k::perturb_t3(space, truth, 0.2, 33));
  for (std::uint64_t seed = 0; seed < 2; ++seed) {
    auto u = t3k::random_variation(space, frame, 1, 100 + seed);
    auto v = t3k::random_variation(space, frame, 1, 200 + seed);
    t3k::gauge_project_in_place(space, frame, u);
    t3k::gauge_project_in_place(space, frame, v);
    auto gu = t3k::gauss_newton_product(space, problem, frame, u, chunk);
    auto gv = t3k::gauss_newton_product(space, problem, frame, v, t3k::ChunkSize::none());
    double const juv = jacobian_inner_product(space, problem, frame, u, v);
    double const jvv = jacobian_inner_product(space, problem, frame, v, v);
    double const juu = jacobian_inner_product(space, problem, frame, u, u);
    // Sums over W probes in different orders: a few hundred epsilons of ||J u|| ||J v||.
    double const tol = std::max(1e-12, eps_times<S>(500)) * std::sqrt(juu * jvv);
    EXPECT_NEAR(double(t3k::variation_dot(space, u, gv)), juv, tol) << "seed " << seed;
    EXPECT_NEAR(double(t3k::variation_dot(space, gu, v)), juv, tol) << "seed " << seed << ", chunked";
    EXPECT_NEAR(double(t3k::variation_dot(space, v, gv)), jvv, tol) << "seed " << seed;
    EXPECT_NEAR(double(t3k::variation_dot(space, u, gu)), juu, tol) << "seed " << seed << ", chunked";
  }
}

/// A copy of `v` with core c scaled by factors[c] (cores in the order V~_0, H~_0, V~_1, H~_1, ...), on the host.
template <class Space, class V>
V corewise_scaled(Space const& space, V const& v, std::vector<double> const& factors) {
  auto out = t3k::copy_variation(space, v);
  for (std::size_t c = 0; c < factors.size(); ++c) {
    auto scale = [&](auto const& core) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, core);
      for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] *= typename V::scalar_type(factors[c]);
      Kokkos::deep_copy(core, h);
    };
    if (c % 2 == 0)
      scale(out.tucker[c / 2]);
    else
      scale(out.tt[c / 2]);
  }
  return out;
}

/// Squared norms and entry counts of a variation's cores, in corewise_scaled's order.
template <class V>
void core_squares(V const& v, std::vector<double>& squares, std::vector<double>& sizes) {
  squares.clear();
  sizes.clear();
  for (std::size_t i = 0; i < v.tucker.size(); ++i) {
    squares.push_back(square_sum(v.tucker[i]));
    sizes.push_back(double(v.tucker[i].span()));
    squares.push_back(square_sum(v.tt[i]));
    sizes.push_back(double(v.tt[i].span()));
  }
}

template <class C>
double step_tolerance() {
  // Two computations of the same step from the same gradient, in different orders: rounding of the sums and of
  // the retraction's SVDs (a few thousand epsilons in float, where the SVDs dominate).
  return std::max(1e-10, eps_times<typename C::scalar_type>(4000));
}

// One gradient descent iteration is the Armijo backtracking search from the Cauchy step ||g||^2 / ||J g||^2,
// recomputed here from the public gradient, J and the loss.
template <class C>
void gradient_descent_takes_the_armijo_cauchy_step() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto pc = gradient_case();
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 51);
  auto problem = t3k::make_planted_problem(space, truth, 60, pc.order, 0.0, 52);
  auto x0 = t3k::perturb_t3(space, truth, 0.1, 53);
  t3k::GradientDescentOptions o;
  o.common.max_iterations = 1;
  o.common.tol_gradient = 0;
  auto fit = t3k::gradient_descent(space, problem, x0, o);

  auto frame = t3k::orthogonal_frame(space, x0);
  auto eval = t3k::evaluate_loss(space, problem, x0);
  auto g = t3k::riemannian_gradient(space, problem, frame, eval, t3k::ChunkSize::none());
  std::vector<double> squares, sizes;
  core_squares(g, squares, sizes);
  double gg = 0;
  for (double q : squares) gg += q;
  double alpha = gg / jacobian_inner_product(space, problem, frame, g, g);
  bool accepted = false;
  double loss = 0;
  t3k::TuckerTensorTrain<S, typename C::memory_space> x1;
  for (std::size_t b = 0; b <= o.max_backtracks && !accepted; ++b) {
    x1 = t3k::retract(space, frame, corewise_scaled(space, g, std::vector<double>(squares.size(), -alpha)));
    loss = t3k::evaluate_loss(space, problem, x1).loss;
    accepted = loss <= eval.loss - o.armijo_c1 * alpha * gg;
    if (!accepted) alpha *= 0.5;
  }
  ASSERT_TRUE(accepted);
  ASSERT_EQ(fit.history.size(), 2u) << fit.reason;
  double const tol = step_tolerance<C>();
  EXPECT_NEAR(fit.history[1].step, alpha * std::sqrt(gg), tol * alpha * std::sqrt(gg));
  EXPECT_NEAR(fit.history[1].loss, loss, tol * eval.loss);
  EXPECT_LT(relative_dense_error(fit.x, x1), tol);
}

// Adam's first two steps recomputed from the public gradient: moments m <- b1 m + (1-b1) g and per-core
// v_c <- b2 v_c + (1-b2) ||g_c||^2 / size_c, bias corrections 1 - b^t, delta_c = -alpha m^_c / (sqrt(v^_c) + eps),
// alpha = alpha_rel ||X0||_F / sqrt(entries). Betas away from their defaults so that a wrong correction shows; the
// second step starts from the first moment the checkpoint holds (transported to the new point).
template <class C>
void adam_steps_match_moments_and_bias_correction() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  auto pc = gradient_case();
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 61);
  auto problem = t3k::make_planted_problem(space, truth, 60, pc.order, 0.0, 62);
  auto x0 = t3k::perturb_t3(space, truth, 0.1, 63);
  t3k::AdamOptions o;
  o.common.max_iterations = 2;
  o.common.tol_gradient = 0;
  o.beta1 = 0.6;
  o.beta2 = 0.8;
  o.alpha_rel = 2e-2;
  std::vector<t3k::OptimizerCheckpoint<S, Mem>> saved;
  t3k::CheckpointControl<S, Mem> checkpoints;
  checkpoints.every = 1;
  checkpoints.write = [&](t3k::OptimizerCheckpoint<S, Mem> const& c) { saved.push_back(c); };
  auto fit = t3k::adam(space, problem, x0, o, checkpoints);
  ASSERT_EQ(fit.history.size(), 3u) << fit.reason;
  ASSERT_EQ(saved.size(), 2u);
  double const tol = step_tolerance<C>();

  double x0_norm = 0;
  for (double e : dense_tensor(host_t3(x0))) x0_norm += e * e;
  x0_norm = std::sqrt(x0_norm);
  auto frame = t3k::orthogonal_frame(space, x0);
  auto g1 =
      t3k::riemannian_gradient(space, problem, frame, t3k::evaluate_loss(space, problem, x0), t3k::ChunkSize::none());
  std::vector<double> sq1, sizes;
  core_squares(g1, sq1, sizes);
  double entries = 0;
  for (double n : sizes) entries += n;
  double const alpha = o.alpha_rel * x0_norm / std::sqrt(entries);
  std::size_t const cores = sizes.size();
  // Step 1: m = (1-b1) g, v_c = (1-b2) ||g_c||^2 / size_c, corrections 1-b1 and 1-b2.
  std::vector<double> v1(cores), f1(cores);
  double step1 = 0;
  for (std::size_t c = 0; c < cores; ++c) {
    v1[c] = (1 - o.beta2) * sq1[c] / sizes[c];
    f1[c] = -alpha * (1 - o.beta1) / (1 - o.beta1) / (std::sqrt(v1[c] / (1 - o.beta2)) + o.epsilon);
    step1 += f1[c] * f1[c] * sq1[c];
    EXPECT_NEAR(saved[0].second_moments[c], v1[c], tol * v1[c]) << "core " << c;
  }
  EXPECT_NEAR(fit.history[1].step, std::sqrt(step1), tol * std::sqrt(step1));
  auto x1 = t3k::retract(space, frame, corewise_scaled(space, g1, f1));
  EXPECT_LT(relative_dense_error(saved[0].x, x1), tol);

  // Step 2 at the checkpointed point, from its transported first moment.
  auto frame1 = t3k::orthogonal_frame(space, saved[0].x);
  auto g2 = t3k::riemannian_gradient(space, problem, frame1, t3k::evaluate_loss(space, problem, saved[0].x),
                                     t3k::ChunkSize::none());
  std::vector<double> sq2;
  core_squares(g2, sq2, sizes);
  double const c1 = 1 - o.beta1 * o.beta1, c2 = 1 - o.beta2 * o.beta2;
  double step2 = 0;
  for (std::size_t c = 0; c < cores; ++c) {
    double const v2 = o.beta2 * v1[c] + (1 - o.beta2) * sq2[c] / sizes[c];
    EXPECT_NEAR(saved[1].second_moments[c], v2, tol * v2) << "core " << c;
    auto const m = c % 2 == 0 ? flat_host(saved[0].moment.tucker[c / 2]) : flat_host(saved[0].moment.tt[c / 2]);
    auto const g = c % 2 == 0 ? flat_host(g2.tucker[c / 2]) : flat_host(g2.tt[c / 2]);
    ASSERT_EQ(m.size(), g.size());
    double const factor = -alpha / c1 / (std::sqrt(v2 / c2) + o.epsilon);
    for (std::size_t e = 0; e < m.size(); ++e) {
      double const delta = factor * (o.beta1 * m[e] + (1 - o.beta1) * g[e]);
      step2 += delta * delta;
    }
  }
  EXPECT_NEAR(fit.history[2].step, std::sqrt(step2), tol * std::sqrt(step2));
}

// mc_sgd with one probe of weight 1 and the others 0: a step's minibatch gradient is nonzero exactly when its batch
// holds that probe, so epochs without replacement (W / B = 3 steps each) have exactly one such step each, and there
// the gradient is the full gradient scaled by W / |batch| (the point has not moved before it) and the step goes to
// R_X(-alpha (W / |batch|) g).
template <class C>
void mc_sgd_scales_the_batch_gradient_and_draws_epochs_without_replacement() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  auto pc = gradient_case();
  std::size_t const w = 12, batch = 4, epochs = 3, picked = 7;
  auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 71);
  auto problem = t3k::make_planted_problem(space, truth, w, pc.order, 0.0, 72);
  Kokkos::View<S*, Mem> weights("weights", w);
  Kokkos::deep_copy(Kokkos::subview(weights, picked), S(1));
  problem.weights = weights;
  auto x0 = t3k::perturb_t3(space, truth, 0.1, 73);
  t3k::McSgdOptions o;
  o.batch_size = batch;
  o.step = 0.05;
  o.eval_every = 1;
  o.common.max_iterations = epochs * (w / batch);
  o.common.tol_gradient = 0;
  auto fit = t3k::mc_sgd(space, problem, x0, o);
  ASSERT_EQ(fit.history.size(), o.common.max_iterations + 1) << fit.reason;

  auto frame = t3k::orthogonal_frame(space, x0);
  auto eval = t3k::evaluate_loss(space, problem, x0);
  auto g = t3k::riemannian_gradient(space, problem, frame, eval, t3k::ChunkSize::none());
  std::vector<double> squares, sizes;
  core_squares(g, squares, sizes);
  double gg = 0;
  for (double q : squares) gg += q;
  double const scale = double(w) / double(batch);
  double const tol = step_tolerance<C>();
  std::size_t first = 0;
  for (std::size_t epoch = 0; epoch < epochs; ++epoch) {
    std::size_t hits = 0;
    for (std::size_t t = 1 + epoch * (w / batch); t <= (epoch + 1) * (w / batch); ++t) {
      if (fit.history[t].gradient_norm != 0) {
        ++hits;
        if (first == 0) first = t;
      } else {
        EXPECT_EQ(fit.history[t].minibatch_loss, 0.0) << "step " << t;
      }
    }
    EXPECT_EQ(hits, 1u) << "epoch " << epoch;
  }
  ASSERT_GT(first, 0u);
  EXPECT_NEAR(fit.history[first].gradient_norm, scale * std::sqrt(gg), tol * scale * std::sqrt(gg));
  EXPECT_NEAR(fit.history[first].minibatch_loss, scale * eval.loss, tol * scale * eval.loss);
  auto x1 = t3k::retract(space, frame, corewise_scaled(space, g, std::vector<double>(squares.size(), -o.step * scale)));
  double const loss1 = t3k::evaluate_loss(space, problem, x1).loss;
  EXPECT_NEAR(fit.history[first].loss, loss1, tol * eval.loss);
  EXPECT_NEAR(fit.history[first].step, o.step * scale * std::sqrt(gg), tol * o.step * scale * std::sqrt(gg));
}

/// Levenberg-Marquardt's damping after a gain ratio: divided by 3 above 0.75, doubled below 0.25, kept between.
double damping_after(double lambda, double gain) {
  if (gain > 0.75) return lambda / 3;
  if (gain < 0.25) return lambda * 2;
  return lambda;
}

/// A variation stack's entries, one vector per stack entry (cores V~_0, H~_0, V~_1, H~_1, ...), and back.
template <class V>
std::vector<std::vector<double>> variation_entries(V const& v) {
  std::vector<std::vector<double>> out(v.n_stack());
  auto append = [&](auto const& core) {
    auto const h = flat_host(core);
    std::size_t const per = h.size() / out.size();
    for (std::size_t t = 0; t < out.size(); ++t)
      out[t].insert(out[t].end(), h.begin() + t * per, h.begin() + (t + 1) * per);
  };
  for (std::size_t i = 0; i < v.tucker.size(); ++i) {
    append(v.tucker[i]);
    append(v.tt[i]);
  }
  return out;
}
template <class Space, class Frame>
auto variation_of(Space const& space, Frame const& frame, std::vector<std::vector<double>> const& entries) {
  using S = typename Frame::scalar_type;
  auto v = t3k::zero_variation<S>(space, frame, entries.size());
  std::size_t at = 0;  // offset of the core in each entry's vector
  auto fill = [&](auto const& core) {
    auto h = Kokkos::create_mirror_view(core);
    std::size_t const per = h.span() / entries.size();
    for (std::size_t t = 0; t < entries.size(); ++t)
      for (std::size_t e = 0; e < per; ++e) h.data()[t * per + e] = S(entries[t][at + e]);
    at += per;
    Kokkos::deep_copy(core, h);
  };
  for (std::size_t i = 0; i < v.tucker.size(); ++i) {
    fill(v.tucker[i]);
    fill(v.tt[i]);
  }
  return v;
}

/// The Gauss-Newton matrix P J^T J of a frame on the host, gn[k] = P J^T J e_k, from unit variations:
/// J through tangent_probe_derivatives and P through gauge_project_in_place, not the Gauss-Newton product the
/// optimizer uses.
template <class Space, class Problem, class Frame>
std::vector<std::vector<double>> dense_gauss_newton(Space const& space, Problem const& problem, Frame const& frame) {
  using S = typename Frame::scalar_type;
  std::size_t const n = variation_entries(t3k::zero_variation<S>(space, frame, 1))[0].size();
  std::vector<std::vector<double>> jac(n);  // jac[k] = J e_k, all jets flattened
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<double> unit(n, 0.0);
    unit[k] = 1;
    // One unit variation per call: the sweep over a stack of all of them is slower on Serial than n calls.
    auto const jets = t3k::tangent_probe_derivatives(space, frame, variation_of(space, frame, {unit}), problem.ww,
                                                     problem.pp, problem.order);
    for (auto const& j : jets) {
      auto const h = flat_host(j);
      jac[k].insert(jac[k].end(), h.begin(), h.end());
    }
  }
  std::vector<std::vector<double>> jtj(n, std::vector<double>(n, 0.0));  // jtj[k] = J^T J e_k
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t l = 0; l < n; ++l)
      for (std::size_t e = 0; e < jac[k].size(); ++e) jtj[k][l] += jac[l][e] * jac[k][e];
  auto v = variation_of(space, frame, jtj);
  t3k::gauge_project_in_place(space, frame, v);
  return variation_entries(v);
}

double dot(std::vector<double> const& a, std::vector<double> const& b) {
  double sum = 0;
  for (std::size_t e = 0; e < a.size(); ++e) sum += a[e] * b[e];
  return sum;
}

/// One Levenberg-Marquardt newton_cg iteration recomputed on the host from x: the damping (lambda, or when
/// `lambda_rel` is given lambda_rel <g, GN g> / ||g||^2), `cg_steps` conjugate gradient steps on
/// (P J^T J + lambda I) delta = -g from 0 in double, the model decrease -<g, delta> - 0.5 <delta, (P J^T J + lambda I)
/// delta>, the Armijo scale of the step, the next loss and the gain ratio.
struct LmStep {
  double lambda = 0, alpha = 0, delta_norm = 0, loss0 = 0, loss1 = 0, predicted = 0, gain = 0;
};
template <class Space, class Problem, class X>
LmStep lm_step(Space const& space, Problem const& problem, X const& x, double lambda, double lambda_rel,
               std::size_t cg_steps, t3k::NewtonCgOptions const& o) {
  LmStep st;
  auto frame = t3k::orthogonal_frame(space, x);
  auto eval = t3k::evaluate_loss(space, problem, x);
  auto const g = variation_entries(t3k::riemannian_gradient(space, problem, frame, eval, t3k::ChunkSize::none()))[0];
  auto const gn = dense_gauss_newton(space, problem, frame);
  std::size_t const n = g.size();
  if (lambda_rel > 0) {
    double ggn = 0;
    for (std::size_t k = 0; k < n; ++k) ggn += g[k] * dot(gn[k], g);
    lambda = lambda_rel * ggn / dot(g, g);
  }
  st.lambda = lambda;
  auto apply = [&](std::vector<double> const& v) {  // (P J^T J + lambda I) v
    std::vector<double> out(n, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t l = 0; l < n; ++l) out[l] += gn[k][l] * v[k];
      out[k] += lambda * v[k];
    }
    return out;
  };
  std::vector<double> delta(n, 0.0), res(n), dir(n);
  for (std::size_t k = 0; k < n; ++k) res[k] = dir[k] = -g[k];
  double rs = dot(res, res);
  for (std::size_t j = 0; j < cg_steps; ++j) {
    auto const ad = apply(dir);
    double const a = rs / dot(dir, ad);
    for (std::size_t k = 0; k < n; ++k) {
      delta[k] += a * dir[k];
      res[k] -= a * ad[k];
    }
    double const rs_new = dot(res, res);
    for (std::size_t k = 0; k < n; ++k) dir[k] = res[k] + rs_new / rs * dir[k];
    rs = rs_new;
  }
  double const slope = dot(g, delta);
  st.loss0 = eval.loss;
  st.predicted = -slope - 0.5 * dot(delta, apply(delta));
  st.delta_norm = std::sqrt(dot(delta, delta));
  st.alpha = 1;
  bool accepted = false;
  for (std::size_t b = 0; b <= o.max_backtracks && !accepted; ++b) {
    std::vector<double> step(n);
    for (std::size_t k = 0; k < n; ++k) step[k] = st.alpha * delta[k];
    st.loss1 = t3k::evaluate_loss(space, problem, t3k::retract(space, frame, variation_of(space, frame, {step}))).loss;
    accepted = st.loss1 <= st.loss0 + o.armijo_c1 * st.alpha * slope;
    if (!accepted) st.alpha *= 0.5;
  }
  EXPECT_TRUE(accepted);
  st.gain = (st.loss0 - st.loss1) / st.predicted;
  return st;
}

// Levenberg-Marquardt damping: lambda_0 = lambda_rel <g, GN g> / ||g||^2, then after each step the gain ratio
// (actual / model decrease) divides it by 3 above 0.75, doubles it below 0.25 and keeps it between. Two iterations
// of a fixed number of CG steps (cg_rtol 0) are recomputed on the host from the checkpointed points and compared with
// the checkpointed lambda, the recorded losses and the step. Cases: one CG step lightly and heavily damped (gains near
// 1 and 2: a damping term left out of the model decrease moves the latter below 0.75) and four CG steps from a start
// unrelated to the planted T3. Gauss-Newton models these problems well, so the gain stays above 0.75 throughout.
template <class C>
void newton_cg_damping_follows_the_gain_ratio() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  auto pc = gradient_case();
  struct Case {
    double perturbation, lambda_rel;  // perturbation < 0: an unrelated random start
    std::size_t cg_steps;
  };
  std::vector<Case> cases{{0.05, 1e-3, 1}, {0.05, 30.0, 1}, {-1, 1e-3, 4}};
  for (auto const& cs : cases) {
    auto truth = t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 81);
    auto problem = t3k::make_planted_problem(space, truth, 60, pc.order, 0.0, 82);
    auto x0 = cs.perturbation < 0 ? t3k::random_t3<S>(space, pc.big_n, pc.n, pc.r, 84)
                                  : t3k::perturb_t3(space, truth, cs.perturbation, 83);
    t3k::NewtonCgOptions o;
    o.common.max_iterations = 2;
    o.common.tol_gradient = 0;
    o.levenberg_marquardt = true;
    o.lambda_rel = cs.lambda_rel;
    o.cg_rtol = 0;
    o.cg_max_iterations = cs.cg_steps;
    std::vector<t3k::OptimizerCheckpoint<S, Mem>> saved;
    t3k::CheckpointControl<S, Mem> checkpoints;
    checkpoints.every = 1;
    checkpoints.write = [&](t3k::OptimizerCheckpoint<S, Mem> const& c) { saved.push_back(c); };
    auto fit = t3k::newton_cg(space, problem, x0, o, checkpoints);
    std::string const what = "perturbation " + std::to_string(cs.perturbation) + ", lambda_rel " +
                             std::to_string(cs.lambda_rel) + ", " + std::to_string(cs.cg_steps) + " CG steps";
    ASSERT_EQ(fit.history.size(), 3u) << what << ": " << fit.reason;
    ASSERT_EQ(saved.size(), 2u) << what;
    double const tol = step_tolerance<C>();

    auto const s1 = lm_step(space, problem, x0, 0.0, cs.lambda_rel, cs.cg_steps, o);
    double const lambda1 = damping_after(s1.lambda, s1.gain);
    EXPECT_NEAR(fit.history[1].loss, s1.loss1, tol * s1.loss0) << what;
    EXPECT_NEAR(fit.history[1].step, s1.alpha * s1.delta_norm, tol * s1.delta_norm) << what;
    EXPECT_NEAR(saved[0].scalars.at("lambda"), lambda1, tol * lambda1) << what << ", gain " << s1.gain;
    auto const s2 = lm_step(space, problem, saved[0].x, lambda1, 0.0, cs.cg_steps, o);
    double const lambda2 = damping_after(lambda1, s2.gain);
    EXPECT_NEAR(fit.history[2].loss, s2.loss1, tol * s2.loss0) << what;
    EXPECT_NEAR(saved[1].scalars.at("lambda"), lambda2, tol * lambda2) << what << ", gain " << s2.gain;
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
    double const a = expected.history[k].gradient_norm, b = got.history[k].gradient_norm;
    EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << name << " iteration " << k << ": " << a << " " << b;
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

// A run that stops at max_iterations between two periodic checkpoints writes one more at its last iteration; a run
// resumed from it with a larger max_iterations is the uninterrupted longer run bit for bit, its history continues
// the checkpoint's (no iteration repeated) and its elapsed time goes on from the checkpoint's.
template <class C>
void stopped_run_checkpoints_its_last_iteration() {
  using S = typename C::scalar_type;
  using M = typename C::memory_space;
  typename C::execution_space space;
  auto const fit = small_fit<C>(space, 71);
  auto run = [&](std::size_t max_iterations, t3k::CheckpointControl<S, M> const& c) {
    t3k::GradientDescentOptions o;  // slow enough not to converge within 9 iterations
    o.common.max_iterations = max_iterations;
    o.common.tol_gradient = 0;
    return t3k::gradient_descent(space, fit.problem, fit.x0, o, c);
  };
  std::vector<t3k::OptimizerCheckpoint<S, M>> saved;
  t3k::CheckpointControl<S, M> control;
  control.every = 4;
  control.write = [&](t3k::OptimizerCheckpoint<S, M> const& c) { saved.push_back(c); };
  auto const short_run = run(6, control);
  ASSERT_EQ(short_run.history.size(), 7u) << short_run.reason;
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[0].iteration, 4u);
  EXPECT_EQ(saved[1].iteration, 6u) << "the stop is checkpointed";
  EXPECT_EQ(saved[1].history.size(), 7u);
  auto const long_run = run(9, {});
  t3k::CheckpointControl<S, M> resume;
  resume.resume_from = &saved[1];
  auto const resumed = run(9, resume);
  expect_same_fit(long_run, resumed, "gradient_descent resumed at its stop");
  for (std::size_t k = 0; k < resumed.history.size(); ++k) EXPECT_EQ(resumed.history[k].iteration, k);
  for (std::size_t k = 1; k < resumed.history.size(); ++k) {
    EXPECT_GE(resumed.history[k].elapsed_seconds, resumed.history[k - 1].elapsed_seconds) << "iteration " << k;
  }
}

// stop_when ends each optimizer where it answers true, at iteration 0 too: the fit equals a run told to stop
// there by max_iterations bit for bit (history and point), says why, and checkpoints the iteration it stopped at.
template <class C>
void stop_when_ends_every_optimizer_where_asked() {
  using S = typename C::scalar_type;
  using M = typename C::memory_space;
  typename C::execution_space space;
  auto const fit = small_fit<C>(space, 91);
  auto check = [&](auto options, auto&& run, char const* name) {
    options.common.tol_gradient = 0;
    for (std::size_t at : {std::size_t(0), std::size_t(3)}) {
      auto asked = options;
      asked.common.max_iterations = 6;
      std::size_t asks = 0;
      asked.common.stop_when = [&](t3k::IterationRecord const& rec) {
        ++asks;
        return rec.iteration == at;
      };
      std::vector<t3k::OptimizerCheckpoint<S, M>> saved;
      t3k::CheckpointControl<S, M> control;
      control.every = 100;
      control.write = [&](t3k::OptimizerCheckpoint<S, M> const& c) { saved.push_back(c); };
      auto const stopped = run(asked, control);
      auto reference = options;
      reference.common.max_iterations = at;
      auto const expected = run(reference, t3k::CheckpointControl<S, M>{});
      expect_same_fit(expected, stopped, name);
      EXPECT_EQ(stopped.reason, t3k::stop_request_reason) << name << " at " << at;
      EXPECT_FALSE(stopped.converged) << name;
      EXPECT_EQ(asks, at + 1) << name << ": asked once per record";
      if (at > 0) {
        ASSERT_EQ(saved.size(), 1u) << name;
        EXPECT_EQ(saved[0].iteration, at) << name;
      }
    }
  };
  check(
      t3k::NewtonCgOptions{},
      [&](auto const& o, auto const& c) { return t3k::newton_cg(space, fit.problem, fit.x0, o, c); }, "newton_cg");
  check(
      t3k::GradientDescentOptions{},
      [&](auto const& o, auto const& c) { return t3k::gradient_descent(space, fit.problem, fit.x0, o, c); },
      "gradient_descent");
  t3k::McSgdOptions sgd;
  sgd.batch_size = 50;
  sgd.eval_every = 1;  // the full loss at every iteration, as at the last one of the reference
  check(
      sgd, [&](auto const& o, auto const& c) { return t3k::mc_sgd(space, fit.problem, fit.x0, o, c); }, "mc_sgd");
  t3k::AdamOptions adam;
  adam.batch_size = 50;
  check(
      adam, [&](auto const& o, auto const& c) { return t3k::adam(space, fit.problem, fit.x0, o, c); }, "adam");
}

// mc_sgd and adam compute no gradient at x0: iteration 0 reports its norm as NaN (not computed), not 0; the
// iterations after it report the minibatch gradient's norm. newton_cg computes it at x0.
template <class C>
void minibatch_optimizers_report_no_gradient_norm_at_x0() {
  typename C::execution_space space;
  auto const fit = small_fit<C>(space, 81);
  t3k::McSgdOptions sgd;
  sgd.common.max_iterations = 2;
  sgd.batch_size = 40;
  t3k::AdamOptions adam;
  adam.common.max_iterations = 2;
  adam.batch_size = 40;
  t3k::NewtonCgOptions newton;
  newton.common.max_iterations = 1;
  auto const a = t3k::mc_sgd(space, fit.problem, fit.x0, sgd);
  auto const b = t3k::adam(space, fit.problem, fit.x0, adam);
  auto const c = t3k::newton_cg(space, fit.problem, fit.x0, newton);
  for (auto const* h : {&a.history, &b.history}) {
    ASSERT_GE(h->size(), 2u);
    EXPECT_TRUE(std::isnan((*h)[0].gradient_norm)) << (*h)[0].gradient_norm;
    EXPECT_GT((*h)[1].gradient_norm, 0);
  }
  EXPECT_GT(c.history.at(0).gradient_norm, 0);
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

// An x0 whose Tucker rank 1 (9) exceeds both N_1 = 7 and what its bonds allow (r_1 r_2 = 6) is clipped once, to 6:
// every optimizer starts from (and with max_iterations 0 returns) that T3, the same tensor, and its note names 6.
template <class C>
void infeasible_ranks_are_clipped_once_to_the_feasible_value() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::vector<std::size_t> const big_n{4, 7, 3}, n{2, 9, 3}, r{1, 2, 3, 1};
  std::vector<std::size_t> const feasible_n{2, 6, 3};  // n_1 <= min(N_1, r_1 r_2) = min(7, 2 * 3)
  auto truth = t3k::random_t3<S>(space, big_n, feasible_n, r, 31);
  auto problem = t3k::make_planted_problem(space, truth, 60, 1, 0.0, 32);
  auto x0 = t3k::random_t3<S>(space, big_n, n, r, 33);
  auto check = [&](auto const& fit, std::size_t iterations, char const* name) {
    EXPECT_EQ(fit.x.tucker_ranks(), feasible_n) << name;
    EXPECT_EQ(fit.x.tt_ranks(), r) << name;
    EXPECT_EQ(fit.notes, std::vector<std::string>{"Tucker rank 1 clipped from 9 to 6"}) << name;
    // The clipping drops only singular values that are zero: x0's tensor, up to rounding of the SVDs.
    if (iterations == 0) {
      EXPECT_LT(relative_dense_error(fit.x, x0), 1e-12) << name;
    }
  };
  for (std::size_t iterations : {0, 2}) {
    t3k::GradientDescentOptions gd;
    gd.common.max_iterations = iterations;
    check(t3k::gradient_descent(space, problem, x0, gd), iterations, "gradient_descent");
    t3k::NewtonCgOptions cg;
    cg.common.max_iterations = iterations;
    check(t3k::newton_cg(space, problem, x0, cg), iterations, "newton_cg");
    t3k::McSgdOptions sgd;
    sgd.common.max_iterations = iterations;
    sgd.batch_size = 20;
    check(t3k::mc_sgd(space, problem, x0, sgd), iterations, "mc_sgd");
    t3k::AdamOptions adam;
    adam.common.max_iterations = iterations;
    adam.batch_size = 20;
    check(t3k::adam(space, problem, x0, adam), iterations, "adam");
  }
}

// A planted problem fitted with every tolerance off ends only when the line search can no longer verify a decrease:
// at rounding level, where that is convergence with its own reason (docs/math.md, stopping rules). The dense
// comparison with the planted tensor is the independent check that the fit did reach rounding level.
template <class C>
void fit_to_rounding_level_converges() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto truth = t3k::random_t3<S>(space, {4, 5, 3, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 21);
  auto problem = t3k::make_planted_problem(space, truth, 60, 1, 0.0, 22);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 200;
  o.common.tol_gradient = 0;
  o.cg_max_iterations = 200;
  auto fit = t3k::newton_cg(space, problem, t3k::perturb_t3(space, truth, 1e-2, 23), o);
  EXPECT_EQ(fit.reason, t3k::line_search_rounding_reason);
  EXPECT_TRUE(fit.converged) << fit.reason;
  EXPECT_LT(fit.history.size(), o.common.max_iterations + 1);
  // 1e-10: a T3 at rounding level of its loss is within a few thousand epsilon of the truth it interpolates.
  EXPECT_LT(relative_dense_error(fit.x, truth), 1e-10) << fit.reason;
  // gradient_descent started where newton_cg stopped: its first line search has only rounding to find, although
  // the step it promises (about the loss itself, 1e-31 here) is far above eps times the loss.
  t3k::GradientDescentOptions g;
  g.common.tol_gradient = 0;
  auto at_rounding = t3k::gradient_descent(space, problem, fit.x, g);
  EXPECT_EQ(at_rounding.reason, t3k::line_search_rounding_reason);
  EXPECT_TRUE(at_rounding.converged);
}

// A line search that fails although its first step promises a decrease far above rounding is a failure: a trial
// step a million times the curvature's, and no halvings, from a start far from the truth.
template <class C>
void failed_line_search_above_rounding_is_no_convergence() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto truth = t3k::random_t3<S>(space, {4, 5, 3, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 21);
  auto problem = t3k::make_planted_problem(space, truth, 60, 1, 0.0, 22);
  t3k::GradientDescentOptions g;
  g.initial_step = 1e6;
  g.max_backtracks = 0;
  auto fit = t3k::gradient_descent(space, problem, t3k::perturb_t3(space, truth, 0.5, 24), g);
  ASSERT_EQ(fit.history.size(), 1u) << fit.reason;
  EXPECT_EQ(fit.reason, t3k::line_search_failure_reason);
  EXPECT_FALSE(fit.converged);
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
TEST(OptimizerConvergence, FitToRoundingLevelConverges) { fit_to_rounding_level_converges<Default>(); }
TEST(OptimizerConvergence, FailedLineSearchAboveRoundingIsNoConvergence) {
  failed_line_search_above_rounding_is_no_convergence<Default>();
}
TYPED_TEST(OptimizerTest, GradientMatchesFiniteDifferences) { gradient_matches_finite_differences<TypeParam>(); }
TYPED_TEST(OptimizerTest, GaussNewtonMatchesJacobianProducts) { gauss_newton_matches_jacobian_products<TypeParam>(); }
TYPED_TEST(OptimizerTest, AutoChunkIteratesEqualNone) { auto_chunk_iterates_equal_none<TypeParam>(); }
TYPED_TEST(OptimizerTest, EveryOptimizerResumesExactly) { every_optimizer_resumes_exactly<TypeParam>(); }
TYPED_TEST(OptimizerTest, StoppedRunCheckpointsItsLastIteration) {
  stopped_run_checkpoints_its_last_iteration<TypeParam>();
}
TYPED_TEST(OptimizerTest, MinibatchOptimizersReportNoGradientNormAtX0) {
  minibatch_optimizers_report_no_gradient_norm_at_x0<TypeParam>();
}
TYPED_TEST(OptimizerTest, StopWhenEndsEveryOptimizerWhereAsked) {
  stop_when_ends_every_optimizer_where_asked<TypeParam>();
}
TYPED_TEST(OptimizerTest, MinibatchFitsAreReproducible) { minibatch_fits_are_reproducible<TypeParam>(); }
TYPED_TEST(OptimizerTest, ReusedBuffersGiveTheSameBits) { reused_buffers_give_the_same_bits<TypeParam>(); }
TYPED_TEST(OptimizerTest, KeptLossStackGivesTheSameIterates) { kept_loss_stack_gives_the_same_iterates<TypeParam>(); }
TYPED_TEST(OptimizerTest, InfeasibleRanksAreClippedOnceToTheFeasibleValue) {
  infeasible_ranks_are_clipped_once_to_the_feasible_value<TypeParam>();
}

// One step of each first-order optimizer against its formula, in double and float.
template <class C>
class OptimizerStepTest : public ::testing::Test {};
TYPED_TEST_SUITE(OptimizerStepTest, TestConfigs);

TYPED_TEST(OptimizerStepTest, GradientDescentTakesTheArmijoCauchyStep) {
  gradient_descent_takes_the_armijo_cauchy_step<TypeParam>();
}
TYPED_TEST(OptimizerStepTest, AdamStepsMatchMomentsAndBiasCorrection) {
  adam_steps_match_moments_and_bias_correction<TypeParam>();
}
TYPED_TEST(OptimizerStepTest, NewtonCgDampingFollowsTheGainRatio) {
  newton_cg_damping_follows_the_gain_ratio<TypeParam>();
}
TYPED_TEST(OptimizerStepTest, McSgdScalesTheBatchGradientAndDrawsEpochsWithoutReplacement) {
  mc_sgd_scales_the_batch_gradient_and_draws_epochs_without_replacement<TypeParam>();
}

}  // namespace
