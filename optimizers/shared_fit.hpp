#pragma once
/// \file shared_fit.hpp
/// The steps of a fit of a shared model (OptimizerOptions::sharing; docs/math.md, "Shared Tucker factors"): each
/// optimizer calls these where it would call the untied operation, and a fit without a sharing runs the untied one.

#include "t3k/algorithms/grouped_t3_svd.hpp"
#include "t3k/algorithms/retraction.hpp"
#include "t3k/algorithms/tie_variation.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/optimizers/fitting_problem.hpp"
#include "t3k/optimizers/optimizer_options.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {
namespace impl {

/// Whether a fit with this sharing ties factors (an empty or trivial sharing does not).
inline bool ties_factors(ModeSharing const& sharing) { return sharing.n_modes() > 0 && !sharing.is_trivial(); }

/// Checks the sharing of `options` against the problem's mode shapes: one label per mode and equal sizes within a
/// group (the ModeSharing constructor checked those), and the problem's shapes. A rank continuation checks its
/// maximum ranks against the groups itself.
/// **Throws:** DimensionMismatch naming `where`.
inline void check_fit_sharing(std::string const& where, OptimizerOptions const& options,
                              std::vector<std::size_t> const& mode_shapes) {
  auto const& sharing = options.sharing;
  if (sharing.n_modes() == 0) return;
  if (sharing.mode_shapes() != mode_shapes) {
    throw DimensionMismatch(concat(where, ": the sharing is for mode shapes ", shape_string(sharing.mode_shapes()),
                                   ", the problem has ", shape_string(mode_shapes)));
  }
}

/// The Riemannian gradient of the fit: tied when the fit shares factors (riemannian_gradient).
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> fit_gradient(ExecutionSpace const& space, OptimizerOptions const& options,
                                              FittingProblem<Scalar, MemorySpace> const& problem,
                                              OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                              LossEvaluation<Scalar, MemorySpace> const& at, ChunkSize chunk) {
  if (!ties_factors(options.sharing)) return riemannian_gradient(space, problem, frame, at, chunk);
  return riemannian_gradient(space, problem, frame, options.sharing, at, chunk);
}

/// Projects a direction onto the fit's tangent space in place: the tied tangent space when the fit shares factors
/// (tie_variation_in_place), nothing otherwise.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void tie_direction(ExecutionSpace const& space, OptimizerOptions const& options,
                   OrthogonalFrame<Scalar, MemorySpace> const& frame, T3Variation<Scalar, MemorySpace> const& v) {
  if (ties_factors(options.sharing)) tie_variation_in_place(space, frame, options.sharing, v);
}

/// The Gauss-Newton product of the fit: on tied directions, its projection onto the tied tangent space (the
/// Gauss-Newton operator of the shared model).
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> fit_gauss_newton_product(ExecutionSpace const& space, OptimizerOptions const& options,
                                                          FittingProblem<Scalar, MemorySpace> const& problem,
                                                          OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                          T3Variation<Scalar, MemorySpace> const& v, ChunkSize chunk,
                                                          TangentProbeJets<Scalar, MemorySpace>* jv_buffer = nullptr) {
  auto out = gauss_newton_product(space, problem, frame, v, chunk, jv_buffer);
  tie_direction(space, options, frame, out);
  return out;
}

/// The retraction of the fit: tied by the grouped T3-SVD when the fit shares factors.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> fit_retract(ExecutionSpace const& space, OptimizerOptions const& options,
                                                   OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                   T3Variation<Scalar, MemorySpace> const& v) {
  if (!ties_factors(options.sharing)) return retract(space, frame, v);
  return retract(space, frame, options.sharing, v);
}

/// `x` with its factors tied as the fit's sharing asks: as it is when tied already, tied without arithmetic when its
/// group factors are equal (a copy, a file), else its best shared model at its ranks (grouped_t3_svd), with a note.
/// **Throws:** DimensionMismatch when its Tucker ranks differ within a group.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> tied_iterate(ExecutionSpace const& space, OptimizerOptions const& options,
                                                    TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                    std::vector<std::string>* notes = nullptr) {
  auto const& sharing = options.sharing;
  if (!ties_factors(sharing) || has_tied_tucker_factors(x, sharing)) return x;
  sharing.check_t3(x, "the start of a shared fit");
  if (has_equal_tucker_factors(space, x, sharing)) return tie_tucker_factors(x, sharing);
  T3SvdOptions caps;
  for (auto n : x.tucker_ranks()) caps.max_tucker_ranks.push_back(static_cast<long long>(n));
  for (auto r : x.tt_ranks()) caps.max_tt_ranks.push_back(static_cast<long long>(r));
  caps.max_tt_ranks.front() = caps.max_tt_ranks.back() = 1;
  auto out = grouped_t3_svd(space, x, sharing, caps).t3;
  if (notes) {
    notes->push_back(
        "the Tucker factors of x0 were not shared: the fit starts from its best shared model "
        "(grouped T3-SVD at its ranks)");
  }
  return out;
}

}  // namespace impl
}  // namespace t3k
