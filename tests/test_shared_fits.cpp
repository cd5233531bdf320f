// Fits of shared models (OptimizerOptions::sharing): a planted model whose first three modes share one Tucker factor,
// recovered from probes, entries and applies by the optimizers from an untied start; every result is tied, a
// trivial sharing changes no bit, chunked J^T changes no bit, and the tied retraction is tied by construction. The
// references are dense (the planted tensor itself).
#include "reference.hpp"

#include "t3k/algorithms/gauge_projection.hpp"
#include "t3k/algorithms/grouped_t3_svd.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/retraction.hpp"
#include "t3k/algorithms/tangent_to_t3.hpp"
#include "t3k/algorithms/tie_variation.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using T3 = t3k::TuckerTensorTrain<double, Space::memory_space>;

std::vector<std::size_t> const kShapes{6, 6, 6, 4};
t3k::ModeSharing sharing() { return t3k::ModeSharing({0, 0, 0, 1}, kShapes); }

T3 planted(Space const& space) {
  return t3k::tie_tucker_factors(t3k::random_t3<double>(space, kShapes, {3, 3, 3, 2}, {1, 3, 3, 2, 1}, 71), sharing());
}

// Every core, bit for bit (ties aside): host copies compared as flat vectors.
bool same_bits(T3 const& a, T3 const& b) {
  auto const ha = t3k_test::host_t3(a), hb = t3k_test::host_t3(b);
  return ha.u == hb.u && ha.g == hb.g;
}

t3k::NewtonCgOptions newton_options() {
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 40;
  o.common.tol_relative_residual = 1e-12;
  o.cg_max_iterations = 100;
  o.common.sharing = sharing();
  return o;
}

TEST(SharedFits, NewtonCgRecoversThePlantedModelFromEveryMeasurementKind) {
  Space space;
  auto const truth = planted(space);
  // An untied start: every factor perturbed on its own. The fit starts from its best shared model.
  auto const x0 = t3k::perturb_t3(space, truth, 0.2, 72);
  ASSERT_FALSE(t3k::has_equal_tucker_factors(space, x0, sharing()));
  struct Kind {
    t3k::MeasurementKind kind;
    std::size_t samples, order;
  };
  for (auto k : {Kind{t3k::MeasurementKind::probes, 60, 1}, Kind{t3k::MeasurementKind::entries, 500, 0},
                 Kind{t3k::MeasurementKind::applies, 200, 1}}) {
    auto const problem = t3k::make_planted_problem(space, truth, k.kind, k.samples, k.order, 0.0, 73);
    auto const fit = t3k::newton_cg(space, problem, x0, newton_options());
    SCOPED_TRACE(t3k::to_string(k.kind));
    EXPECT_TRUE(t3k::has_tied_tucker_factors(fit.x, sharing()));
    EXPECT_LT(t3k_test::relative_dense_error(fit.x, truth), 1e-8) << fit.reason;
    ASSERT_EQ(fit.notes.size(), 1u);
    EXPECT_NE(fit.notes[0].find("best shared model"), std::string::npos) << fit.notes[0];
  }
}

TEST(SharedFits, EveryOptimizerKeepsTheTieAndLowersTheLoss) {
  Space space;
  auto const truth = planted(space);
  auto const problem = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::probes, 256, 1, 0.0, 74);
  auto const x0 = t3k::grouped_t3_svd(space, t3k::perturb_t3(space, truth, 0.3, 75), sharing(),
                                      t3k::impl::retraction_caps(t3k::orthogonal_frame(space, truth)))
                      .t3;
  ASSERT_TRUE(t3k::has_tied_tucker_factors(x0, sharing()));
  double const start = t3k::score(space, problem, x0).relative_residual;

  t3k::GradientDescentOptions gd;
  gd.common.max_iterations = 60;
  gd.common.sharing = sharing();
  t3k::McSgdOptions sgd;
  sgd.common.max_iterations = 60;
  sgd.batch_size = 64;
  sgd.common.sharing = sharing();
  t3k::AdamOptions adam;
  adam.common.max_iterations = 60;
  adam.common.sharing = sharing();
  auto const r_gd = t3k::gradient_descent(space, problem, x0, gd);
  auto const r_sgd = t3k::mc_sgd(space, problem, x0, sgd);
  auto const r_adam = t3k::adam(space, problem, x0, adam);
  auto const r_newton = t3k::newton_cg(space, problem, x0, newton_options());
  for (auto const* r : {&r_gd, &r_sgd, &r_adam, &r_newton}) {
    EXPECT_TRUE(t3k::has_tied_tucker_factors(r->x, sharing()));
    EXPECT_TRUE(r->notes.empty());
    EXPECT_LT(t3k::score(space, problem, r->x).relative_residual, 0.5 * start) << r->reason;
  }
  EXPECT_LT(t3k_test::relative_dense_error(r_newton.x, truth), 1e-8) << r_newton.reason;
}

TEST(SharedFits, ChunkedAndTrivialSharingChangeNoBit) {
  Space space;
  auto const truth = planted(space);
  std::size_t const block = t3k::reduction_block_size_for<Space>();
  auto const problem = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::probes, 3 * block, 1, 0.0, 76);
  auto const x0 = t3k::tie_tucker_factors(t3k::perturb_t3(space, truth, 0.2, 77), sharing());
  auto o = newton_options();
  o.common.max_iterations = 4;
  o.common.chunk_size = t3k::ChunkSize::none();
  auto const whole = t3k::newton_cg(space, problem, x0, o);
  o.common.chunk_size = t3k::ChunkSize::of(block);
  auto const chunked = t3k::newton_cg(space, problem, x0, o);
  EXPECT_TRUE(same_bits(whole.x, chunked.x));

  // Every mode its own group: the untied fit, bit for bit.
  auto untied = newton_options();
  untied.common.max_iterations = 4;
  untied.common.sharing = {};
  auto trivial = untied;
  trivial.common.sharing = t3k::ModeSharing::unshared(kShapes);
  auto const plain = t3k::perturb_t3(space, truth, 0.2, 78);
  EXPECT_TRUE(
      same_bits(t3k::newton_cg(space, problem, plain, untied).x, t3k::newton_cg(space, problem, plain, trivial).x));
}

TEST(SharedFits, TheSharedRetractionIsTiedAndFirstOrder) {
  Space space;
  auto const x = planted(space);
  auto const frame = t3k::orthogonal_frame(space, x);
  auto v = t3k::random_variation(space, frame, 1, 79);
  t3k::gauge_project_in_place(space, frame, v);
  t3k::tie_variation_in_place(space, frame, sharing(), v);
  // ||R_X(eps v) - X - eps T(v)|| = O(eps^2): halving eps quarters the remainder.
  auto remainder = [&](double eps) {
    auto step = t3k::copy_variation(space, v);
    t3k::scale_variation(space, eps, step);
    auto const moved = t3k::retract(space, frame, sharing(), step);
    EXPECT_TRUE(t3k::has_tied_tucker_factors(moved, sharing()));
    auto const linear = t3k::tangent_to_t3(space, frame, step, 0, true);
    return t3k_test::relative_dense_error(moved, linear);
  };
  double const r1 = remainder(1e-3), r2 = remainder(5e-4);
  EXPECT_LT(r1, 1e-3);
  EXPECT_NEAR(r1 / r2, 4.0, 0.5);
}

// A rank continuation of a shared model from ranks 1: the group's factor is one edge, its modes grow together and
// every stage is tied; both growth rules reach the planted ranks and the planted tensor.
TEST(SharedFits, ARankContinuationGrowsTheGroupAsOneEdge) {
  Space space;
  auto const truth = planted(space);
  auto const problem = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::probes, 80, 1, 0.0, 82);
  auto const x0 =
      t3k::tie_tucker_factors(t3k::random_t3<double>(space, kShapes, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 83), sharing());
  for (auto rule : {t3k::GrowthRule::saturation, t3k::GrowthRule::edge_conditioning}) {
    auto o = newton_options();
    o.common.max_iterations = 300;
    o.common.tol_relative_residual = 1e-10;
    o.common.continuation.max_tucker_ranks = {3, 3, 3, 2};
    o.common.continuation.max_tt_ranks = {1, 3, 3, 2, 1};
    o.common.continuation.stage_iterations = 20;
    o.common.continuation.rule = rule;
    std::vector<std::size_t> stages;
    o.common.callback = [&](t3k::IterationRecord const& r) { stages.push_back(r.rank_stage); };
    auto const fit = t3k::newton_cg(space, problem, x0, o);
    SCOPED_TRACE(rule == t3k::GrowthRule::saturation ? "saturation" : "edge_conditioning");
    EXPECT_TRUE(t3k::has_equal_tucker_factors(space, fit.x, sharing()));
    EXPECT_EQ(fit.x.tucker_ranks(), (std::vector<std::size_t>{3, 3, 3, 2}));
    EXPECT_LT(t3k_test::relative_dense_error(fit.x, truth), 1e-8) << fit.reason;
    ASSERT_FALSE(stages.empty());
    EXPECT_GE(stages.back(), 2u) << "grew in more than one step";
    std::size_t steps = 0;
    for (auto const& note : fit.notes) {
      if (note.rfind("rank step", 0) != 0) continue;
      ++steps;
      // "Tucker ranks [a x b x c x e] -> [a' x b' x c' x e']": the group's three ranks stay equal.
      auto const after = note.substr(note.find("-> [") + 4);
      std::size_t v[3];
      ASSERT_EQ(std::sscanf(after.c_str(), "%zu x %zu x %zu", &v[0], &v[1], &v[2]), 3) << note;
      EXPECT_TRUE(v[0] == v[1] && v[1] == v[2]) << note;
    }
    EXPECT_GE(steps, 1u);
    // Each step names the shared manifold's dimension before and after: 49 at the planted ranks (a group's factor
    // counted once; the untied model of these ranks has 67).
    std::string last_step;
    for (auto const& note : fit.notes) last_step = note.rfind("rank step", 0) == 0 ? note : last_step;
    EXPECT_NE(last_step.find("manifold dimension "), std::string::npos) << last_step;
    EXPECT_EQ(last_step.substr(last_step.size() - 6), " -> 49") << last_step;
    if (rule == t3k::GrowthRule::edge_conditioning) {
      bool named = false;
      for (auto const& note : fit.notes) named = named || note.find("Tucker modes 0,1,2") != std::string::npos;
      EXPECT_TRUE(named) << "the group is one edge, named with its modes";
    }
  }
}

TEST(SharedFits, BadSharingsAreRefusedNamingWhatDisagrees) {
  Space space;
  auto const truth = planted(space);
  auto const problem = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::probes, 64, 0, 0.0, 80);
  auto o = newton_options();
  o.common.sharing = t3k::ModeSharing({0, 0, 1}, {6, 6, 6});
  EXPECT_THROW(t3k::newton_cg(space, problem, truth, o), t3k::DimensionMismatch);
  // A continuation whose maximum Tucker ranks differ within a group: the group is one edge with one rank.
  o = newton_options();
  o.common.continuation.max_tucker_ranks = {4, 4, 3, 3};
  o.common.continuation.max_tt_ranks = {1, 4, 4, 3, 1};
  EXPECT_THROW(t3k::newton_cg(space, problem, truth, o), t3k::InvalidArgument);
  // Tucker ranks 3, 2, 3 in one group.
  auto const uneven = t3k::random_t3<double>(space, kShapes, {3, 2, 3, 2}, {1, 3, 3, 2, 1}, 81);
  EXPECT_THROW(t3k::newton_cg(space, problem, uneven, newton_options()), t3k::DimensionMismatch);
}

}  // namespace
