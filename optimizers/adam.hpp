#pragma once
/// \file adam.hpp
/// Riemannian Adam with per-core adaptivity (docs/math.md, adam): the first moment is a gauged tangent vector
/// transported by projection onto the new tangent space; the second moment is one scalar per variation core.

#include "t3k/algorithms/tangent_space_projection.hpp"
#include "t3k/algorithms/tangent_to_t3.hpp"
#include "t3k/core/impl/ordered_sum.hpp"
#include "t3k/optimizers/iteration_tail.hpp"
#include "t3k/optimizers/minibatches.hpp"
#include "t3k/optimizers/optimizer_common.hpp"
#include "t3k/optimizers/rank_continuation.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace t3k {

namespace impl {

/// sum of squares of one core of stack entry 0.
template <class ExecutionSpace, class View>
double core_square_norm(ExecutionSpace const& space, View const& v) {
  auto data = v.data();
  return ordered_sum<double>(
      space, "t3k::adam::core_norm", v.span(), 1,
      KOKKOS_LAMBDA(std::size_t e, double& acc) { acc += double(data[e]) * double(data[e]); });
}

template <class ExecutionSpace, class View>
void scale_core(ExecutionSpace const& space, View const& v, double alpha) {
  auto data = v.data();
  auto const a = typename View::non_const_value_type(alpha);
  Kokkos::parallel_for(
      "t3k::adam::scale_core", Kokkos::RangePolicy<ExecutionSpace>(space, 0, v.span()),
      KOKKOS_LAMBDA(std::size_t e) { data[e] *= a; });
}

}  // namespace impl

/// Riemannian Adam. Each step: transport m to the current tangent space, m <- b1 m + (1-b1) g, per-core second
/// moments v_c <- b2 v_c + (1-b2) ||g_c||^2 / size_c, bias correction, delta_c = -alpha m^_c / (sqrt(v^_c) + eps)
/// core by core (per-core scaling keeps the gauge), X <- R_X(delta). Full batch: a step starts from the full-loss
/// evaluation of its point where there is one (eval_every), so each point's probe jets are formed once, and that
/// evaluation writes into the residual array of the step before it instead of a fresh one: no fresh allocation to
/// first-touch per step (BM_Optimizer_Adam).
/// **Blocking:** yes. **Throws:** DimensionMismatch when the problem does not fit x0.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FitResult<Scalar, MemorySpace> adam(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem,
                                    TuckerTensorTrain<Scalar, MemorySpace> const& x0, AdamOptions const& options = {},
                                    CheckpointControl<Scalar, MemorySpace> const& checkpoint = {}) {
  impl::check_fit("t3k::adam", problem, x0, options.common);
  if (options.common.continuation.enabled()) {
    return impl::rank_continuation(
        space, problem, x0, options, checkpoint,
        [&](auto const& x, auto const& stage, auto const& control) { return adam(space, problem, x, stage, control); });
  }
  auto const& o = options.common;
  // Sharded problems: every rank draws the same global batches and keeps the rows of its own shard.
  std::size_t const w = problem.n_global_probes();
  std::size_t const batch_size = options.batch_size == 0 ? w : std::min(options.batch_size, w);
  MinibatchSampler sampler(w, batch_size, o.seed);
  impl::FitSession<Scalar, MemorySpace> session(space, problem, x0, o, batch_size);
  auto& result = session.result;
  ChunkSize const chunk = session.chunk;

  auto const* resume = checkpoint.resume_from;
  auto x = session.first_iterate(space, x0, resume, "adam");
  auto frame = orthogonal_frame(space, x);
  std::size_t const d = frame.n_modes();
  std::size_t entries = 0;
  {
    auto z = zero_variation<Scalar>(space, frame, 1);
    for (std::size_t i = 0; i < d; ++i) entries += z.tucker[i].span() + z.tt[i].span();
  }
  double alpha = 0, full_loss = 0, g0 = 0;
  bool const full = batch_size == w;
  // Full batch: the full loss at x is the loss the next step's gradient needs, so that step takes the evaluation
  // (residual included) instead of forming the same probe jets again. Empty when the last full loss is not at x.
  std::optional<LossEvaluation<Scalar, MemorySpace>> full_eval_at_x;
  ProbeJets<Scalar, MemorySpace> loss_stack;  // minibatches: the full loss's probe jets, with keep_loss_stack
  auto m = zero_variation<Scalar>(space, frame, 1);
  std::vector<double> second(2 * d, 0.0);
  std::size_t first = 1;
  if (resume) {
    alpha = impl::checkpoint_scalar(*resume, "alpha");
    full_loss = impl::checkpoint_scalar(*resume, "full_loss");
    g0 = impl::checkpoint_scalar(*resume, "g0");
    if (resume->second_moments.size() != second.size() || resume->moment.n_modes() != d) {
      throw InvalidArgument("t3k::adam: the checkpoint's moments do not match the model's " + std::to_string(d) +
                            " modes");
    }
    impl::check_variation("t3k::adam (resumed first moment)", frame, resume->moment);
    copy_variation(space, resume->moment, m);
    second = resume->second_moments;
    sampler.restore(resume->sampler_state);
    session.resume_history(resume->history);
    session.restore(*resume);
    first = resume->iteration + 1;
  } else {
    alpha = options.alpha_rel * double(t3k::norm(space, x0)) / std::sqrt(double(entries));
    if (full) {
      full_eval_at_x = evaluate_loss(space, problem, x);
      full_loss = full_eval_at_x->loss;
    } else {
      full_loss = full_loss_at(space, problem, x, options.keep_loss_stack, loss_stack);
    }
    session.record(space, 0, x, true, full_loss, std::numeric_limits<double>::quiet_NaN(), 0);  // no gradient at x0
  }
  auto tail = impl::iteration_tail(session, checkpoint, [&](std::size_t it) {
    auto c = impl::begin_checkpoint("adam", it, x, result.history);
    c.scalars = {{"alpha", alpha}, {"full_loss", full_loss}, {"g0", g0}};
    c.sampler_state = sampler.save();
    c.moment = copy_variation(space, m);
    c.second_moments = second;
    session.save(c);
    return c;
  });
  result.reason = "maximum iterations reached";
  for (std::size_t it = first; it <= o.max_iterations; ++it) {
    if (session.stop_requested()) break;
    auto batch = full ? std::vector<std::size_t>() : sampler.next();
    auto sub = full ? problem : impl::minibatch_problem(space, problem, batch);
    auto eval = full_eval_at_x ? std::move(*full_eval_at_x) : evaluate_loss(space, sub, x, session.spare_residual);
    full_eval_at_x.reset();
    session.spare_residual = eval.residual;  // the next minibatch of the same size overwrites it
    auto g = impl::fit_gradient(space, o, sub, frame, eval, chunk);
    double const scale = full ? 1.0 : double(w) / double(batch.size());
    if (!full) scale_variation(space, Scalar(scale), g);
    double const gnorm = double(variation_norm(space, g));
    if (it == 1) g0 = gnorm;
    // m <- b1 m + (1 - b1) g (m already lives at the current frame).
    scale_variation(space, Scalar(options.beta1), m);
    axpy_variation(space, Scalar(1 - options.beta1), g, m);
    double const c1 = 1 - std::pow(options.beta1, double(it));
    double const c2 = 1 - std::pow(options.beta2, double(it));
    auto delta = copy_variation(space, m);
    for (std::size_t i = 0; i < d; ++i) {
      for (int kind = 0; kind < 2; ++kind) {
        double const sq =
            kind == 0 ? impl::core_square_norm(space, g.tucker[i]) : impl::core_square_norm(space, g.tt[i]);
        double const size = double(kind == 0 ? g.tucker[i].span() : g.tt[i].span());
        double& vc = second[2 * i + kind];
        vc = options.beta2 * vc + (1 - options.beta2) * sq / size;
        double const factor = -alpha / c1 / (std::sqrt(vc / c2) + options.epsilon);
        if (kind == 0)
          impl::scale_core(space, delta.tucker[i], factor);
        else
          impl::scale_core(space, delta.tt[i], factor);
      }
    }
    // The per-core scaling moves the modes of a group apart: the step is the scaled moment's tied part.
    impl::tie_direction(space, o, frame, delta);
    double const step = double(variation_norm(space, delta));
    auto x_new = impl::fit_retract(space, o, frame, delta);
    auto frame_new = orthogonal_frame(space, x_new);
    // Transport the first moment: m <- P_{X_new}(T_{X_old}(m)).
    m = project_onto_tangent_space(space, frame_new, tangent_to_t3(space, frame, m, 0, false));
    impl::tie_direction(space, o, frame_new, m);
    x = x_new;
    frame = frame_new;
    bool const evaluated = it % std::max<std::size_t>(1, options.eval_every) == 0 || it == o.max_iterations;
    if (evaluated) {
      if (full) {
        // Into the step's residual, which the gradient above was the last to read.
        full_eval_at_x = evaluate_loss(space, problem, x, session.spare_residual);
        full_loss = full_eval_at_x->loss;
      } else {
        full_loss = full_loss_at(space, problem, x, options.keep_loss_stack, loss_stack);
      }
    }
    // No decrease or step test: the full loss is evaluated only every eval_every steps.
    if (tail.end_iteration(space, it, x, {evaluated, full_loss, gnorm, step, 0, scale * eval.loss}, g0, 0)) break;
  }
  return tail.finish(x);
}

}  // namespace t3k
