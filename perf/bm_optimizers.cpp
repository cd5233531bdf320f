// Two iterations of each optimizer (newton_cg, gradient_descent, mc_sgd, adam) on a planted problem of
// mid size d=8, N=64, n=8, r=8, K=2, |W|=10^4, double, started at a 1% perturbation of the planted T3.
// The benchmark time is the whole call with max_iterations = 2 (initial frame, loss and gradient included). The
// counter iteration_s is the first iteration alone (history[1].elapsed - history[0].elapsed), setup_s the part
// before it, and second_iteration_s the second iteration (history[2].elapsed - history[1].elapsed). The first
// iteration allocates and first-touches the arrays the optimizers carry between iterations (the spare residual, the
// Gauss-Newton products' J v); the second reuses them, as every later iteration of a fit does.
// newton_cg runs its default CG (forcing term 0.1, at most 50 CG steps per outer iteration);
// mc_sgd uses minibatches of 64 and a fixed step (its automatic step costs 32 extra GN products up front, reported
// separately by BM_Optimizer_McSgdAutoStep; BM_Optimizer_McSgdKeptLossStack keeps the full loss's probe-jet stack
// between evaluations, keep_loss_stack, whose second iteration then reuses the stack of the loss at x0); adam is full
// batch.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

using Mem = DefaultExec::memory_space;

struct PlantedFixture {
  t3k::FittingProblem<double, Mem> problem;
  t3k::TuckerTensorTrain<double, Mem> x0;
};

std::shared_ptr<PlantedFixture> planted(Shape const& s) {
  return cached_fixture<PlantedFixture>(s.key(), [&] {
    DefaultExec space;
    auto f = std::make_shared<PlantedFixture>();
    auto truth = t3k::random_t3<double>(space, s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), 41);
    f->problem = t3k::make_planted_problem(space, truth, s.w, s.order, 0.0, 42);
    f->x0 = t3k::perturb_t3(space, truth, 1e-2, 43);
    space.fence();
    return f;
  });
}

enum class Optimizer { newton_cg, gradient_descent, mc_sgd, mc_sgd_auto_step, mc_sgd_kept_loss_stack, adam };

template <Optimizer Which>
void BM_Optimizer(benchmark::State& state) {
  Shape const s = shape_of(state);
  DefaultExec space;
  auto f = planted(s);
  t3k::OptimizerOptions common;
  common.max_iterations = 2;
  common.tol_gradient = 0;
  std::vector<t3k::IterationRecord> history;
  std::size_t chunk = 0;
  auto call = [&] {
    t3k::FitResult<double, Mem> r;
    if constexpr (Which == Optimizer::newton_cg) {
      t3k::NewtonCgOptions o;
      o.common = common;
      r = t3k::newton_cg(space, f->problem, f->x0, o);
    } else if constexpr (Which == Optimizer::gradient_descent) {
      t3k::GradientDescentOptions o;
      o.common = common;
      r = t3k::gradient_descent(space, f->problem, f->x0, o);
    } else if constexpr (Which == Optimizer::mc_sgd || Which == Optimizer::mc_sgd_auto_step ||
                         Which == Optimizer::mc_sgd_kept_loss_stack) {
      t3k::McSgdOptions o;
      o.common = common;
      if (Which != Optimizer::mc_sgd_auto_step) o.step = 1e-4;
      o.keep_loss_stack = Which == Optimizer::mc_sgd_kept_loss_stack;
      r = t3k::mc_sgd(space, f->problem, f->x0, o);
    } else {
      t3k::AdamOptions o;
      o.common = common;
      r = t3k::adam(space, f->problem, f->x0, o);
    }
    history = r.history;
    chunk = r.chunk_size;
  };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  double iteration_s = 0, setup_s = 0, second_iteration_s = 0;
  double const total = timed_loop(state, space, [&] {
    call();
    if (history.size() >= 2) {
      iteration_s += history[1].elapsed_seconds - history[0].elapsed_seconds;
      setup_s += history[0].elapsed_seconds;
    }
    // 0 when the fit stopped after one iteration (a stopping test held).
    if (history.size() >= 3) second_iteration_s += history[2].elapsed_seconds - history[1].elapsed_seconds;
  });
  double const calls = double(state.iterations());
  state.counters["iteration_s"] = iteration_s / calls;
  state.counters["setup_s"] = setup_s / calls;
  state.counters["second_iteration_s"] = second_iteration_s / calls;
  state.counters["chunk"] = double(chunk);
  state.counters["loss_ratio"] = history.size() >= 2 && history[0].loss > 0 ? history[1].loss / history[0].loss : 0;
  set_throughput_counters(state, total, 0, 0);
}

void mid_size(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names())->Args({8, 64, 8, 8, 2, 10000})->UseManualTime()->Unit(benchmark::kMillisecond);
  b->Iterations(1);
}
void smoke(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names())->Args({3, 5, 3, 2, 2, 64})->UseManualTime()->Iterations(1);
}

void BM_Optimizer_NewtonCg(benchmark::State& s) { BM_Optimizer<Optimizer::newton_cg>(s); }
void BM_Optimizer_GradientDescent(benchmark::State& s) { BM_Optimizer<Optimizer::gradient_descent>(s); }
void BM_Optimizer_McSgd(benchmark::State& s) { BM_Optimizer<Optimizer::mc_sgd>(s); }
void BM_Optimizer_McSgdAutoStep(benchmark::State& s) { BM_Optimizer<Optimizer::mc_sgd_auto_step>(s); }
void BM_Optimizer_McSgdKeptLossStack(benchmark::State& s) { BM_Optimizer<Optimizer::mc_sgd_kept_loss_stack>(s); }
void BM_Optimizer_Adam(benchmark::State& s) { BM_Optimizer<Optimizer::adam>(s); }
BENCHMARK(BM_Optimizer_NewtonCg)->Apply(mid_size);
BENCHMARK(BM_Optimizer_GradientDescent)->Apply(mid_size);
BENCHMARK(BM_Optimizer_McSgd)->Apply(mid_size);
BENCHMARK(BM_Optimizer_McSgdAutoStep)->Apply(mid_size);
BENCHMARK(BM_Optimizer_McSgdKeptLossStack)->Apply(mid_size);
BENCHMARK(BM_Optimizer_Adam)->Apply(mid_size);

void BM_Optimizer_NewtonCg_Smoke(benchmark::State& s) { BM_Optimizer<Optimizer::newton_cg>(s); }
void BM_Optimizer_GradientDescent_Smoke(benchmark::State& s) { BM_Optimizer<Optimizer::gradient_descent>(s); }
void BM_Optimizer_McSgd_Smoke(benchmark::State& s) { BM_Optimizer<Optimizer::mc_sgd_auto_step>(s); }
void BM_Optimizer_Adam_Smoke(benchmark::State& s) { BM_Optimizer<Optimizer::adam>(s); }
BENCHMARK(BM_Optimizer_NewtonCg_Smoke)->Apply(smoke);
BENCHMARK(BM_Optimizer_GradientDescent_Smoke)->Apply(smoke);
BENCHMARK(BM_Optimizer_McSgd_Smoke)->Apply(smoke);
BENCHMARK(BM_Optimizer_Adam_Smoke)->Apply(smoke);

}  // namespace
}  // namespace t3k_bench
