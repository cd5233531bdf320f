#pragma once
/// \file gradient_descent.hpp
/// Riemannian gradient descent with Armijo backtracking (docs/math.md).

#include "t3k/optimizers/armijo_line_search.hpp"
#include "t3k/optimizers/iteration_tail.hpp"
#include "t3k/optimizers/optimizer_common.hpp"
#include "t3k/optimizers/rank_continuation.hpp"

namespace t3k {

/// X <- R_X(-alpha g) with Armijo backtracking from the Cauchy step of the Gauss-Newton model.
/// **Blocking:** yes. **Throws:** DimensionMismatch when the problem does not fit x0.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FitResult<Scalar, MemorySpace> gradient_descent(ExecutionSpace const& space,
                                                FittingProblem<Scalar, MemorySpace> const& problem,
                                                TuckerTensorTrain<Scalar, MemorySpace> const& x0,
                                                GradientDescentOptions const& options = {},
                                                CheckpointControl<Scalar, MemorySpace> const& checkpoint = {}) {
  impl::check_fit("t3k::gradient_descent", problem, x0, options.common);
  if (options.common.continuation.enabled()) {
    return impl::rank_continuation(space, problem, x0, options, checkpoint,
                                   [&](auto const& x, auto const& stage, auto const& control) {
                                     return gradient_descent(space, problem, x, stage, control);
                                   });
  }
  auto const& o = options.common;
  impl::FitSession<Scalar, MemorySpace> session(space, problem, x0, o, problem.n_global_probes());
  auto& result = session.result;
  ChunkSize const chunk = session.chunk;

  auto const* resume = checkpoint.resume_from;
  auto point = impl::make_point(space, problem, session.first_iterate(space, x0, resume, "gradient_descent"));
  auto g = impl::fit_gradient(space, o, problem, point.frame, point.eval, chunk);
  double gnorm = double(variation_norm(space, g));
  double x0_norm = 0, g0 = 0;
  std::size_t first = 1;
  if (resume) {
    x0_norm = impl::checkpoint_scalar(*resume, "x0_norm");
    g0 = impl::checkpoint_scalar(*resume, "g0");
    session.resume_history(resume->history);
    session.restore(*resume);
    first = resume->iteration + 1;
  } else {
    x0_norm = double(t3k::norm(space, x0));
    g0 = gnorm;
    session.record(space, 0, point.x, true, point.eval.loss, gnorm, 0);
  }
  auto tail = impl::iteration_tail(session, checkpoint, [&](std::size_t it) {
    auto c = impl::begin_checkpoint("gradient_descent", it, point.x, result.history);
    c.scalars = {{"x0_norm", x0_norm}, {"g0", g0}};
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
    double alpha = options.initial_step;
    if (!(alpha > 0)) {
      auto gg = impl::fit_gauss_newton_product(space, o, problem, point.frame, g, chunk, &session.jv_buffer);
      double const curvature = double(variation_dot(space, g, gg));
      alpha = curvature > 0 ? gnorm * gnorm / curvature : 1.0;
    }
    auto search = impl::armijo_backtracking(space, o, problem, point, g, -1.0, alpha, -gnorm * gnorm, options.armijo_c1,
                                            options.max_backtracks, session.spare_residual);
    if (!search.accepted) {
      impl::end_at_failed_line_search(result, point.eval.loss, session.keeper.zero_loss, alpha * gnorm * gnorm);
      break;
    }
    double const previous = point.eval.loss;
    double const step = search.alpha * gnorm;
    search.point.frame = orthogonal_frame(space, search.point.x);
    session.spare_residual = point.eval.residual;  // overwritten by the next line search
    point = std::move(search.point);
    g = impl::fit_gradient(space, o, problem, point.frame, point.eval, chunk);
    gnorm = double(variation_norm(space, g));
    if (tail.end_iteration(space, it, point.x, {true, point.eval.loss, gnorm, step, previous}, g0, x0_norm)) break;
  }
  return tail.finish(point.x);
}

}  // namespace t3k
