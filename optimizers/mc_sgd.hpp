#pragma once
/// \file mc_sgd.hpp
/// Minibatch (Monte Carlo) stochastic Riemannian gradient descent over the probe set (docs/math.md).

#include "t3k/optimizers/iteration_tail.hpp"
#include "t3k/optimizers/minibatches.hpp"
#include "t3k/optimizers/optimizer_common.hpp"
#include "t3k/optimizers/rank_continuation.hpp"

#include <algorithm>
#include <limits>

namespace t3k {

namespace impl {

inline double scheduled_step(double alpha0, StepSchedule schedule, double decay, std::size_t t, std::size_t total) {
  switch (schedule) {
    case StepSchedule::inverse_time:
      return alpha0 / (1.0 + double(t) / decay);
    case StepSchedule::cosine:
      return alpha0 * 0.5 * (1.0 + std::cos(3.14159265358979323846 * double(t) / double(total)));
    default:
      return alpha0;
  }
}

/// Largest eigenvalue of the scaled GN operator of a (sub)problem by power iterations on gauged variations.
template <class ExecutionSpace, class Scalar, class MemorySpace>
double gauss_newton_lambda_max(ExecutionSpace const& space, OptimizerOptions const& options,
                               FittingProblem<Scalar, MemorySpace> const& sub,
                               OrthogonalFrame<Scalar, MemorySpace> const& frame, double scale, std::size_t iterations,
                               std::uint64_t seed, ChunkSize chunk) {
  auto v = random_variation(space, frame, 1, seed);
  gauge_project_in_place(space, frame, v);
  tie_direction(space, options, frame, v);
  double lambda = 0;
  for (std::size_t k = 0; k < iterations; ++k) {
    double const n = double(variation_norm(space, v));
    if (n == 0) return 0;
    scale_variation(space, Scalar(1 / n), v);
    auto av = fit_gauss_newton_product(space, options, sub, frame, v, chunk);
    lambda = scale * double(variation_dot(space, v, av));
    v = av;
  }
  return lambda;
}

}  // namespace impl

/// Minibatch SGD: each step draws B probes (without replacement within an epoch), uses the minibatch gradient
/// scaled by W / |batch| and steps X <- R_X(-alpha_t g). The full loss is evaluated every `eval_every` steps.
/// Sharded problems: the batches are drawn over the global probe set (W = global_probes), identically on every
/// rank; each rank evaluates the batch rows of its shard and the gradient is summed over ranks.
/// **Blocking:** yes. **Throws:** DimensionMismatch when the problem does not fit x0; InvalidArgument for batch 0.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FitResult<Scalar, MemorySpace> mc_sgd(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem,
                                      TuckerTensorTrain<Scalar, MemorySpace> const& x0,
                                      McSgdOptions const& options = {},
                                      CheckpointControl<Scalar, MemorySpace> const& checkpoint = {}) {
  impl::check_fit("t3k::mc_sgd", problem, x0, options.common);
  if (options.common.continuation.enabled()) {
    return impl::rank_continuation(space, problem, x0, options, checkpoint,
                                   [&](auto const& x, auto const& stage, auto const& control) {
                                     return mc_sgd(space, problem, x, stage, control);
                                   });
  }
  auto const& o = options.common;
  // Every rank draws the same global batches from the same seed and keeps the rows of its own shard.
  std::size_t const w = problem.n_global_probes();
  MinibatchSampler sampler(w, options.batch_size, o.seed);
  impl::FitSession<Scalar, MemorySpace> session(space, problem, x0, o, sampler.batch_size());
  auto& result = session.result;
  ChunkSize const chunk = session.chunk;

  auto const* resume = checkpoint.resume_from;
  auto x = session.first_iterate(space, x0, resume, "mc_sgd");
  auto frame = orthogonal_frame(space, x);
  double full_loss = 0, alpha0 = options.step, g0 = 0;
  ProbeJets<Scalar, MemorySpace> loss_stack;  // the full loss's probe jets, with keep_loss_stack
  std::size_t first = 1;
  if (resume) {
    full_loss = impl::checkpoint_scalar(*resume, "full_loss");
    alpha0 = impl::checkpoint_scalar(*resume, "alpha0");
    g0 = impl::checkpoint_scalar(*resume, "g0");
    sampler.restore(resume->sampler_state);
    session.resume_history(resume->history);
    session.restore(*resume);
    first = resume->iteration + 1;
  } else {
    full_loss = full_loss_at(space, problem, x, options.keep_loss_stack, loss_stack);
    if (!(alpha0 > 0)) {
      MinibatchSampler probe_sampler(w, options.batch_size, o.seed ^ 0x5DEECE66Dull);
      double lambda = 0;
      for (std::size_t b = 0; b < std::max<std::size_t>(1, options.curvature_batches); ++b) {
        auto rows_b = probe_sampler.next();
        auto sub = impl::minibatch_problem(space, problem, rows_b);
        lambda = std::max(lambda, impl::gauss_newton_lambda_max(space, o, sub, frame, double(w) / double(rows_b.size()),
                                                                options.power_iterations, o.seed + b, chunk));
      }
      alpha0 = lambda > 0 ? options.step_safety / lambda : 1.0;
    }
    session.record(space, 0, x, true, full_loss, std::numeric_limits<double>::quiet_NaN(), 0);  // no gradient at x0
  }
  auto tail = impl::iteration_tail(session, checkpoint, [&](std::size_t it) {
    auto c = impl::begin_checkpoint("mc_sgd", it, x, result.history);
    c.scalars = {{"full_loss", full_loss}, {"alpha0", alpha0}, {"g0", g0}};
    c.sampler_state = sampler.save();
    session.save(c);
    return c;
  });
  result.reason = "maximum iterations reached";
  for (std::size_t it = first; it <= o.max_iterations; ++it) {
    if (session.stop_requested()) break;
    auto batch = sampler.next();
    auto sub = impl::minibatch_problem(space, problem, batch);
    auto eval = evaluate_loss(space, sub, x, session.spare_residual);
    session.spare_residual = eval.residual;  // the next minibatch of the same size overwrites it
    auto g = impl::fit_gradient(space, o, sub, frame, eval, chunk);
    double const scale = double(w) / double(batch.size());
    scale_variation(space, Scalar(scale), g);
    double const gnorm = double(variation_norm(space, g));
    if (it == 1) g0 = gnorm;
    double const alpha = impl::scheduled_step(alpha0, options.schedule, options.decay, it - 1, o.max_iterations);
    x = impl::fit_retract(space, o, frame, impl::scaled(space, g, -alpha));
    frame = orthogonal_frame(space, x);
    bool const evaluated = it % std::max<std::size_t>(1, options.eval_every) == 0 || it == o.max_iterations;
    if (evaluated) {
      full_loss = full_loss_at(space, problem, x, options.keep_loss_stack, loss_stack);
    }
    // No decrease or step test: the full loss is evaluated only every eval_every steps.
    if (tail.end_iteration(space, it, x, {evaluated, full_loss, gnorm, alpha * gnorm, 0, scale * eval.loss}, g0, 0)) {
      break;
    }
  }
  return tail.finish(x);
}

}  // namespace t3k
