// Rank continuation (exact embedding, growth to the planted ranks, resume across a growth step) and held-out
// validation (the split, the recorded residual, early stopping on it), on planted problems.
#include "frame_reference.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/random_t3.hpp"
#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>

namespace {

using namespace t3k_test;
using Default = t3k_test::Config<Kokkos::DefaultExecutionSpace, double>;
using S = double;
using M = Default::memory_space;
using T3 = t3k::TuckerTensorTrain<S, M>;

// The planted problem of the continuation tests: d = 4, Tucker ranks 2-3 and TT ranks 2-3, noise-free.
struct Case {
  T3 truth;
  t3k::FittingProblem<S, M> problem;
};
Case planted(Default::execution_space const& space, std::size_t n_probes, double noise) {
  auto truth = t3k::random_t3<S>(space, {4, 5, 4, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 5);
  return {truth, t3k::make_planted_problem(space, truth, n_probes, 1, noise, 6)};
}

t3k::RankContinuation up_to(std::size_t tucker, std::size_t tt) {
  t3k::RankContinuation c;
  c.max_tucker_ranks = {tucker, tucker, tucker, tucker};
  c.max_tt_ranks = {1, tt, tt, tt, 1};
  return c;
}

// Embedding at larger ranks keeps the tensor (dense comparison) and the loss (to rounding: the probe jets add exact
// zeros in a different blocking), and the new Tucker rows are orthonormal to the span of the old ones.
void embedding_keeps_the_tensor_and_the_loss() {
  Default::execution_space space;
  auto c = planted(space, 50, 0.0);
  auto x = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 2, 2, 1}, {1, 1, 2, 1, 1}, 9);
  auto y = t3k::embed_t3(space, x, {3, 3, 2, 2}, {1, 2, 3, 2, 1});
  EXPECT_EQ(y.tucker_ranks(), (std::vector<std::size_t>{3, 3, 2, 2}));
  EXPECT_EQ(y.tt_ranks(), (std::vector<std::size_t>{1, 2, 3, 2, 1}));
  EXPECT_EQ(relative_dense_error(y, x), 0.0);  // the added terms are exact zeros
  double const before = t3k::evaluate_loss(space, c.problem, x).loss;
  double const after = t3k::evaluate_loss(space, c.problem, y).loss;
  // 100 eps: sums of a few hundred products in another order.
  EXPECT_NEAR(after, before, 100 * std::numeric_limits<S>::epsilon() * before);
  auto h = host_t3(y);
  auto hx = host_t3(x);
  for (std::size_t i = 0; i < 4; ++i) {
    std::size_t const old_rank = x.tucker_ranks()[i], big_n = x.mode_shapes()[i];
    for (std::size_t a = old_rank; a < y.tucker_ranks()[i]; ++a) {
      double self = 0;
      for (std::size_t j = 0; j < big_n; ++j) self += h.u[i][a * big_n + j] * h.u[i][a * big_n + j];
      EXPECT_NEAR(self, 1.0, 1e-14);
      for (std::size_t b = 0; b < old_rank; ++b) {
        double dot = 0;
        for (std::size_t j = 0; j < big_n; ++j) dot += h.u[i][a * big_n + j] * hx.u[i][b * big_n + j];
        EXPECT_NEAR(dot, 0.0, 1e-13) << "mode " << i << " new row " << a << " old row " << b;
      }
    }
  }
  EXPECT_THROW(t3k::embed_t3(space, x, {1, 1, 2, 1}, {1, 1, 2, 1, 1}), t3k::InvalidArgument);  // smaller
  EXPECT_THROW(t3k::embed_t3(space, x, {3, 3, 2, 2}, {2, 2, 3, 2, 1}), t3k::InvalidArgument);  // boundary
}

// newton_cg from all ranks 1 grows to the planted ranks (not beyond), recovers the tensor, and the first record of
// every stage (the embedded point) has the loss of the last record before it.
void continuation_recovers_the_planted_ranks() {
  Default::execution_space space;
  auto c = planted(space, 150, 0.0);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 300;
  o.common.tol_relative_residual = 1e-11;
  o.cg_max_iterations = 100;
  o.common.continuation = up_to(4, 4);
  auto fit = t3k::newton_cg(space, c.problem, x0, o);
  EXPECT_EQ(fit.x.tucker_ranks(), c.truth.tucker_ranks()) << fit.reason;
  EXPECT_EQ(fit.x.tt_ranks(), c.truth.tt_ranks()) << fit.reason;
  EXPECT_LT(relative_dense_error(fit.x, c.truth), 1e-8) << fit.reason;
  std::size_t steps = 0;
  for (std::size_t k = 1; k < fit.history.size(); ++k) {
    auto const& a = fit.history[k - 1];
    auto const& b = fit.history[k];
    if (b.rank_stage == a.rank_stage) {
      EXPECT_EQ(b.iteration, a.iteration + 1);
      continue;
    }
    ++steps;
    EXPECT_EQ(b.rank_stage, a.rank_stage + 1);
    EXPECT_EQ(b.iteration, a.iteration);
    if (fit.notes.size() >= steps && fit.notes[steps - 1].rfind("rank step", 0) == 0) {
      // 1e-12: the loss of the same tensor evaluated with zero-padded cores (see the embedding test).
      EXPECT_NEAR(b.loss, a.loss, 1e-12 * a.loss) << "rank step " << steps;
    }
  }
  EXPECT_GE(steps, 2u);
}

// A planted tensor with a small but real singular value (mode 0's second Tucker row scaled by 1e-8, which leaves
// its second singular value at 2e-7 of the first): a continuation asked for 1e-10 keeps that rank with the automatic
// rank_rtol and reaches the tolerance, while a fixed 1e-6 (the former default) drops it once the growing is done and
// ends near 1e-7.
void tight_tolerance_keeps_small_real_ranks() {
  Default::execution_space space;
  auto truth = t3k::random_t3<S>(space, {4, 5, 4, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 5);
  auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, truth.tucker_core(0));
  for (std::size_t j = 0; j < u.extent(1); ++j) u(1, j) *= 1e-8;
  Kokkos::deep_copy(truth.tucker_core(0), u);
  auto problem = t3k::make_planted_problem(space, truth, 150, 1, 0.0, 6);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 300;
  o.common.tol_relative_residual = 1e-10;
  o.cg_max_iterations = 100;
  o.common.continuation = up_to(4, 4);
  auto fit = t3k::newton_cg(space, problem, x0, o);
  EXPECT_LE(fit.history.back().relative_residual, 1e-10) << fit.reason;
  EXPECT_TRUE(fit.converged) << fit.reason;
  EXPECT_GE(fit.x.tucker_ranks()[0], 2u) << fit.reason;  // the small value's rank is kept
  // The planted tensor itself, not only the probes: 1e-8 as in the recovery test above.
  EXPECT_LT(relative_dense_error(fit.x, truth), 1e-8) << fit.reason;
  o.common.continuation.rank_rtol = t3k::default_rank_rtol;
  auto capped = t3k::newton_cg(space, problem, x0, o);
  EXPECT_GT(capped.history.back().relative_residual, 1e-9) << "the problem does not tell the two thresholds apart";
}

// Each optimizer runs continuation stages: the ranks grow and the loss falls below the start's.
void every_optimizer_grows_ranks() {
  Default::execution_space space;
  auto c = planted(space, 120, 0.0);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  auto check = [&](auto const& fit, char const* name) {
    ASSERT_FALSE(fit.history.empty()) << name;
    EXPECT_GE(fit.history.back().rank_stage, 1u) << name;
    EXPECT_GT(fit.x.tt_ranks()[1], 1u) << name << ": " << fit.reason;
    EXPECT_LT(fit.history.back().loss, fit.history.front().loss) << name;
  };
  t3k::GradientDescentOptions gd;
  gd.common.max_iterations = 30;
  gd.common.continuation = up_to(3, 3);
  gd.common.continuation.stage_iterations = 10;
  check(t3k::gradient_descent(space, c.problem, x0, gd), "gradient_descent");
  t3k::McSgdOptions sgd;
  sgd.common.max_iterations = 30;
  sgd.batch_size = 40;
  sgd.eval_every = 5;
  sgd.common.continuation = up_to(3, 3);
  sgd.common.continuation.stage_iterations = 10;
  check(t3k::mc_sgd(space, c.problem, x0, sgd), "mc_sgd");
  t3k::AdamOptions adam;
  adam.common.max_iterations = 30;
  adam.common.continuation = up_to(3, 3);
  adam.common.continuation.stage_iterations = 10;
  check(t3k::adam(space, c.problem, x0, adam), "adam");
}

template <class Fit>
void expect_same_fit(Fit const& expected, Fit const& got, std::string const& name) {
  ASSERT_EQ(got.history.size(), expected.history.size()) << name;
  for (std::size_t k = 0; k < expected.history.size(); ++k) {
    EXPECT_EQ(got.history[k].loss, expected.history[k].loss) << name << " record " << k;
    EXPECT_EQ(got.history[k].rank_stage, expected.history[k].rank_stage) << name << " record " << k;
  }
  auto a = host_t3(expected.x), b = host_t3(got.x);
  EXPECT_EQ(a.g, b.g) << name;
  EXPECT_EQ(a.u, b.u) << name;
}

// Resuming from every checkpoint, among them the last iteration of a stage (marked done) and iterations of later
// stages, reproduces the uninterrupted continuation bit for bit (newton_cg and adam, whose state includes moments).
void continuation_resumes_exactly_across_rank_steps() {
  Default::execution_space space;
  auto c = planted(space, 80, 0.01);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  auto run_both = [&](auto options, char const* name) {
    using Options = decltype(options);
    auto fit = [&](t3k::CheckpointControl<S, M> const& control) {
      if constexpr (std::is_same<Options, t3k::NewtonCgOptions>::value) {
        return t3k::newton_cg(space, c.problem, x0, options, control);
      } else {
        return t3k::adam(space, c.problem, x0, options, control);
      }
    };
    std::vector<t3k::OptimizerCheckpoint<S, M>> saved;
    t3k::CheckpointControl<S, M> control;
    control.every = 1;
    control.write = [&](t3k::OptimizerCheckpoint<S, M> const& k) { saved.push_back(k); };
    auto const full = fit(control);
    ASSERT_GE(full.history.back().rank_stage, 1u) << name;
    std::size_t done = 0;
    for (auto const& k : saved) {
      done += k.scalars.at("continuation_stage_done") != 0;
      t3k::CheckpointControl<S, M> resume;
      resume.resume_from = &k;
      expect_same_fit(full, fit(resume), std::string(name) + " resumed at " + std::to_string(k.iteration));
    }
    EXPECT_GE(done, 1u) << name;
  };
  t3k::NewtonCgOptions nc;
  nc.common.max_iterations = 12;
  nc.common.continuation = up_to(3, 3);
  nc.common.continuation.stage_iterations = 4;
  run_both(nc, "newton_cg");
  t3k::AdamOptions adam;
  adam.common.max_iterations = 10;
  adam.common.continuation = up_to(3, 3);
  adam.common.continuation.stage_iterations = 4;
  run_both(adam, "adam");
}

// hold_out: a seeded choice of global probe indices, disjoint from the training probes and together all of them;
// the validation residual is recorded with every evaluation, and early stopping returns the best model on it.
void held_out_validation_is_recorded_and_stops_early() {
  Default::execution_space space;
  auto c = planted(space, 100, 0.3);
  auto train = t3k::hold_out(space, c.problem, 25, 3);
  ASSERT_TRUE(train.validation);
  EXPECT_EQ(train.n_probes(), 75u);
  EXPECT_EQ(train.validation->n_probes(), 25u);
  auto rows = [](auto const& p) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.ww[0]);
    std::set<std::vector<double>> out;
    for (std::size_t s = 0; s < h.extent(0); ++s) {
      std::vector<double> row;
      for (std::size_t j = 0; j < h.extent(1); ++j) row.push_back(h(s, j));
      out.insert(row);
    }
    return out;
  };
  auto all = rows(c.problem), a = rows(train), b = rows(*train.validation);
  std::set<std::vector<double>> both = a;
  both.insert(b.begin(), b.end());
  EXPECT_EQ(both, all);
  EXPECT_EQ(a.size() + b.size(), all.size());
  EXPECT_EQ(rows(*t3k::hold_out(space, c.problem, 25, 3).validation), b);  // same seed, same probes
  EXPECT_NE(rows(*t3k::hold_out(space, c.problem, 25, 4).validation), b);
  EXPECT_THROW(t3k::hold_out(space, c.problem, 100, 3), t3k::InvalidArgument);

  // Fitting 30% noise with twice the planted ranks overfits the 75 training probes: the validation residual
  // passes a minimum, early stopping ends the fit and returns the best model on validation.
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {3, 4, 3, 3}, {1, 3, 5, 3, 1}, 8);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 60;
  o.common.validation_patience = 3;
  auto fit = t3k::newton_cg(space, train, x0, o);
  double best = std::numeric_limits<double>::infinity();
  for (auto const& r : fit.history) {
    ASSERT_TRUE(std::isfinite(r.validation_relative_residual));
    best = std::min(best, r.validation_relative_residual);
  }
  EXPECT_EQ(fit.validation_relative_residual, best);
  double const direct = std::sqrt(t3k::evaluate_loss(space, *train.validation, fit.x).loss /
                                  t3k::zero_model_loss(space, *train.validation));
  EXPECT_NEAR(direct, best, 1e-12 * best);
  if (fit.reason == "validation stopped improving") {
    EXPECT_GT(fit.history.back().validation_relative_residual, best);
  }
}

// stop_when sees the continuation's records (global iterations, rank stages) and ends the whole continuation at
// the one it answers true for, after a rank step: the result is that stage's point, not a grown one.
void stop_request_ends_the_continuation() {
  Default::execution_space space;
  auto c = planted(space, 120, 0.0);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 40;
  o.common.continuation = up_to(3, 3);
  o.common.continuation.stage_iterations = 4;
  auto const full = t3k::newton_cg(space, c.problem, x0, o);
  std::size_t at = 0;  // the first record of stage 1, plus one iteration
  for (auto const& r : full.history) {
    if (r.rank_stage == 1) {
      at = r.iteration + 1;
      break;
    }
  }
  ASSERT_GT(at, 0u) << "the continuation made no rank step: " << full.reason;
  std::vector<t3k::IterationRecord> seen;
  o.common.stop_when = [&](t3k::IterationRecord const& r) {
    seen.push_back(r);
    return r.iteration == at;
  };
  auto const stopped = t3k::newton_cg(space, c.problem, x0, o);
  EXPECT_EQ(stopped.reason, t3k::stop_request_reason);
  ASSERT_FALSE(stopped.history.empty());
  EXPECT_EQ(stopped.history.back().iteration, at);
  EXPECT_EQ(stopped.history.back().rank_stage, 1u);
  ASSERT_EQ(seen.size(), stopped.history.size());
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].iteration, stopped.history[k].iteration) << k;
    EXPECT_EQ(seen[k].rank_stage, stopped.history[k].rank_stage) << k;
    EXPECT_EQ(seen[k].loss, full.history[k].loss) << "the same iterates as the full run, record " << k;
  }
  auto const stage1 =
      std::find_if(full.history.begin(), full.history.end(), [](auto const& r) { return r.rank_stage == 1; });
  std::vector<std::size_t> const grown = stopped.x.tt_ranks();
  EXPECT_GT(grown[1] + grown[2] + grown[3], 3u) << "the stage-1 point, at grown ranks";
  EXPECT_EQ(stopped.history.back().loss, (stage1 + 1)->loss);
}

// The edge-conditioning rule on given condition numbers: the candidates are the eligible edges at least tau times
// better conditioned than the worst edge at most the guard, best first; edges at their maximum rank or above the
// guard never grow (an edge above the guard is not the worst either); with no such edge every eligible edge grows.
void edge_selection_follows_the_condition_numbers() {
  using Edge = t3k::ContinuationEdge;
  auto edge = [](std::size_t index, std::size_t rank, std::size_t max_rank, double kappa) {
    return Edge{Edge::Kind::tucker, {index}, rank, max_rank, kappa};
  };
  double const inf = std::numeric_limits<double>::infinity();
  std::vector<Edge> const edges{edge(0, 2, 4, 50.0),
                                edge(1, 3, 4, 3.0),
                                edge(2, 2, 4, 1e9),
                                edge(3, 2, 2, 1.5),
                                Edge{Edge::Kind::tt_bond, {1}, 2, 4, 4.0},
                                Edge{Edge::Kind::tt_bond, {2}, 1, 4, inf}};
  auto const s = t3k::select_edges_by_conditioning(edges, 10.0, 1e6);
  EXPECT_EQ(s.worst_condition, 50.0);  // edge 2 (1e9) and the bond at kappa inf are above the guard
  EXPECT_EQ(s.worst_edge, 0u);
  EXPECT_FALSE(s.uniform);
  // 3 and 4 are <= 50 / 10; edge 3 (1.5) is at its maximum rank.
  EXPECT_EQ(s.candidates, (std::vector<std::size_t>{1, 4}));
  EXPECT_EQ(s.eligible, (std::vector<std::size_t>{0, 1, 4}));
  // A larger tau leaves no edge that much better: every eligible edge, best first.
  auto const all = t3k::select_edges_by_conditioning(edges, 20.0, 1e6);
  EXPECT_TRUE(all.uniform);
  EXPECT_EQ(all.candidates, (std::vector<std::size_t>{1, 4, 0}));
  // A guard above 1e9 makes edge 2 the worst, and every other eligible edge is 10 times better.
  auto const loose = t3k::select_edges_by_conditioning(edges, 10.0, 1e10);
  EXPECT_EQ(loose.worst_condition, 1e9);
  EXPECT_EQ(loose.candidates, (std::vector<std::size_t>{1, 4, 0}));
  // At rank 1 every kappa is 1: all grow.
  auto const start = t3k::select_edges_by_conditioning({edge(0, 1, 3, 1.0), edge(1, 1, 3, 1.0)}, 10.0, 1e6);
  EXPECT_TRUE(start.uniform);
  EXPECT_EQ(start.candidates.size(), 2u);
  // Nothing eligible: nothing grows.
  auto const none = t3k::select_edges_by_conditioning({edge(0, 2, 2, 1.0), edge(1, 2, 4, 1e7)}, 10.0, 1e6);
  EXPECT_TRUE(none.candidates.empty());
  EXPECT_FALSE(none.uniform);
  // The spectrum's condition number: sigma_1 / sigma_rank, infinite at a zero or missing value.
  EXPECT_EQ(t3k::retained_condition_number(std::vector<double>{8, 4, 2, 0}, 3), 4.0);
  EXPECT_EQ(t3k::retained_condition_number(std::vector<double>{8, 4, 2, 0}, 4), inf);
  EXPECT_EQ(t3k::retained_condition_number(std::vector<double>{8, 4}, 3), inf);
  // The automatic guard for doubles is 1 / default_rank_rtol (1e6 < 1 / sqrt(eps) = 6.7e7), for floats 1 / sqrt(eps).
  t3k::RankContinuation c;
  EXPECT_EQ(t3k::condition_guard<double>(c), 1e6);
  EXPECT_NEAR(t3k::condition_guard<float>(c), 1 / std::sqrt(double(std::numeric_limits<float>::epsilon())), 1e-9);
  c.condition_guard = 50;
  EXPECT_EQ(t3k::condition_guard<double>(c), 50.0);
}

t3k::FitResult<S, M> planted_fit(Case const& c, t3k::GrowthRule rule, std::size_t max_rank) {
  Default::execution_space space;
  std::size_t const d = c.truth.n_modes();
  auto x0 = t3k::random_t3<S>(space, c.truth.mode_shapes(), std::vector<std::size_t>(d, 1),
                              std::vector<std::size_t>(d + 1, 1), 7);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 400;
  o.common.tol_relative_residual = 1e-11;
  o.cg_max_iterations = 100;
  for (std::size_t big_n : c.truth.mode_shapes()) {
    o.common.continuation.max_tucker_ranks.push_back(std::min(big_n, max_rank));
  }
  o.common.continuation.max_tt_ranks.assign(d + 1, max_rank);
  o.common.continuation.max_tt_ranks.front() = o.common.continuation.max_tt_ranks.back() = 1;
  o.common.continuation.rule = rule;
  return t3k::newton_cg(space, c.problem, x0, o);
}

// Edge conditioning from all ranks 1 reaches the planted ranks exactly (not beyond) and recovers the tensor, in at
// most a tenth more iterations than the saturation rule; every rank step has its note. d = 4 (the planted case
// above) and d = 5 with uneven ranks.
void edge_conditioning_recovers_the_planted_ranks() {
  Default::execution_space space;
  auto five = t3k::random_t3<S>(space, {5, 6, 5, 6, 5}, {2, 4, 2, 4, 2}, {1, 2, 3, 3, 2, 1}, 11);
  std::vector<Case> const cases{planted(space, 150, 0.0),
                                {five, t3k::make_planted_problem(space, five, 200, 1, 0.0, 12)}};
  for (auto const& c : cases) {
    std::size_t const d = c.truth.n_modes();
    auto const saturation = planted_fit(c, t3k::GrowthRule::saturation, 5);
    auto const edge = planted_fit(c, t3k::GrowthRule::edge_conditioning, 5);
    EXPECT_EQ(edge.x.tucker_ranks(), c.truth.tucker_ranks()) << "d = " << d << ": " << edge.reason;
    EXPECT_EQ(edge.x.tt_ranks(), c.truth.tt_ranks()) << "d = " << d << ": " << edge.reason;
    EXPECT_LT(relative_dense_error(edge.x, c.truth), 1e-8) << "d = " << d << ": " << edge.reason;
    EXPECT_LT(relative_dense_error(saturation.x, c.truth), 1e-8) << "d = " << d << ": " << saturation.reason;
    std::size_t const edge_iterations = edge.history.back().iteration;
    std::size_t const saturation_iterations = saturation.history.back().iteration;
    // Within a tenth: rounding (the CPU's BLAS kernels, the build's flags) moves either count by an iteration or two.
    EXPECT_LE(10 * edge_iterations, 11 * saturation_iterations) << "d = " << d;
    std::size_t steps = 0, notes = 0;
    for (auto const& note : edge.notes) {
      steps += note.rfind("rank step at iteration ", 0) == 0 ? 1 : 0;
      notes += note.rfind("edge conditioning at iteration ", 0) == 0 && note.find("worst kappa") != std::string::npos;
    }
    EXPECT_GE(steps, 1u);
    EXPECT_EQ(steps, notes);
    std::cout << "planted d = " << d << ": iterations with edge_conditioning " << edge_iterations
              << ", with saturation " << saturation_iterations << '\n';
  }
}

// With max_edges_per_stage = 1, each rank step grows the best-conditioned edge that can rise at feasible ranks, and
// the Tucker ranks asked before it that its growth unlocks (a bond unlocks at most its two modes: from ranks 1 a
// Tucker rank can rise only with a bond); the continuation still ends at the planted ranks.
void edge_cap_grows_one_edge_at_a_time() {
  Default::execution_space space;
  auto c = planted(space, 150, 0.0);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 400;
  o.common.tol_relative_residual = 1e-11;
  o.cg_max_iterations = 100;
  o.common.continuation = up_to(4, 4);
  o.common.continuation.rule = t3k::GrowthRule::edge_conditioning;
  o.common.continuation.max_edges_per_stage = 1;
  auto const fit = t3k::newton_cg(space, c.problem, x0, o);
  EXPECT_EQ(fit.x.tucker_ranks(), c.truth.tucker_ranks()) << fit.reason;
  EXPECT_EQ(fit.x.tt_ranks(), c.truth.tt_ranks()) << fit.reason;
  std::size_t single = 0, steps = 0;
  for (auto const& note : fit.notes) {
    if (note.rfind("edge conditioning at iteration ", 0) != 0) continue;
    std::size_t edges = 0;
    for (auto at = note.find("(kappa "); at != std::string::npos; at = note.find("(kappa ", at + 1)) ++edges;
    EXPECT_LE(edges, 3u) << note;
    single += edges == 1 ? 1 : 0;
    ++steps;
  }
  EXPECT_GE(steps, 3u);
  EXPECT_GE(single, 1u);
}

// With three probes (84 measured scalars: 3 x 2 orders x (17 - 3)) and 2.5 measurements per dimension asked, the
// continuation grows from ranks 1 (dimension 14) to ranks 2 (dimension 30) and stops before any ranks past
// dimension 33.6, saying so.
void too_few_samples_stop_the_growth() {
  Default::execution_space space;
  auto c = planted(space, 3, 0.0);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  EXPECT_EQ(t3k::measurements_per_sample(c.problem, x0.mode_shapes()), 28u);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 200;
  o.common.continuation = up_to(4, 4);
  o.common.continuation.rule = t3k::GrowthRule::edge_conditioning;
  o.common.continuation.min_samples_per_dimension = 2.5;
  auto const fit = t3k::newton_cg(space, c.problem, x0, o);
  auto const stop = std::find_if(fit.notes.begin(), fit.notes.end(), [](std::string const& note) {
    return note.find("below min_samples_per_dimension 2.5") != std::string::npos;
  });
  ASSERT_NE(stop, fit.notes.end()) << fit.reason;
  EXPECT_LE(2.5 * double(t3k::manifold_dimension(fit.x)), 84.0);
  EXPECT_EQ(fit.notes.front().rfind("rank step at iteration ", 0), 0u) << "the first step to ranks 2 is allowed";
  EXPECT_NE(fit.notes.front().find("-> [2 x 2 x 2 x 2]"), std::string::npos) << fit.notes.front();
}

// A polishing stage that runs to stage_iterations well before max_iterations does not report the fit's cap. With
// noise, ranks past the planted ones hold values near the noise level, which rank_rtol = 0.05 drops at the end.
void polishing_at_its_stage_cap_is_not_the_iteration_cap() {
  Default::execution_space space;
  auto c = planted(space, 150, 1e-2);
  auto x0 = t3k::random_t3<S>(space, {4, 5, 4, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 7);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 300;
  o.common.tol_gradient = 0;
  o.common.continuation = up_to(4, 4);
  o.common.continuation.stage_iterations = 3;
  o.common.continuation.rank_rtol = 0.05;
  auto const fit = t3k::newton_cg(space, c.problem, x0, o);
  ASSERT_TRUE(std::any_of(fit.notes.begin(), fit.notes.end(),
                          [](std::string const& note) { return note.rfind("unused ranks dropped", 0) == 0; }))
      << "no polishing stage: " << fit.reason;
  std::size_t const last_stage = fit.history.back().rank_stage;
  std::size_t const records =
      std::count_if(fit.history.begin(), fit.history.end(), [&](auto const& r) { return r.rank_stage == last_stage; });
  ASSERT_EQ(records, 4u) << "the polishing stage ran to its cap: its first point and three iterations";
  ASSERT_LT(fit.history.back().iteration, o.common.max_iterations);
  EXPECT_EQ(fit.reason, "polishing stage reached stage_iterations");
}

TEST(RankContinuation, EdgeSelectionFollowsTheConditionNumbers) { edge_selection_follows_the_condition_numbers(); }
TEST(RankContinuation, EdgeConditioningRecoversThePlantedRanks) { edge_conditioning_recovers_the_planted_ranks(); }
TEST(RankContinuation, EdgeCapGrowsOneEdgeAtATime) { edge_cap_grows_one_edge_at_a_time(); }
TEST(RankContinuation, TooFewSamplesStopTheGrowth) { too_few_samples_stop_the_growth(); }
TEST(RankContinuation, PolishingAtItsStageCapIsNotTheIterationCap) {
  polishing_at_its_stage_cap_is_not_the_iteration_cap();
}
TEST(RankContinuation, EmbeddingKeepsTheTensorAndTheLoss) { embedding_keeps_the_tensor_and_the_loss(); }
TEST(RankContinuation, ContinuationRecoversThePlantedRanks) { continuation_recovers_the_planted_ranks(); }
TEST(RankContinuation, TightToleranceKeepsSmallRealRanks) { tight_tolerance_keeps_small_real_ranks(); }
TEST(RankContinuation, EveryOptimizerGrowsRanks) { every_optimizer_grows_ranks(); }
TEST(RankContinuation, ContinuationResumesExactlyAcrossRankSteps) { continuation_resumes_exactly_across_rank_steps(); }
TEST(RankContinuation, StopRequestEndsTheContinuation) { stop_request_ends_the_continuation(); }
TEST(Validation, HeldOutValidationIsRecordedAndStopsEarly) { held_out_validation_is_recorded_and_stops_early(); }

}  // namespace
