#pragma once
/// \file optimizer_common.hpp
/// What the four optimizers share: controls, the per-iteration record and callback, the result, and the fit state
/// (point, frame, loss, residual, gradient) with its evaluation (docs/math.md, the fitting problem).

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/retraction.hpp"
#include "t3k/algorithms/t3_linear_algebra.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/optimizers/fitting_problem.hpp"
#include "t3k/optimizers/optimizer_options.hpp"
#include "t3k/optimizers/shared_fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace t3k {

/// One line of the fit history (the callback receives it after every iteration, iteration 0 being x0).
struct IterationRecord {
  std::size_t iteration = 0;     ///< 0 is the starting point
  double loss = 0;               ///< full loss (minibatch optimizers: the last full evaluation)
  double relative_residual = 0;  ///< sqrt(loss / loss of X = 0)
  /// Corewise norm of the (minibatch) Riemannian gradient; NaN where it was not computed (iteration 0 of mc_sgd and
  /// adam, whose first gradient is that of the first minibatch).
  double gradient_norm = 0;
  double step = 0;             ///< corewise norm of the accepted step variation
  double elapsed_seconds = 0;  ///< wall time since the fit started (continued across a resume)
  std::size_t chunk_size = 0;  ///< probes per J^T pass actually used
  double minibatch_loss = std::numeric_limits<double>::quiet_NaN();  ///< minibatch optimizers only
  /// sqrt(loss on the validation set / its loss of X = 0), evaluated with the full loss; NaN without validation set
  double validation_relative_residual = std::numeric_limits<double>::quiet_NaN();
  std::size_t rank_stage = 0;  ///< rank continuation: the stage (0 for the start ranks); a new stage starts with
                               ///< a record of the grown point at the iteration the previous stage ended
};

/// Everything an optimizer needs to continue exactly where it stopped: resuming from a checkpoint reproduces the
/// iterates an uninterrupted run would have produced (same seed, backend and thread count). The driver stores it.
template <class Scalar, class MemorySpace>
struct OptimizerCheckpoint {
  std::string optimizer;                     ///< which optimizer wrote it (newton_cg, mc_sgd, adam, gradient_descent)
  std::size_t iteration = 0;                 ///< iterations completed
  TuckerTensorTrain<Scalar, MemorySpace> x;  ///< current point
  std::map<std::string, double> scalars;     ///< optimizer scalars (g0, lambda, alpha0, loss, ...)
  std::vector<std::uint64_t> sampler_state;  ///< minibatch sampler (permutation, position, generator)
  T3Variation<Scalar, MemorySpace> moment;   ///< adam's first moment at x's frame (empty otherwise)
  std::vector<double> second_moments;        ///< adam's per-core second moments
  std::vector<IterationRecord> history;      ///< history up to `iteration`
  TuckerTensorTrain<Scalar, MemorySpace> best_x;  ///< best point on validation so far (empty: none kept)
  /// Rank continuation: the best model of the finished stages (empty: none); the stage state is in `scalars`.
  TuckerTensorTrain<Scalar, MemorySpace> stage_best_x;
};

/// Checkpointing controls shared by every optimizer.
template <class Scalar, class MemorySpace>
struct CheckpointControl {
  std::size_t every = 0;  ///< call `write` after every this many iterations (0: never)
  /// Receives the checkpoints: after every `every`-th iteration and at the iteration where the run stops.
  std::function<void(OptimizerCheckpoint<Scalar, MemorySpace> const&)> write;
  OptimizerCheckpoint<Scalar, MemorySpace> const* resume_from = nullptr;  ///< continue this run instead of x0
};

/// FitResult::reason of a fit ended by OptimizerOptions::stop_when.
inline constexpr char stop_request_reason[] = "stopped on request";

/// The outcome of a fit.
template <class Scalar, class MemorySpace>
struct FitResult {
  TuckerTensorTrain<Scalar, MemorySpace> x;  ///< the last point
  std::vector<IterationRecord> history;      ///< one record per iteration, from 0
  bool converged = false;          ///< stopped by a tolerance or at rounding level (not by max_iterations or a failure)
  std::string reason;              ///< why it stopped
  std::size_t chunk_size = 0;      ///< probes per J^T pass used (rank continuation: of the last stage)
  std::vector<std::string> notes;  ///< e.g. rank clipping at x0, rank steps
  /// Validation relative residual of `x` (NaN without a validation set).
  double validation_relative_residual = std::numeric_limits<double>::quiet_NaN();
};

namespace impl {

/// A point of the fit with everything the optimizers need at it.
template <class Scalar, class MemorySpace>
struct FitPoint {
  TuckerTensorTrain<Scalar, MemorySpace> x;
  OrthogonalFrame<Scalar, MemorySpace> frame;
  LossEvaluation<Scalar, MemorySpace> eval;
};

template <class ExecutionSpace, class Scalar, class MemorySpace>
FitPoint<Scalar, MemorySpace> make_point(ExecutionSpace const& space,
                                         FittingProblem<Scalar, MemorySpace> const& problem,
                                         TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  FitPoint<Scalar, MemorySpace> p;
  p.x = x;
  p.frame = orthogonal_frame(space, x);
  p.eval = evaluate_loss(space, problem, x);
  return p;
}

/// Chunk size for the whole fit, as J^T runs it: auto is estimated once from x0's shapes and the batch size and reused
/// (the J^T automatic chunk of the memory space's default execution space); a count is rounded to whole reduction
/// blocks of that space (impl::rows_per_chunk). `batch` is
/// the probes of one J^T call over all ranks and `n_shards` the number of ranks (each holds about batch / n_shards
/// of them), so every rank gets the same chunk size.
template <class Scalar, class MemorySpace>
std::size_t fit_chunk_rows(ChunkSize requested, TuckerTensorTrain<Scalar, MemorySpace> const& x0, std::size_t order,
                           std::size_t batch, std::size_t n_shards = 1,
                           MeasurementKind kind = MeasurementKind::probes) {
  if (requested.kind() == ChunkSize::Kind::none) return batch;
  // A count is what J^T runs: rounded down to whole reduction blocks (at least one), all probes when it covers them.
  if (requested.kind() == ChunkSize::Kind::fixed) {
    return impl::rows_per_chunk(requested.rows(), batch,
                                reduction_block_size_for<typename MemorySpace::execution_space>());
  }
  auto const shapes = x0.mode_shapes();
  auto const frame_sh = frame_shapes_of_t3("t3k::fit", shapes, x0.tucker_ranks(), x0.tt_ranks());
  std::vector<std::size_t> tt(frame_sh.rl.size());
  for (std::size_t e = 0; e < tt.size(); ++e) tt[e] = min_of(frame_sh.rl[e], frame_sh.rr[e]);
  return automatic_chunk_size<typename MemorySpace::execution_space>(
      kind, shapes, frame_sh.nu, tt, order, batch, 1, n_shards,
      sizeof(Scalar) == 4 ? ScalarType::float32 : ScalarType::float64);
}

/// Clips ranks to what a T3 of mode shapes `big_n` can hold, to a fixed point: n_i <= min(N_i, r_i r_{i+1}),
/// r_e <= r_{e-1} n_{e-1} and r_e <= n_e r_{e+1} (the unshared bounds of t3k::feasible_ranks; boundary ranks as given).
inline void clip_to_feasible(std::vector<std::size_t> const& big_n, std::vector<std::size_t>& n,
                             std::vector<std::size_t>& r) {
  std::vector<std::vector<std::size_t>> singletons(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) singletons[i] = {i};
  lower_to_feasible(big_n, singletons, n, r);
}

/// The starting point of a fit at fixed ranks, with notes on the ranks it clipped.
template <class Scalar, class MemorySpace>
struct FeasibleStart {
  TuckerTensorTrain<Scalar, MemorySpace> x;  ///< x0 at feasible ranks
  std::vector<std::string> notes;            ///< one per clipped rank
};

/// x0 clipped once to the largest ranks a T3 of its mode shapes can hold (clip_to_feasible after squashing the
/// boundary bonds), so that the fit runs on one manifold and every report names the ranks it ran at (docs/math.md).
/// The clipping is a T3-SVD capped at those ranks: the tensor is unchanged (the dropped singular values are zero up
/// to rounding). x0 is returned as it is when nothing needs clipping, or when its tensor overflows (no SVD). A fit
/// that shares factors clips to the shared bounds (a group's rank within its ceiling) by the grouped T3-SVD, and
/// starts tied (tied_iterate).
template <class ExecutionSpace, class Scalar, class MemorySpace>
FeasibleStart<Scalar, MemorySpace> feasible_start(ExecutionSpace const& space,
                                                  TuckerTensorTrain<Scalar, MemorySpace> const& x0,
                                                  OptimizerOptions const& options) {
  bool const shared = ties_factors(options.sharing);
  if (shared) options.sharing.check_t3(x0, "the start of a shared fit");
  auto const n = x0.tucker_ranks();
  auto const r = x0.tt_ranks();
  auto feasible_n = n;
  auto feasible_r = r;
  feasible_r.front() = 1;
  feasible_r.back() = 1;
  if (shared) {
    lower_to_feasible(x0.mode_shapes(), options.sharing.groups(), feasible_n, feasible_r);
  } else {
    clip_to_feasible(x0.mode_shapes(), feasible_n, feasible_r);
  }
  FeasibleStart<Scalar, MemorySpace> out;
  // Boundary ranks other than 1 are squashed by every frame without loss: no clipping.
  bool const interior_kept = std::equal(r.begin() + 1, r.end() - 1, feasible_r.begin() + 1);
  if (feasible_n == n && interior_kept) {
    out.x = tied_iterate(space, options, x0, &out.notes);
    return out;
  }
  T3SvdOptions caps;
  caps.max_tucker_ranks.assign(feasible_n.begin(), feasible_n.end());
  caps.max_tt_ranks.assign(feasible_r.begin(), feasible_r.end());
  try {
    out.x = shared ? grouped_t3_svd(space, x0, options.sharing, caps).t3 : t3_svd(space, x0, caps).t3;
  } catch (InvalidArgument const&) {
    // Cores whose tensor overflows Scalar cannot be factored: such a start is kept (tied as it is), and the fit stops
    // at its non-finite loss as it does from any start that overflows.
    out.x = shared ? tie_tucker_factors(x0, options.sharing) : x0;
    return out;
  }
  auto const cn = out.x.tucker_ranks();
  auto const cr = out.x.tt_ranks();
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (cn[i] != n[i]) out.notes.push_back(concat("Tucker rank ", i, " clipped from ", n[i], " to ", cn[i]));
  }
  for (std::size_t e = 1; e + 1 < r.size(); ++e) {
    if (cr[e] != r[e]) out.notes.push_back(concat("TT rank ", e, " clipped from ", r[e], " to ", cr[e]));
  }
  return out;
}

/// The checks every optimizer makes first, naming `where`: the problem fits x0's mode shapes (check_problem) and
/// the options' sharing fits both (check_fit_sharing).
template <class Scalar, class MemorySpace>
void check_fit(std::string const& where, FittingProblem<Scalar, MemorySpace> const& problem,
               TuckerTensorTrain<Scalar, MemorySpace> const& x0, OptimizerOptions const& options) {
  check_problem(where, problem, x0.mode_shapes());
  check_fit_sharing(where, options, x0.mode_shapes());
}

/// Refuses a checkpoint that another optimizer wrote. **Throws:** InvalidArgument naming both.
template <class Scalar, class MemorySpace>
void check_checkpoint_owner(OptimizerCheckpoint<Scalar, MemorySpace> const& c, std::string const& optimizer) {
  if (c.optimizer != optimizer) {
    throw InvalidArgument("t3k::" + optimizer + ": cannot resume from a checkpoint written by " + c.optimizer);
  }
}

/// The named scalar of a checkpoint. **Throws:** InvalidArgument when the checkpoint lacks it.
template <class Scalar, class MemorySpace>
double checkpoint_scalar(OptimizerCheckpoint<Scalar, MemorySpace> const& c, std::string const& name) {
  auto it = c.scalars.find(name);
  if (it == c.scalars.end()) {
    throw InvalidArgument("t3k: checkpoint of " + c.optimizer + " lacks the value '" + name + "'");
  }
  return it->second;
}

/// Common stopping tests after an accepted iteration; sets `reason` and returns true to stop.
inline bool should_stop(OptimizerOptions const& o, IterationRecord const& rec, double g0, double previous_loss,
                        double x0_norm, std::string& reason) {
  if (!std::isfinite(rec.loss)) {
    reason = "non-finite loss";
    return true;
  }
  if (o.tol_relative_residual > 0 && rec.relative_residual <= o.tol_relative_residual) {
    reason = "relative residual below tolerance";
    return true;
  }
  if (o.tol_gradient > 0 && g0 > 0 && rec.gradient_norm <= o.tol_gradient * g0) {
    reason = "gradient norm below tolerance";
    return true;
  }
  if (o.tol_decrease > 0 && previous_loss > 0 && (previous_loss - rec.loss) / previous_loss < o.tol_decrease) {
    reason = "relative decrease below tolerance";
    return true;
  }
  if (o.tol_step > 0 && x0_norm > 0 && rec.step / x0_norm < o.tol_step) {
    reason = "step below tolerance";
    return true;
  }
  return false;
}

/// Records and reports one iteration; returns the record.
struct HistoryKeeper {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double zero_loss = 1;
  std::size_t chunk = 0;
  std::vector<IterationRecord>* history = nullptr;
  std::function<void(IterationRecord const&)> const* callback = nullptr;
  double next_validation = std::numeric_limits<double>::quiet_NaN();  ///< the validation residual to record

  IterationRecord const& record(std::size_t iteration, double loss, double gradient_norm, double step,
                                double minibatch_loss = std::numeric_limits<double>::quiet_NaN()) {
    IterationRecord rec;
    rec.iteration = iteration;
    rec.loss = loss;
    rec.relative_residual = zero_loss > 0 ? std::sqrt(std::max(loss, 0.0) / zero_loss) : std::sqrt(std::max(loss, 0.0));
    rec.gradient_norm = gradient_norm;
    rec.step = step;
    rec.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rec.chunk_size = chunk;
    rec.minibatch_loss = minibatch_loss;
    rec.validation_relative_residual = next_validation;
    history->push_back(rec);
    if (callback && *callback) (*callback)(rec);
    return history->back();
  }
};

/// What every optimizer sets up first: the chunk size for the whole fit (auto: estimated once from x0's shapes and
/// `batch` probes per J^T call), the result, and the history keeper that fills it. Built in place and never moved
/// (the keeper points into the result).
template <class Scalar, class MemorySpace>
struct FitSession {
  FitResult<Scalar, MemorySpace> result;
  ChunkSize chunk;
  HistoryKeeper keeper;
  /// Output arrays carried between iterations (perf/README.md): the Gauss-Newton products' J v,
  /// and the residual of the last point left behind, which the next line search overwrites.
  TangentProbeJets<Scalar, MemorySpace> jv_buffer;
  ProbeJets<Scalar, MemorySpace> spare_residual;
  /// Validation: its loss of X = 0, the last value, and the best point on it with the evaluations since.
  double validation_zero_loss = 0;
  double last_validation = std::numeric_limits<double>::quiet_NaN();
  double best_validation = std::numeric_limits<double>::infinity();
  std::size_t evaluations_without_best = 0;
  TuckerTensorTrain<Scalar, MemorySpace> best_x;
  FittingProblem<Scalar, MemorySpace> const* problem_ = nullptr;
  OptimizerOptions const* options_ = nullptr;
  std::size_t patience = 0;
  bool stop_requested_ = false;  ///< stop_when's answer for the last record

  template <class ExecutionSpace>
  FitSession(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem,
             TuckerTensorTrain<Scalar, MemorySpace> const& x0, OptimizerOptions const& o, std::size_t batch) {
    std::size_t const rows =
        fit_chunk_rows(o.chunk_size, x0, problem.order, batch, std::size_t(problem.comm.size()), problem.kind);
    chunk = ChunkSize::of(rows);
    result.chunk_size = rows;
    keeper.zero_loss = zero_model_loss(space, problem);
    keeper.chunk = rows;
    keeper.history = &result.history;
    keeper.callback = &o.callback;
    problem_ = &problem;
    options_ = &o;
    patience = o.validation_patience;
    if (problem.validation) validation_zero_loss = zero_model_loss(space, *problem.validation);
  }

  /// The first iterate: resuming, the checkpoint's x (after checking that `optimizer` wrote the checkpoint), tied
  /// again to the sharing; otherwise x0 at feasible ranks and tied (feasible_start). The start's notes go to the
  /// result either way, so that a resumed fit reports what its first run reported.
  template <class ExecutionSpace>
  TuckerTensorTrain<Scalar, MemorySpace> first_iterate(ExecutionSpace const& space,
                                                       TuckerTensorTrain<Scalar, MemorySpace> const& x0,
                                                       OptimizerCheckpoint<Scalar, MemorySpace> const* resume,
                                                       std::string const& optimizer) {
    if (resume) check_checkpoint_owner(*resume, optimizer);
    auto start = feasible_start(space, x0, *options_);
    result.notes = std::move(start.notes);
    return resume ? tied_iterate(space, *options_, resume->x) : start.x;
  }

  /// Records iteration `iteration` at x. `evaluated`: the loss was evaluated at x now, so the validation residual
  /// is too (otherwise the last one is repeated, as the loss is).
  template <class ExecutionSpace>
  IterationRecord const& record(ExecutionSpace const& space, std::size_t iteration,
                                TuckerTensorTrain<Scalar, MemorySpace> const& x, bool evaluated, double loss,
                                double gradient_norm, double step,
                                double minibatch_loss = std::numeric_limits<double>::quiet_NaN()) {
    if (problem_->validation && evaluated) {
      double const v = evaluate_loss(space, *problem_->validation, x).loss;
      last_validation =
          validation_zero_loss > 0 ? std::sqrt(std::max(v, 0.0) / validation_zero_loss) : std::sqrt(std::max(v, 0.0));
      if (last_validation < best_validation) {
        best_validation = last_validation;
        best_x = x;  // iterates are new T3s, never written in place
        evaluations_without_best = 0;
      } else {
        ++evaluations_without_best;
      }
    }
    keeper.next_validation = last_validation;
    IterationRecord const& rec = keeper.record(iteration, loss, gradient_norm, step, minibatch_loss);
    stop_requested_ = options_->stop_when && options_->stop_when(rec);
    return rec;
  }

  /// Whether stop_when asked to stop after the last record (checked at the top of each iteration, so that it
  /// serves iteration 0 too); sets the result's reason.
  bool stop_requested() {
    if (!stop_requested_) return false;
    result.reason = stop_request_reason;
    result.converged = false;
    return true;
  }

  /// The stopping tests after an accepted iteration: early stopping on validation, then the tolerances
  /// (should_stop). `previous_loss` 0 switches tol_decrease off, `x0_norm` 0 tol_step (the minibatch optimizers
  /// evaluate the full loss only every eval_every steps). Sets the result's reason; returns true to stop.
  bool stop_after(IterationRecord const& rec, double g0, double previous_loss, double x0_norm) {
    if (patience > 0 && evaluations_without_best >= patience) {
      result.reason = "validation stopped improving";
      result.converged = true;
      return true;
    }
    if (should_stop(*options_, rec, g0, previous_loss, x0_norm, result.reason)) {
      result.converged = std::isfinite(rec.loss);
      return true;
    }
    return false;
  }

  /// What a checkpoint needs to resume the validation state.
  void save(OptimizerCheckpoint<Scalar, MemorySpace>& c) const {
    if (!problem_->validation) return;
    c.scalars["validation_last"] = last_validation;
    c.scalars["validation_best"] = best_validation;
    c.scalars["validation_without_best"] = double(evaluations_without_best);
    c.best_x = best_x;
  }
  void restore(OptimizerCheckpoint<Scalar, MemorySpace> const& c) {
    if (!problem_->validation) return;
    last_validation = checkpoint_scalar(c, "validation_last");
    best_validation = checkpoint_scalar(c, "validation_best");
    evaluations_without_best = std::size_t(checkpoint_scalar(c, "validation_without_best"));
    // A checkpoint's factors are copies: tie them again (they were written from tied iterates).
    best_x = ties_factors(options_->sharing) && c.best_x.n_modes() > 0 ? tie_tucker_factors(c.best_x, options_->sharing)
                                                                       : c.best_x;
  }

  /// Stores the fit's point: the best on validation when early stopping is on, else `x`.
  void finish(TuckerTensorTrain<Scalar, MemorySpace> const& x) {
    bool const best = patience > 0 && best_x.n_modes() > 0;
    result.x = best ? best_x : x;
    result.validation_relative_residual = best ? best_validation : last_validation;
  }
  FitSession(FitSession const&) = delete;
  FitSession& operator=(FitSession const&) = delete;

  /// Continues a checkpoint's history: new records follow it, their elapsed time counted on from its last one.
  void resume_history(std::vector<IterationRecord> const& history) {
    result.history = history;
    if (!history.empty()) {
      keeper.start -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(history.back().elapsed_seconds));
    }
  }
};

/// alpha * v as a new variation.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> scaled(ExecutionSpace const& space, T3Variation<Scalar, MemorySpace> const& v,
                                        double alpha) {
  auto out = copy_variation(space, v);
  scale_variation(space, Scalar(alpha), out);
  return out;
}

/// Starts a checkpoint with what every optimizer stores.
template <class Scalar, class MemorySpace>
OptimizerCheckpoint<Scalar, MemorySpace> begin_checkpoint(char const* optimizer, std::size_t iteration,
                                                          TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                          std::vector<IterationRecord> const& history) {
  OptimizerCheckpoint<Scalar, MemorySpace> c;
  c.optimizer = optimizer;
  c.iteration = iteration;
  c.x = x;
  c.history = history;
  return c;
}

template <class Scalar, class MemorySpace>
bool checkpoint_due(CheckpointControl<Scalar, MemorySpace> const& c, std::size_t iteration) {
  return c.every > 0 && c.write && iteration % c.every == 0;
}

/// Writes an optimizer's checkpoints through a CheckpointControl: every `every` iterations, and once more where the
/// run stops (maximum iterations, convergence, a failed line search) unless that iteration was just written or is
/// not finite. Resuming with a larger max_iterations then continues after the last iteration instead of repeating
/// those after the last periodic checkpoint. `make(iteration)` builds the checkpoint of the current state.
template <class Scalar, class MemorySpace>
class CheckpointWriter {
 public:
  explicit CheckpointWriter(CheckpointControl<Scalar, MemorySpace> const& control)
      : control_(control), written_(control.resume_from ? control.resume_from->iteration : 0) {}

  template <class Make>
  void periodic(std::size_t iteration, Make&& make) {
    if (checkpoint_due(control_, iteration)) write(make(iteration));
  }

  template <class Make>
  void at_stop(std::vector<IterationRecord> const& history, Make&& make) {
    if (control_.every == 0 || !control_.write || history.empty()) return;
    IterationRecord const& last = history.back();
    if (last.iteration <= written_ || !std::isfinite(last.loss) || !std::isfinite(last.gradient_norm)) return;
    write(make(last.iteration));
  }

 private:
  void write(OptimizerCheckpoint<Scalar, MemorySpace> const& c) {
    control_.write(c);
    written_ = c.iteration;
  }
  CheckpointControl<Scalar, MemorySpace> const& control_;
  std::size_t written_;
};

}  // namespace impl
}  // namespace t3k
