#pragma once
/// \file armijo_line_search.hpp
/// The Armijo backtracking line search of newton_cg and gradient_descent, and the one rule that tells a line search
/// stopped by rounding (convergence) from a failed one (docs/math.md, stopping rules).

#include "t3k/optimizers/optimizer_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace t3k {

/// FitResult::reason of a fit whose line search could not verify a decrease because the decrease its first trial
/// step promises is below the rounding level of the loss; the fit counts as converged.
inline constexpr char line_search_rounding_reason[] = "line search stalled at rounding level";

/// FitResult::reason of a fit whose line search found no decrease although one above rounding was promised; the
/// fit has not converged.
inline constexpr char line_search_failure_reason[] = "line search failed";

namespace impl {

/// The rounding level of the loss f = ||r||^2 / 2, relative to epsilon: its residuals carry rounding errors of about
/// epsilon times the size of the data, sqrt(2 f_0) (f_0 the loss of X = 0), so f is known only to about
/// eps (f + sqrt(f f_0)); this factor allows for the sums over modes, ranks and probes each residual takes.
inline constexpr double loss_rounding_factor = 1000;

/// Whether a line search that failed had nothing above rounding left to find: the decrease its first trial step
/// promises to first order, -alpha_0 <g, d>, is at most loss_rounding_factor eps (f + sqrt(f f_0)).
inline bool line_search_stalled_at_rounding(double loss, double zero_loss, double promised_decrease, double eps) {
  double const f = std::max(loss, 0.0);
  return promised_decrease <= loss_rounding_factor * eps * (f + std::sqrt(f * std::max(zero_loss, 0.0)));
}

/// Ends a fit at a failed line search by that rule: converged with line_search_rounding_reason, or not converged
/// with line_search_failure_reason.
template <class Scalar, class MemorySpace>
void end_at_failed_line_search(FitResult<Scalar, MemorySpace>& result, double loss, double zero_loss,
                               double promised_decrease) {
  double const eps = std::numeric_limits<Scalar>::epsilon();
  result.converged = line_search_stalled_at_rounding(loss, zero_loss, promised_decrease, eps);
  result.reason = result.converged ? line_search_rounding_reason : line_search_failure_reason;
}

/// The outcome of armijo_backtracking: whether a step was accepted, the step length tried last (the accepted one),
/// and the point there (its frame is left to the caller, which needs it only for an accepted step).
template <class Scalar, class MemorySpace>
struct LineSearchStep {
  bool accepted = false;
  double alpha = 0;
  FitPoint<Scalar, MemorySpace> point;
};

/// Armijo backtracking on the retraction: tries X(alpha) = R_X(sign alpha d) for alpha = alpha_0, alpha_0 / 2, ...
/// (at most max_backtracks halvings) and accepts the first finite loss with
/// f(X(alpha)) <= f(X) + c1 alpha slope, slope = <g, sign d> < 0 the directional derivative. `sign` lets
/// gradient descent search along -g without a negated copy of g. Each trial evaluates into `spare_residual`.
template <class ExecutionSpace, class Scalar, class MemorySpace>
LineSearchStep<Scalar, MemorySpace> armijo_backtracking(ExecutionSpace const& space, OptimizerOptions const& options,
                                                        FittingProblem<Scalar, MemorySpace> const& problem,
                                                        FitPoint<Scalar, MemorySpace> const& at,
                                                        T3Variation<Scalar, MemorySpace> const& direction, double sign,
                                                        double alpha0, double slope, double c1,
                                                        std::size_t max_backtracks,
                                                        ProbeJets<Scalar, MemorySpace>& spare_residual) {
  LineSearchStep<Scalar, MemorySpace> out;
  out.alpha = alpha0;
  for (std::size_t b = 0; b <= max_backtracks; ++b) {
    auto x_new = fit_retract(space, options, at.frame, scaled(space, direction, sign * out.alpha));
    auto eval = evaluate_loss(space, problem, x_new, spare_residual);
    if (std::isfinite(eval.loss) && eval.loss <= at.eval.loss + c1 * out.alpha * slope) {
      out.point.x = x_new;
      out.point.eval = eval;
      out.accepted = true;
      return out;
    }
    out.alpha *= 0.5;
  }
  return out;
}

}  // namespace impl
}  // namespace t3k
