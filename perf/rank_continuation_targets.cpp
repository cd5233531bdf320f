// Rank continuation against fits told the ranks, on a planted problem (d = 5, Tucker ranks 3-4, TT ranks 3-4):
//  1. noise-free, continuation from all ranks 1: relative error of the fitted tensor, chosen ranks against the
//     planted ones, and the fit time against a newton_cg fit at the planted ranks from a random start;
//  2. 5% noise, 20% of the probes held out: the validation residual of the ranks continuation chooses against
//     fixed-rank fits one rank step smaller and two steps larger.
// Prints one line per figure. Run: t3k_rank_continuation_targets (OMP_NUM_THREADS sets the threads); see
// perf/README.md.
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using T3 = t3k::TuckerTensorTrain<double, Space::memory_space>;
using Problem = t3k::FittingProblem<double, Space::memory_space>;

std::vector<std::size_t> const shapes{6, 6, 6, 6, 6};
std::vector<std::size_t> const tucker{3, 3, 4, 3, 3};
std::vector<std::size_t> const tt{1, 3, 4, 4, 3, 1};

double dense_error(Space const& space, T3 const& x, T3 const& truth) {
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::to_dense(space, x));
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::to_dense(space, truth));
  double num = 0, den = 0;
  for (std::size_t e = 0; e < a.span(); ++e) {
    num += (a.data()[e] - b.data()[e]) * (a.data()[e] - b.data()[e]);
    den += b.data()[e] * b.data()[e];
  }
  return std::sqrt(num / den);
}

std::string text(std::vector<std::size_t> const& v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? " " : "") + std::to_string(v[k]);
  return s + "]";
}

t3k::NewtonCgOptions options(double tol) {
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 400;
  o.common.tol_relative_residual = tol;
  o.cg_max_iterations = 100;
  return o;
}

template <class F>
auto timed(double& seconds, F&& f) {
  auto const t0 = std::chrono::steady_clock::now();
  auto r = f();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

double validation_residual(Space const& space, Problem const& p, T3 const& x) {
  return std::sqrt(t3k::evaluate_loss(space, *p.validation, x).loss / t3k::zero_model_loss(space, *p.validation));
}

// Ranks moved by `delta` on every mode and interior bond (at least 1, at most N_i), clipped to feasible ones.
void shifted(std::vector<std::size_t> const& n0, std::vector<std::size_t> const& r0, int delta,
             std::vector<std::size_t>& n, std::vector<std::size_t>& r) {
  n = n0;
  r = r0;
  for (std::size_t i = 0; i < n.size(); ++i)
    n[i] = std::size_t(std::max(1, std::min(int(shapes[i]), int(n[i]) + delta)));
  for (std::size_t e = 1; e + 1 < r.size(); ++e) r[e] = std::size_t(std::max(1, int(r[e]) + delta));
  t3k::impl::clip_to_feasible(shapes, n, r);
}

void noise_free(Space const& space) {
  auto truth = t3k::random_t3<double>(space, shapes, tucker, tt, 1);
  auto problem = t3k::make_planted_problem(space, truth, 400, 1, 0.0, 2);
  auto o = options(1e-10);
  auto continued = o;
  continued.common.continuation.max_tucker_ranks = std::vector<std::size_t>(5, 5);
  continued.common.continuation.max_tt_ranks = {1, 5, 5, 5, 5, 1};
  continued.common.continuation.stage_iterations = 30;
  if (char const* v = std::getenv("T3K_STAGE_TOL_DECREASE"))
    continued.common.continuation.stage_tol_decrease = std::atof(v);
  auto x1 = t3k::random_t3<double>(space, shapes, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, 3);
  auto xt = t3k::random_t3<double>(space, shapes, tucker, tt, 3);
  double t_cont = 0, t_told = 0;
  auto a = timed(t_cont, [&] { return t3k::newton_cg(space, problem, x1, continued); });
  auto b = timed(t_told, [&] { return t3k::newton_cg(space, problem, xt, o); });
  std::printf(
      "noise-free continuation: ranks Tucker %s TT %s (planted %s %s), relative tensor error %.3e, %zu "
      "iterations, %.2f s (%s)\n",
      text(a.x.tucker_ranks()).c_str(), text(a.x.tt_ranks()).c_str(), text(tucker).c_str(), text(tt).c_str(),
      dense_error(space, a.x, truth), a.history.back().iteration, t_cont, a.reason.c_str());
  for (std::size_t k = 1, first = 0; k <= a.history.size(); ++k) {
    if (k == a.history.size() || a.history[k].rank_stage != a.history[first].rank_stage) {
      std::printf("  stage %zu: iterations %zu..%zu, %.2f s, relative residual %.3e\n", a.history[first].rank_stage,
                  a.history[first].iteration, a.history[k - 1].iteration,
                  a.history[k - 1].elapsed_seconds - a.history[first].elapsed_seconds,
                  a.history[k - 1].relative_residual);
      first = k;
    }
  }
  std::printf("noise-free told the ranks: relative tensor error %.3e, %zu iterations, %.2f s (%s)\n",
              dense_error(space, b.x, truth), b.history.back().iteration, t_told, b.reason.c_str());
  std::printf("time ratio continuation / told the ranks: %.2f\n", t_cont / t_told);
}

void noisy(Space const& space) {
  auto truth = t3k::random_t3<double>(space, shapes, tucker, tt, 1);
  auto full = t3k::make_planted_problem(space, truth, 400, 1, 0.05, 2);
  auto problem = t3k::hold_out(space, full, 80, 4);
  auto o = options(0);
  o.common.max_iterations = 200;
  o.common.tol_decrease = 1e-6;
  auto continued = o;
  continued.common.continuation.max_tucker_ranks = std::vector<std::size_t>(5, 6);
  continued.common.continuation.max_tt_ranks = {1, 8, 8, 8, 8, 1};
  continued.common.continuation.stage_iterations = 30;
  auto x1 = t3k::random_t3<double>(space, shapes, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, 3);
  auto a = t3k::newton_cg(space, problem, x1, continued);
  auto const n = a.x.tucker_ranks();
  auto const r = a.x.tt_ranks();
  std::printf("5%% noise continuation: ranks Tucker %s TT %s, validation relative residual %.4e (%s)\n",
              text(n).c_str(), text(r).c_str(), validation_residual(space, problem, a.x), a.reason.c_str());
  for (int delta : {-1, 1, 2}) {
    std::vector<std::size_t> nn, rr;
    shifted(n, r, delta, nn, rr);
    auto x0 = t3k::random_t3<double>(space, shapes, nn, rr, 3);
    auto f = t3k::newton_cg(space, problem, x0, o);
    std::printf("5%% noise fixed ranks %+d step: Tucker %s TT %s, validation relative residual %.4e (%s)\n", delta,
                text(f.x.tucker_ranks()).c_str(), text(f.x.tt_ranks()).c_str(),
                validation_residual(space, problem, f.x), f.reason.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  Space space;
  noise_free(space);
  noisy(space);
  return 0;
}
