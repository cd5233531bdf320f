#pragma once
/// \file optimizer_options.hpp
/// The options of the four optimizers, apart from their algorithms, so that a configuration layer (the `t3k fit`
/// driver) can hold and validate them without compiling the optimizers. docs/config.md lists every option with
/// its default and range as the configuration file spells it.

#include "t3k/core/chunk_size.hpp"
#include "t3k/core/mode_sharing.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace t3k {

struct IterationRecord;  // optimizer_common.hpp

/// RankContinuation::rank_rtol where it is left automatic: a singular value below a millionth of the largest counts
/// as unused.
inline constexpr double default_rank_rtol = 1e-6;

/// Which edges (Tucker factors and TT bonds) a rank continuation grows after a stage (docs/math.md, rank
/// continuation).
enum class GrowthRule {
  saturation,         ///< every edge all of whose singular values are in use
  edge_conditioning,  ///< the edges conditioned at least condition_ratio times better than the worst one
};

/// Rank continuation (docs/math.md, rank continuation): the fit starts at x0's ranks and grows them stage by stage up
/// to the maximum ranks. Off while max_tucker_ranks is empty (the fit keeps x0's ranks).
struct RankContinuation {
  std::vector<std::size_t> max_tucker_ranks;  ///< d entries (empty: continuation off)
  std::vector<std::size_t> max_tt_ranks;      ///< d + 1 entries, boundary entries equal to x0's
  std::size_t stage_iterations = 50;          ///< iteration cap of one stage
  /// A stage has stalled when one iteration lowers the loss by less than this fraction (newton_cg and
  /// gradient_descent; mc_sgd and adam run each stage to stage_iterations).
  double stage_tol_decrease = 1e-2;
  /// A rank is in use when its singular value exceeds rank_rtol times the largest one of its unfolding; only ranks
  /// all of whose values are in use grow, and unused ones are dropped when the continuation ends. 0 (default):
  /// automatic, default_rank_rtol, except for a drop that would cost a tolerance the fit met: that one keeps every
  /// value above min(default_rank_rtol, tol_relative_residual / 10) (docs/math.md, rank continuation).
  double rank_rtol = 0;
  std::size_t rank_step = 1;                 ///< ranks added to a growing mode or bond per step
  GrowthRule rule = GrowthRule::saturation;  ///< which edges grow after a stage
  /// edge_conditioning: an edge grows when its condition number sigma_1 / sigma_last is at most the worst edge's
  /// divided by this (tau); when no edge is that much better, every edge that may grow does.
  double condition_ratio = 10;
  std::size_t max_edges_per_stage = 0;  ///< edge_conditioning: edges grown per stage at most, best first (0: all)
  /// edge_conditioning: an edge whose condition number exceeds this never grows (its last value is not in use).
  /// 0 (default): automatic, the smaller of 1 / rank_rtol (1 / default_rank_rtol where that is automatic) and
  /// 1 / sqrt(epsilon) of the scalar type.
  double condition_guard = 0;
  /// edge_conditioning: the continuation stops before ranks at which the training measurements (scalars, see
  /// docs/math.md) per manifold dimension would fall below this.
  double min_samples_per_dimension = 2;
  /// \return whether the continuation is on (max_tucker_ranks given)
  bool enabled() const { return !max_tucker_ranks.empty(); }
};

/// Controls common to every optimizer. Tolerances of 0 are off.
struct OptimizerOptions {
  std::size_t max_iterations = 100;                      ///< iterations (steps) at most
  double tol_relative_residual = 0;                      ///< stop when the relative residual falls below
  double tol_gradient = 1e-12;                           ///< stop when ||g|| / ||g_0|| falls below
  double tol_decrease = 0;                               ///< stop when (f_old - f_new) / f_old falls below
  double tol_step = 0;                                   ///< stop when the step norm / ||X0|| falls below
  std::uint64_t seed = 0;                                ///< minibatches and any other randomness
  ChunkSize chunk_size = ChunkSize::automatic();         ///< probes per J^T pass, fixed for the whole fit
  std::function<void(IterationRecord const&)> callback;  ///< called after every iteration
  /// Asked after every iteration's record (and callback), iteration 0 included: returning true ends the fit there,
  /// with reason "stopped on request" and not converged; the result and the stop checkpoint are those of any other
  /// stop. With a rank continuation it receives the continuation's record and ends the whole continuation.
  std::function<bool(IterationRecord const&)> stop_when;
  /// Early stopping on the problem's validation set (FittingProblem::validation): stop after this many evaluations
  /// of the validation residual without a new best, and return the best model on it. 0: off (the validation
  /// residual is still recorded, and the last iterate returned).
  std::size_t validation_patience = 0;
  RankContinuation continuation;  ///< grow the ranks from x0's (off by default)
  /// Shared Tucker factors (docs/math.md, "Shared Tucker factors"): modes with equal labels use one factor. Every
  /// iterate is tied (has_tied_tucker_factors) and every step moves in the tied tangent space: the gradient and the
  /// Gauss-Newton products are projected by tie_variation, the retraction truncates by grouped_t3_svd. An x0 whose
  /// group factors are not tied starts from its best shared model (grouped_t3_svd at its ranks, noted in
  /// FitResult::notes). Empty (default) or trivial: the fit of an ordinary T3, bit for bit. Not with a rank
  /// continuation.
  ModeSharing sharing;
};

/// Options of newton_cg (docs/math.md).
struct NewtonCgOptions {
  OptimizerOptions common;             ///< the controls every optimizer shares
  double cg_rtol = 0.1;                ///< forcing term: CG stops at min(cg_rtol, sqrt(||g|| / ||g_0||)) * ||g||
  std::size_t cg_max_iterations = 50;  ///< CG iteration cap per outer iteration
  bool levenberg_marquardt = false;    ///< damping lambda = lambda_rel <g, GN g> / ||g||^2, adapted by gain ratio
  double lambda_rel = 1e-3;            ///< initial Levenberg-Marquardt damping, relative
  double armijo_c1 = 1e-4;             ///< sufficient-decrease constant of the Armijo line search
  std::size_t max_backtracks = 30;     ///< step halvings per line search at most
};

/// Options of gradient_descent (docs/math.md).
struct GradientDescentOptions {
  OptimizerOptions common;          ///< the controls every optimizer shares
  double armijo_c1 = 1e-4;          ///< sufficient-decrease constant of the Armijo line search
  std::size_t max_backtracks = 30;  ///< step halvings per line search at most
  /// Initial step of each line search: the exact minimizer of the Gauss-Newton model along -g,
  /// ||g||^2 / <g, GN g> (one extra GN product per iteration; adapts to the curvature like Barzilai-Borwein
  /// without needing a vector transport). A positive value here fixes the initial step instead.
  double initial_step = 0;
};

/// The step size schedule of mc_sgd.
enum class StepSchedule { constant, inverse_time, cosine };

/// Options of mc_sgd (docs/math.md).
struct McSgdOptions {
  OptimizerOptions common;      ///< the controls every optimizer shares
  std::size_t batch_size = 64;  ///< probes per minibatch
  /// Base step alpha_0; 0 (default) chooses it automatically as step_safety / lambda_max, lambda_max the largest
  /// eigenvalue of the scaled minibatch Gauss-Newton operator at x0 over a few minibatches (power iterations).
  double step = 0;
  double step_safety = 0.5;                        ///< automatic step: alpha_0 = step_safety / lambda_max
  std::size_t power_iterations = 8;                ///< power iterations per lambda_max estimate
  std::size_t curvature_batches = 4;               ///< minibatches the lambda_max estimate takes the largest of
  StepSchedule schedule = StepSchedule::constant;  ///< how alpha_t decays
  double decay = 100;                              ///< inverse_time: alpha_t = alpha_0 / (1 + t / decay)
  std::size_t eval_every = 10;                     ///< full loss every this many iterations (and at the end)
  /// Keep the full loss's probe-jet stack (W x (K+1) x sum N_i) allocated between its evaluations: each evaluation
  /// then skips allocating and first-touching it (BM_Optimizer_McSgdKeptLossStack), while the minibatch steps in
  /// between run with it allocated (higher peak memory). The iterates are the same either way.
  bool keep_loss_stack = false;
};

/// Options of adam (docs/math.md).
struct AdamOptions {
  OptimizerOptions common;     ///< the controls every optimizer shares
  std::size_t batch_size = 0;  ///< 0: full batch
  double alpha_rel = 1e-2;     ///< alpha = alpha_rel * ||X0||_F / sqrt(number of variation entries)
  double beta1 = 0.9;          ///< first-moment decay
  double beta2 = 0.999;        ///< second-moment decay
  double epsilon = 1e-8;       ///< added to the root of the second moment
  std::size_t eval_every = 1;  ///< full loss every this many steps (minibatches)
  /// Minibatches: keep the full loss's probe-jet stack allocated between its evaluations (as McSgdOptions'). The full
  /// batch always evaluates into the step's residual, which the next step takes.
  bool keep_loss_stack = false;
};

}  // namespace t3k
