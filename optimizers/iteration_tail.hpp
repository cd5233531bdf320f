#pragma once
/// \file iteration_tail.hpp
/// What ends every iteration of the four optimizers (record, periodic checkpoint, stopping tests) and every fit
/// (the checkpoint where the run stops, the returned point), in one place so that they stop and checkpoint alike.

#include "t3k/optimizers/optimizer_common.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

namespace t3k {
namespace impl {

/// What an optimizer reports of one finished iteration.
struct IterationValues {
  bool evaluated = true;  ///< the full loss was evaluated at the new point (the validation residual is too)
  double loss = 0;        ///< full loss (minibatch optimizers: the last full evaluation)
  double gradient_norm = 0;
  double step = 0;
  double previous_loss = 0;  ///< the loss before the step; 0 switches tol_decrease off
  double minibatch_loss = std::numeric_limits<double>::quiet_NaN();  ///< minibatch optimizers only
};

/// The shared end of an iteration and of a fit, around a FitSession. `make_checkpoint(iteration)` builds the
/// optimizer's checkpoint of its current state.
template <class Scalar, class MemorySpace, class MakeCheckpoint>
class IterationTail {
 public:
  IterationTail(FitSession<Scalar, MemorySpace>& session, CheckpointControl<Scalar, MemorySpace> const& control,
                MakeCheckpoint make_checkpoint)
      : session_(session), checkpoints_(control), make_(std::move(make_checkpoint)) {}

  /// Records iteration `iteration` at x, writes a periodic checkpoint when due, and applies the stopping tests (a
  /// non-finite loss or gradient first). `g0` 0 switches tol_gradient off, `x0_norm` 0 tol_step. Returns true to
  /// stop, with the result's reason and converged flag set.
  template <class ExecutionSpace>
  bool end_iteration(ExecutionSpace const& space, std::size_t iteration,
                     TuckerTensorTrain<Scalar, MemorySpace> const& x, IterationValues const& v, double g0,
                     double x0_norm) {
    auto const& rec =
        session_.record(space, iteration, x, v.evaluated, v.loss, v.gradient_norm, v.step, v.minibatch_loss);
    checkpoints_.periodic(iteration, make_);
    if (!std::isfinite(rec.loss) || !std::isfinite(v.gradient_norm)) {
      session_.result.reason = "non-finite loss";
      session_.result.converged = false;
      return true;
    }
    return session_.stop_after(rec, g0, v.previous_loss, x0_norm);
  }

  /// Writes the checkpoint of the iteration where the run stopped (CheckpointWriter::at_stop) and returns the
  /// result with the fit's point (FitSession::finish).
  FitResult<Scalar, MemorySpace> finish(TuckerTensorTrain<Scalar, MemorySpace> const& x) {
    checkpoints_.at_stop(session_.result.history, make_);
    session_.finish(x);
    return std::move(session_.result);
  }

 private:
  FitSession<Scalar, MemorySpace>& session_;
  CheckpointWriter<Scalar, MemorySpace> checkpoints_;
  MakeCheckpoint make_;
};

/// An IterationTail with its checkpoint maker's type deduced.
template <class Scalar, class MemorySpace, class MakeCheckpoint>
IterationTail<Scalar, MemorySpace, MakeCheckpoint> iteration_tail(FitSession<Scalar, MemorySpace>& session,
                                                                  CheckpointControl<Scalar, MemorySpace> const& control,
                                                                  MakeCheckpoint make_checkpoint) {
  return IterationTail<Scalar, MemorySpace, MakeCheckpoint>(session, control, std::move(make_checkpoint));
}

}  // namespace impl
}  // namespace t3k
