#pragma once
/// \file newton_cg.hpp
/// Riemannian Gauss-Newton with conjugate gradients on the tangent space (docs/math.md).

#include "t3k/optimizers/armijo_line_search.hpp"
#include "t3k/optimizers/iteration_tail.hpp"
#include "t3k/optimizers/optimizer_common.hpp"
#include "t3k/optimizers/rank_continuation.hpp"

namespace t3k {

/// Fits a T3 of x0's (feasible) ranks to the problem by Riemannian Gauss-Newton-CG with Armijo backtracking on the
/// retraction. Each outer iteration solves (GN + lambda I) delta = -g by CG on gauged variations, then
/// X <- R_X(alpha delta) and recomputes the frame.
/// **Blocking:** yes. **Throws:** DimensionMismatch when the problem does not fit x0.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FitResult<Scalar, MemorySpace> newton_cg(ExecutionSpace const& space,
                                         FittingProblem<Scalar, MemorySpace> const& problem,
                                         TuckerTensorTrain<Scalar, MemorySpace> const& x0,
                                         NewtonCgOptions const& options = {},
                                         CheckpointControl<Scalar, MemorySpace> const& checkpoint = {}) {
  impl::check_fit("t3k::newton_cg", problem, x0, options.common);
  if (options.common.continuation.enabled()) {
    return impl::rank_continuation(space, problem, x0, options, checkpoint,
                                   [&](auto const& x, auto const& stage, auto const& control) {
                                     return newton_cg(space, problem, x, stage, control);
                                   });
  }
  auto const& o = options.common;
  impl::FitSession<Scalar, MemorySpace> session(space, problem, x0, o, problem.n_global_probes());
  auto& result = session.result;
  ChunkSize const chunk = session.chunk;

  auto const* resume = checkpoint.resume_from;
  auto point = impl::make_point(space, problem, session.first_iterate(space, x0, resume, "newton_cg"));
  auto g = impl::fit_gradient(space, o, problem, point.frame, point.eval, chunk);
  double gnorm = double(variation_norm(space, g));
  double x0_norm = 0, g0 = 0, lambda = 0;
  std::size_t first = 1;
  if (resume) {
    x0_norm = impl::checkpoint_scalar(*resume, "x0_norm");
    g0 = impl::checkpoint_scalar(*resume, "g0");
    lambda = impl::checkpoint_scalar(*resume, "lambda");
    session.resume_history(resume->history);
    session.restore(*resume);
    first = resume->iteration + 1;
  } else {
    x0_norm = double(t3k::norm(space, x0));
    g0 = gnorm;
    session.record(space, 0, point.x, true, point.eval.loss, gnorm, 0);
    if (options.levenberg_marquardt && gnorm > 0) {
      auto gg = impl::fit_gauss_newton_product(space, o, problem, point.frame, g, chunk, &session.jv_buffer);
      lambda = options.lambda_rel * double(variation_dot(space, g, gg)) / (gnorm * gnorm);
    }
  }
  auto tail = impl::iteration_tail(session, checkpoint, [&](std::size_t it) {
    auto c = impl::begin_checkpoint("newton_cg", it, point.x, result.history);
    c.scalars = {{"x0_norm", x0_norm}, {"g0", g0}, {"lambda", lambda}};
    session.save(c);
    return c;
  });
  result.reason = "maximum iterations reached";
  for (std::size_t it = first; it <= o.max_iterations; ++it) {
    if (session.stop_requested()) break;
    // A NaN or infinite loss can come with a gradient norm of 0; that is no convergence.
    if (!std::isfinite(point.eval.loss) || !std::isfinite(gnorm)) {
      result.converged = false;
      result.reason = "non-finite loss";
      break;
    }
    if (gnorm == 0) {
      result.converged = true;
      result.reason = "zero gradient";
      break;
    }
    // CG on (GN + lambda I) delta = -g.
    double const forcing = std::min(options.cg_rtol, std::sqrt(gnorm / g0));
    auto delta = zero_variation<Scalar>(space, point.frame, 1);
    auto res = impl::scaled(space, g, -1.0);
    auto dir = copy_variation(space, res);
    double rs = gnorm * gnorm;
    for (std::size_t j = 0; j < options.cg_max_iterations; ++j) {
      auto ad = impl::fit_gauss_newton_product(space, o, problem, point.frame, dir, chunk, &session.jv_buffer);
      if (lambda > 0) axpy_variation(space, Scalar(lambda), dir, ad);
      double const curvature = double(variation_dot(space, dir, ad));
      if (!(curvature > 0)) break;  // flat or rounding-level direction: keep what CG has
      double const a = rs / curvature;
      axpy_variation(space, Scalar(a), dir, delta);
      axpy_variation(space, Scalar(-a), ad, res);
      double const rs_new = double(variation_dot(space, res, res));
      if (std::sqrt(rs_new) <= forcing * gnorm) break;
      scale_variation(space, Scalar(rs_new / rs), dir);
      axpy_variation(space, Scalar(1), res, dir);
      rs = rs_new;
    }
    if (double(variation_norm(space, delta)) == 0) delta = impl::scaled(space, g, -1.0);
    double const slope = double(variation_dot(space, g, delta));  // < 0 for a descent direction
    // Quadratic model decrease for the gain ratio: -<g,d> - 0.5 <d,(GN + lambda I) d>.
    double predicted = 0;
    if (options.levenberg_marquardt) {
      auto gd = impl::fit_gauss_newton_product(space, o, problem, point.frame, delta, chunk, &session.jv_buffer);
      double const dn = double(variation_norm(space, delta));
      predicted = -slope - 0.5 * (double(variation_dot(space, delta, gd)) + lambda * dn * dn);
    }
    auto search = impl::armijo_backtracking(space, o, problem, point, delta, 1.0, 1.0, slope, options.armijo_c1,
                                            options.max_backtracks, session.spare_residual);
    if (!search.accepted) {
      impl::end_at_failed_line_search(result, point.eval.loss, session.keeper.zero_loss, -slope);
      break;
    }
    auto& trial = search.point;
    if (options.levenberg_marquardt && predicted > 0) {
      double const gain = (point.eval.loss - trial.eval.loss) / predicted;
      lambda = gain > 0.75 ? lambda / 3 : gain < 0.25 ? lambda * 2 : lambda;
    }
    double const previous = point.eval.loss;
    double const step = search.alpha * double(variation_norm(space, delta));
    trial.frame = orthogonal_frame(space, trial.x);
    session.spare_residual = point.eval.residual;  // overwritten by the next line search
    point = std::move(trial);
    g = impl::fit_gradient(space, o, problem, point.frame, point.eval, chunk);
    gnorm = double(variation_norm(space, g));
    if (tail.end_iteration(space, it, point.x, {true, point.eval.loss, gnorm, step, previous}, g0, x0_norm)) break;
  }
  return tail.finish(point.x);
}

}  // namespace t3k
